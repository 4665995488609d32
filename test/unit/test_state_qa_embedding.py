"""The shared embedding of state QA: cache, and background indexing that lets questions go first
(no model: a fake stands in for it, so the order of the model calls is what is checked)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from raider_ros.state_qa import embedding
from raider_ros.state_qa.rules import RulesAnswerer
from raider_ros.state_qa.summary import StateSummary


class FakeModel:
    """Records each batch it encodes; the first background batch blocks until released."""

    def __init__(self):
        self.calls: list[list[str]] = []
        self.started = threading.Event()
        self.release = threading.Event()

    def encode(self, texts, **_kw):
        self.calls.append(list(texts))
        if texts[0].startswith("fact") and not self.started.is_set():
            self.started.set()
            self.release.wait(10.0)
        return np.ones((len(texts), 384), dtype=np.float32) / np.sqrt(384)


@pytest.fixture
def fake(monkeypatch):
    m = FakeModel()
    monkeypatch.setattr(embedding, "_load", lambda: m)
    monkeypatch.setattr(embedding, "_encode_batch", lambda model, texts: model.encode(texts))
    monkeypatch.setattr(embedding, "_cache", type(embedding._cache)())
    return m


def test_a_question_goes_before_the_rest_of_a_background_batch(fake):
    facts = [f"fact {i}" for i in range(5 * embedding.BACKGROUND_CHUNK)]
    bg = threading.Thread(target=embedding.encode, args=(facts,), kwargs={"background": True})
    bg.start()
    assert fake.started.wait(10.0)            # the first chunk is being encoded
    q = threading.Thread(target=embedding.encode, args=(["where is the cup?"],))
    q.start()
    while embedding._urgent == 0 and q.is_alive():   # the question is waiting for the model
        pass
    fake.release.set()
    q.join(10.0)
    bg.join(10.0)
    assert not q.is_alive() and not bg.is_alive()
    sizes = [len(c) for c in fake.calls]
    assert all(s <= embedding.BACKGROUND_CHUNK for s in sizes)
    # the question is the second call: right after the chunk that was running when it came
    assert fake.calls[1] == ["where is the cup?"]
    assert sorted(t for c in fake.calls for t in c if t.startswith("fact")) == sorted(facts)


def test_cached_texts_are_not_encoded_again(fake):
    fake.started.set()                          # no blocking
    a = embedding.encode(["one", "two"])
    b = embedding.encode(["two", "three", "one"])
    assert [t for c in fake.calls for t in c] == ["one", "two", "three"]
    assert a.shape == (2, 384) and b.shape == (3, 384)


def test_index_skips_summaries_already_indexed():
    seen: list[str] = []

    def enc(texts):
        seen.extend(texts)
        return np.ones((len(texts), 384), dtype=np.float32)

    r = RulesAnswerer(encoder=enc)
    s1 = StateSummary("robot", 1.0, "I hold nothing.", (("holding", "nothing"), ("pose", "x 1.00, y 2.00")))
    s2 = StateSummary("world_model", 1.0, "I see a cup.", (("visible_objects", "1 object(s): Cup_1 (cup)"),))
    assert r.index([s1, s2]) == 6
    assert r.index([s1.with_stamp(5.0), s2]) == 0        # same facts, newer stamp: nothing to embed
    s3 = StateSummary("robot", 6.0, "I hold the cup.", (("holding", "Cup_1"), ("pose", "x 1.00, y 2.00")))
    assert r.index([s3, s2]) == 1                           # only the new sentence "holding Cup_1"
    assert len(seen) == 7 and "Cup_1" in seen[-1]
