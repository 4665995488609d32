"""Embedding the summary history once: StateQA.index embeds the facts of every summary that
enters the history (the earlier ones a question about the past reads, too), and answering then
embeds only the question - never a fact, however many questions are asked. No ROS; a
deterministic bag-of-words encoder that records what it is asked to embed."""
from __future__ import annotations

import hashlib

import numpy as np

from raider_ros.state_qa.answer import StateQA
from raider_ros.state_qa.rules import RulesAnswerer
from raider_ros.state_qa.summary import SummaryHistory
from support.state_qa_fakes import FixedSelector, S

T0 = 1000.0


class RecordingEncoder:
    """Hashed bag of words, unit length; ``calls`` holds each batch of texts it embedded."""

    def __init__(self):
        self.calls: list[list[str]] = []

    def __call__(self, texts):
        self.calls.append(list(texts))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 384] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    def embedded(self) -> list[str]:
        return [t for batch in self.calls for t in batch]


def _history() -> SummaryHistory:
    h = SummaryHistory()
    h.add(S("issue_detector", T0 + 1, "Check of approach(Counter_1): blocked by Chair_1.",
            last_query="approach(Counter_1)", verdict="unfeasibility (cannot be done as asked)",
            explanation="The path to Counter_1 is blocked by Chair_1."))
    h.add(S("issue_detector", T0 + 15, "Check of handover: no issue.", last_query="handover(medicine, adriana)",
            verdict="no issue (feasible)", explanation="No issue: the robot can hand over Medicine_1 to Person_1."))
    h.add(S("robot", T0 + 5, "Holding Medicine_1.", holding="Medicine_1", last_skill="pick(Medicine_1)"))
    h.add(S("robot", T0 + 18, "Gripper empty.", holding="nothing", last_skill="handover(Medicine_1, Person_1)"))
    return h


def _qa(enc: RecordingEncoder) -> StateQA:
    return StateQA(selector=FixedSelector("issue_detector"), rules=RulesAnswerer(encoder=enc))


def test_index_embeds_the_earlier_summaries_not_only_the_latest():
    enc = RecordingEncoder()
    qa = _qa(enc)
    n = qa.index(_history())
    texts = enc.embedded()
    assert n == len(texts) > 0
    assert any("blocked by Chair_1" in t for t in texts), texts      # an earlier check's explanation
    assert any("pick(Medicine_1)" in t for t in texts), texts         # an earlier skill


def test_after_indexing_questions_embed_only_themselves():
    enc = RecordingEncoder()
    qa = _qa(enc)
    h = _history()
    qa.index(h)
    enc.calls.clear()
    questions = ["Why did you stop before the counter?", "What did you check first?",
                 "What happened before the handover?"]
    for q in questions:
        ans = qa.ask(q, h, now=T0 + 25)
        assert ans.status == "ok", ans
    assert set(enc.embedded()) <= set(questions), enc.calls
    # and the past question still gets the earlier check's explanation (from the stored embeddings)
    ans = qa.ask("Why did you stop before the counter?", h, now=T0 + 25)
    assert "Chair_1" in ans.answer, ans.answer


def test_each_summary_is_embedded_once_and_a_new_one_only_for_its_new_facts():
    enc = RecordingEncoder()
    qa = _qa(enc)
    h = _history()
    qa.index(h)
    enc.calls.clear()
    assert qa.index(h) == 0 and enc.calls == []                       # nothing new
    h.add(S("robot", T0 + 30, "Holding the cup.", holding="Cup_1", last_skill="handover(Medicine_1, Person_1)"))
    n = qa.index(h)
    texts = enc.embedded()
    assert n == len(texts) and any("Cup_1" in t for t in texts), texts
    assert not any("handover(Medicine_1, Person_1)" in t for t in texts), texts   # embedded before


def test_without_indexing_a_fact_is_embedded_at_most_once_over_many_questions():
    enc = RecordingEncoder()
    qa = _qa(enc)
    h = _history()
    for q in ("Why did you stop before the counter?", "What did you check before the handover?",
              "Why did you stop before the counter?"):
        qa.ask(q, h, now=T0 + 25)
    texts = [t for t in enc.embedded() if not t.endswith("?")]
    assert texts and len(texts) == len(set(texts)), texts


def test_known_things_is_cached_per_set_of_summaries_never_stale():
    from raider_ros.state_qa.rules import known_things
    a = [S("robot", T0, "Holding Cup_1.", holding="Cup_1")]
    b = [S("robot", T0 + 1, "Holding Bowl_2.", holding="Bowl_2")]
    assert known_things(a) is known_things(list(a))                 # read once per question, not thrice
    assert "cup_1" in known_things(a).ids and "cup_1" not in known_things(b).ids
    assert "bowl_2" in known_things(b).ids and "bowl_2" not in known_things(a).ids
