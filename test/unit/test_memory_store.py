"""The episodic memory's store: durable episodes, stored embeddings, the paper's similarity,
listing and forgetting, and clear errors for corrupt, locked and foreign files.

Most tests use :class:`WordEncoder`, a deterministic bag-of-words encoder (other test modules
import it from here), so they need no model; retrieval is checked against a brute-force
computation of S(H, H_t)."""
from __future__ import annotations

import hashlib
import re
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from raider_ros.memory.episode import Episode, EpisodeError
from raider_ros.memory.seeds import SeedError, load_seeds
from raider_ros.memory.store import (
    SCHEMA_VERSION, EpisodicMemory, EpisodicMemoryError, UnknownEpisode, decayed_request,
)


class WordEncoder:
    """Each word hashed to one of 64 dimensions; texts sharing words are similar."""

    def __init__(self, name: str = "test-words", dim: int = 64):
        self.name, self.dim, self.calls, self.texts = name, dim, 0, 0

    def encode(self, texts):
        self.calls += 1
        self.texts += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z]+", t.lower()):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % self.dim] += 1.0
        n = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(n > 0, n, 1)


def lesson(*instructions: str, plan: str = "move_to(Glass_1)\npick(Glass_1)", task: str = "deliver", **kw) -> Episode:
    return Episode(scope="task", kind="lesson", task=task, instructions=instructions, plan=plan, **kw)


def recovery_lesson(*instructions: str, category="IU1", action="pick") -> Episode:
    return Episode(scope="recovery", kind="lesson", category=category, action=action, instructions=instructions,
                   plan="move_to(Book_1)\npick(Book_1)", roles={"arg1": "Book_1"})


@pytest.fixture
def db(tmp_path):
    return tmp_path / "memory" / "episodes.db"


def open_memory(path, **kw) -> EpisodicMemory:
    kw.setdefault("encoder", WordEncoder())
    kw.setdefault("seeds", None)
    return EpisodicMemory(path, **kw)


# --------------------------------------------------------------------------- storing
def test_add_get_list_and_reopen(db):
    with open_memory(db) as m:
        a = m.add(lesson("bring me my medicine", "next time bring a glass of water too", feedback="next time ..."))
        b = m.add(recovery_lesson("get me the book"))
        assert a.id is not None and b.id == a.id + 1 and a.created is not None
        assert [e.id for e in m.list()] == [a.id, b.id] and len(m) == 2
        assert [e.id for e in m.list(scope="recovery")] == [b.id]
    with open_memory(db) as m:
        got = m.get(a.id)
        assert got.instructions == ("bring me my medicine", "next time bring a glass of water too")
        assert got.plan == a.plan and got.feedback == "next time ..." and got.kind == "lesson"
        assert m.get(b.id).category == "IU1"
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_embeddings_are_stored_not_recomputed(db):
    enc = WordEncoder()
    with open_memory(db, encoder=enc) as m:
        m.add(lesson("bring me my medicine", "and a glass of water"))
    assert enc.texts == 2
    enc2 = WordEncoder()
    with open_memory(db, encoder=enc2) as m:
        assert enc2.calls == 0                       # opening reads the stored embeddings
        m.retrieve("bring the medicine")
        assert enc2.texts == 1                       # only the request is embedded


def test_another_model_embeds_everything_once(db):
    with open_memory(db, encoder=WordEncoder("model-a")) as m:
        m.add(lesson("bring me my medicine"))
        m.add(lesson("switch off the lamp", task="switch_off"))
    b = WordEncoder("model-b", dim=32)
    with open_memory(db, encoder=b) as m:
        assert b.texts == 2
        assert m.retrieve("switch off the lamp", k=1)[0].episode.task == "switch_off"
    again = WordEncoder("model-b", dim=32)
    with open_memory(db, encoder=again) as m:
        assert again.calls == 0


def test_forget_removes_a_lesson_for_good(db):
    with open_memory(db) as m:
        keep = m.add(lesson("bring me my medicine"))
        wrong = m.add(lesson("bring me the book", "always bring the lamp too"))
        gone = m.forget(wrong.id)
        assert gone.id == wrong.id and [e.id for e in m.list()] == [keep.id]
        assert all(r.episode.id != wrong.id for r in m.retrieve("bring me the book", k=5))
        with pytest.raises(UnknownEpisode, match=f"no episode {wrong.id}"):
            m.get(wrong.id)
        with pytest.raises(UnknownEpisode):
            m.forget(wrong.id)
        assert m.retrieve("bring me my medicine", k=5)[0].episode.id == keep.id
    with open_memory(db) as m:
        assert [e.id for e in m.list()] == [keep.id]


def test_seeds_are_written_once_listed_and_cannot_be_forgotten(db):
    seeds = load_seeds()
    enc = WordEncoder()
    with open_memory(db, encoder=enc, seeds=seeds) as m:
        assert len(m.list(kind="seed")) == len(seeds) >= 10
        first = enc.texts
        seed = m.list(kind="seed")[0]
        with pytest.raises(EpisodeError, match="seed example"):
            m.forget(seed.id)
        m.add(lesson("bring me my medicine"))
    enc2 = WordEncoder()
    with open_memory(db, encoder=enc2, seeds=seeds) as m:
        assert enc2.calls == 0 and len(m) == len(seeds) + 1
    # a changed seed file replaces the seeds and keeps the lessons
    changed = seeds[:3]
    with open_memory(db, seeds=changed) as m:
        assert len(m.list(kind="seed")) == 3 and len(m.lessons()) == 1
    assert first == sum(len(s.instructions) for s in seeds)


def test_seed_file_covers_the_recovery_prompt_examples():
    seeds = load_seeds()
    examples = (Path(__file__).resolve().parents[2] / "data/prompts/recovery/examples.md").read_text()
    rec = [s for s in seeds if s.scope == "recovery"]
    assert len(rec) == examples.count("corrective actions:")
    for s in rec:
        assert s.instructions[0] in examples and s.plan.strip() in examples
    assert {s.task for s in seeds if s.scope == "task"} >= {"deliver", "fetch", "put", "switch_on", "switch_off",
                                                             "open", "close", "slice"}


def test_bad_seed_file_names_the_example(tmp_path):
    f = tmp_path / "seeds.yaml"
    f.write_text("format: raider-memory-seeds/1\nexamples:\n  - key: a\n    scope: task\n    task: deliver\n"
                 "    instructions: [x]\n    plan: 'import os'\n")
    with pytest.raises(SeedError, match=r"examples\[0\] \(a\)\.plan: .*imports are not allowed"):
        load_seeds(f)


def test_episode_validation():
    with pytest.raises(EpisodeError, match="instructions"):
        lesson()
    with pytest.raises(EpisodeError, match="task"):
        Episode(scope="task", instructions=("x",), plan="say('hi')")
    with pytest.raises(EpisodeError, match="scope"):
        Episode(scope="other", instructions=("x",), plan="say('hi')")
    with pytest.raises(EpisodeError, match="only lessons"):
        open_memory(":memory:").add(Episode(scope="task", kind="seed", task="t", instructions=("x",), plan="say('x')"))


# --------------------------------------------------------------------------- retrieval
def brute_force(m: EpisodicMemory, enc: WordEncoder, instructions, gamma, **filters):
    e = enc.encode(list(reversed(instructions)))
    e_t = sum(gamma ** i * e[i] for i in range(len(instructions)))
    out = []
    for ep in m.list():
        if any(getattr(ep, k) != v for k, v in filters.items()):
            continue
        out.append((max(float(enc.encode([t])[0] @ e_t) for t in ep.instructions), ep.id))
    return sorted(out, key=lambda x: (-x[0], x[1]))


def test_retrieve_is_the_papers_decayed_max_similarity():
    enc = WordEncoder()
    m = open_memory(":memory:", encoder=enc)
    texts = ["bring me my medicine", "switch off the lamp", "open the fridge and get the milk",
             "close the fridge after you take something out", "bring a glass of water with the pills",
             "turn on the television", "hand me the remote control", "fetch the oil bottle from the shelf"]
    rng = np.random.default_rng(0)
    for i in range(40):
        k = int(rng.integers(1, 4))
        m.add(lesson(*[texts[j] for j in rng.choice(len(texts), k, replace=False)],
                     task=["deliver", "fetch"][i % 2]))
    history = ["bring me my medicine", "no, also the water", "and close the fridge"]
    for gamma in (0.6, 0.3, 1.0):
        got = [(round(r.score, 5), r.episode.id) for r in m.retrieve(history, k=40, gamma=gamma)]
        want = [(round(s, 5), i) for s, i in brute_force(m, enc, history, gamma)]
        assert [s for s, _ in got] == [s for s, _ in want]
        assert sorted(got) == sorted(want)
    top = m.retrieve(history, k=5, task="fetch")
    assert len(top) == 5 and all(r.episode.task == "fetch" for r in top)
    assert [r.score for r in top] == sorted((r.score for r in top), reverse=True)
    assert [round(r.score, 5) for r in top] == [round(s, 5) for s, _ in brute_force(m, enc, history, 0.6, task="fetch")[:5]]


def test_decay_weights_the_most_recent_instruction_most():
    e = np.eye(3, dtype=np.float32)                 # rows: most recent first
    assert np.allclose(decayed_request(e, 0.6), [1.0, 0.6, 0.36])
    enc = WordEncoder()
    m = open_memory(":memory:", encoder=enc)
    lamp = m.add(lesson("switch off the lamp", task="switch_off"))
    milk = m.add(lesson("open the fridge and get the milk", task="fetch"))
    # the last thing said decides; the earlier one only contributes gamma of its weight
    assert m.retrieve(["open the fridge and get the milk", "switch off the lamp"], k=1)[0].episode.id == lamp.id
    assert m.retrieve(["switch off the lamp", "open the fridge and get the milk"], k=1)[0].episode.id == milk.id
    best = m.retrieve(["switch off the lamp"], k=1)[0]
    assert best.instruction == "switch off the lamp" and best.score == pytest.approx(1.0, abs=1e-5)


def test_retrieve_edge_cases():
    m = open_memory(":memory:")
    assert m.retrieve("anything") == []
    m.add(lesson("bring me my medicine"))
    assert m.retrieve("bring", k=0) == [] and m.retrieve("bring", task="nothing") == []
    assert len(m.retrieve("bring", k=50)) == 1
    with pytest.raises(ValueError, match="no instruction"):
        m.retrieve(["", "  "])
    with pytest.raises(ValueError, match="gamma"):
        open_memory(":memory:", gamma=0)


# --------------------------------------------------------------------------- bad files
def test_a_file_that_is_not_a_database_is_a_clear_corrupt_error(tmp_path):
    f = tmp_path / "episodes.db"
    f.write_bytes(b"this is not sqlite at all\n" * 200)
    with pytest.raises(EpisodicMemoryError) as err:
        open_memory(f)
    assert err.value.kind == "corrupt" and err.value.path == str(f) and str(f) in str(err.value)
    assert "not an SQLite database" in str(err.value)


def test_a_damaged_page_is_a_clear_corrupt_error(db):
    with open_memory(db) as m:
        for i in range(200):
            m.add(lesson(f"bring me object number {i}", "and a glass of water " * 10))
    con = sqlite3.connect(db)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = bytearray(db.read_bytes())
    page = 4096
    assert len(data) > 8 * page
    for off in range(3 * page, 6 * page):            # scribble over interior pages
        data[off] = 0xA5
    db.write_bytes(bytes(data))
    with pytest.raises(EpisodicMemoryError) as err:
        open_memory(db)
    assert err.value.kind == "corrupt" and str(db) in str(err.value)


def test_a_foreign_database_and_a_newer_schema_are_refused(tmp_path):
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE things (x)")
    con.commit()
    con.close()
    with pytest.raises(EpisodicMemoryError, match="not an episodic memory") as err:
        open_memory(other)
    assert err.value.kind == "schema"
    newer = tmp_path / "newer.db"
    open_memory(newer).close()
    con = sqlite3.connect(newer)
    con.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    con.commit()
    con.close()
    with pytest.raises(EpisodicMemoryError, match=f"schema version {SCHEMA_VERSION + 1}") as err:
        open_memory(newer)
    assert err.value.kind == "schema"


def _hold_lock(path: Path, mode: str) -> subprocess.Popen:
    """Another process holding a lock on the file until its stdin closes."""
    script = textwrap.dedent(f"""
        import sqlite3, sys
        con = sqlite3.connect({str(path)!r}, isolation_level=None)
        {'con.execute("PRAGMA locking_mode=EXCLUSIVE")' if mode == 'exclusive' else ''}
        con.execute("BEGIN {'EXCLUSIVE' if mode == 'exclusive' else 'IMMEDIATE'}")
        {'con.execute("INSERT INTO meta VALUES (1, 2)")' if mode == 'exclusive' else ''}
        print("locked", flush=True)
        sys.stdin.read()
        con.execute("ROLLBACK")
    """)
    p = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "locked"
    return p


def test_a_write_locked_file_gives_a_locked_error_and_recovers(db):
    m = open_memory(db, busy_timeout_s=0.2)
    m.add(lesson("bring me my medicine"))
    holder = _hold_lock(db, "write")
    try:
        t0 = time.monotonic()
        with pytest.raises(EpisodicMemoryError) as err:
            m.add(lesson("bring me the book"))
        assert time.monotonic() - t0 < 5
        assert err.value.kind == "locked" and str(db) in str(err.value) and "storing a lesson" in str(err.value)
        assert len(m) == 1 and m.retrieve("medicine")    # reading goes on
    finally:
        holder.communicate("")
    m.add(lesson("bring me the book"))
    assert len(m) == 2
    m.close()


def test_a_file_locked_exclusively_cannot_be_opened(db):
    open_memory(db).close()
    holder = _hold_lock(db, "exclusive")
    try:
        with pytest.raises(EpisodicMemoryError) as err:
            open_memory(db, busy_timeout_s=0.2)
        assert err.value.kind == "locked" and str(db) in str(err.value)
    finally:
        holder.communicate("")
    open_memory(db).close()


def test_an_unusable_encoder_is_a_memory_error(db):
    class Broken:
        name = "broken"

        def encode(self, texts):
            raise RuntimeError("no model files")

    m = open_memory(db, encoder=Broken())
    with pytest.raises(EpisodicMemoryError, match="no model files") as err:
        m.add(lesson("bring me my medicine"))
    assert err.value.kind == "encoder" and len(m) == 0


def test_add_many_is_one_import(db):
    with open_memory(db) as m:
        words = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(50)]      # waa, wab, ...
        got = m.add_many([lesson(f"bring me {w}", f"and the cup {i}") for i, w in enumerate(words)])
        assert [e.id for e in got] == list(range(1, 51))
        assert m.retrieve(f"bring me {words[7]}", k=1)[0].episode.id == 8
        with pytest.raises(EpisodeError, match="only lessons"):
            m.add_many([lesson("x"), "not an episode"])
        assert len(m) == 50
    with open_memory(db) as m:
        assert len(m) == 50 and m.get(50).instructions == (f"bring me {words[49]}", "and the cup 49")


def test_a_repeated_request_is_embedded_once():
    enc = WordEncoder()
    m = open_memory(":memory:", encoder=enc)
    m.add(lesson("bring me my medicine"))
    before = enc.texts
    for _ in range(3):
        m.retrieve(["bring me my medicine", "and the water"])
    assert enc.texts - before == 2
