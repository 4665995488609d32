"""The episodic memory: retrieval time with 10,000 stored examples and the learning benchmark.

* ``memory_retrieve_ms_p95_10000_examples`` (target <= 20): ``EpisodicMemory.retrieve(k=8)``
  end to end - embedding the request with the packaged MiniLM model, scoring every stored
  instruction (S(H, H_t), gamma 0.6) and taking the top 8 - for 200 requests that are all
  different (nothing cached), on a memory of 10,000 lessons (15,000 instructions) plus the
  seed examples. The machine's load average is reported with the figures (the CPU is shared). Also its p50, the scoring alone (``memory_rank_ms_p95_10000_examples``, the
  request vector given), opening the file (``memory_open_s_10000_examples``, embeddings read,
  not recomputed), storing one lesson durably (``memory_add_lesson_ms_p95``, one
  transaction with fsync), and embedding one request alone (``memory_encode_ms_*``, the encoder
  in use: TorchScript when ``memory_encoder_torchscript`` is 1; ``memory_encode_plain_ms_*``,
  the sentence-transformers wrapper), all interleaved request by request so that they see the
  same load. ``memory_retrieve_cpu_ms_*`` is the CPU time of the calling thread during
  retrieve (torch runs on that one thread): roughly what the call takes when it has a core to
  itself, which on the shared machine the wall-clock figure does not show.
* ``learning_*``: the learning benchmark (raider_ros/memory/benchmark.py) on the dev and the
  held-out triples; unsuffixed figures are over all triples.

Run: ``python bench/bench_memory.py``; prints the figures and writes bench/results/memory.json.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from raider_ros.memory.benchmark import run_sets  # noqa: E402
from raider_ros.memory.embedding import MiniLMEncoder, shared_encoder  # noqa: E402
from raider_ros.memory.episode import Episode  # noqa: E402
from raider_ros.memory.store import EpisodicMemory  # noqa: E402
from figures import write_figures  # noqa: E402

N = 10_000
VERBS = ["bring me", "fetch", "put away", "hand me", "switch off", "turn on", "open", "close", "clean", "get"]
THINGS = ["the medicine", "a glass of water", "the book", "the remote", "the lamp", "the mug", "the milk",
          "the towel", "the fork", "the bread", "the phone", "the kettle", "the dryer", "the fridge", "the pen"]
PLACES = ["from the kitchen", "from the table", "in the bedroom", "on the shelf", "for Adriana", "for Tom",
          "next to the sofa", "by the window", "after dinner", "before noon"]
EXTRAS = ["next time also bring a spoon", "remember to close it afterwards", "don't ask me, move closer",
          "please do it quietly", "and switch the light off when you leave"]


class Cached:
    """The MiniLM encoder with a cache, to build the 10,000 examples from 1,505 distinct sentences
    in reasonable time (the memory stores it under the model's name, so reopening it with the
    plain encoder does not embed anything again)."""

    def __init__(self, inner):
        self.inner, self.name, self.cache = inner, inner.name, {}

    def encode(self, texts):
        new = sorted({t for t in texts if t not in self.cache})
        if new:
            for t, v in zip(new, self.inner.encode(new)):
                self.cache[t] = v
        return np.stack([self.cache[t] for t in texts])


def episodes(rng: np.random.Generator) -> list[Episode]:
    """10,000 lessons: every verb x thing x place request (1,500) several times, alone or with
    one of five follow-ups."""
    out = []
    for i in range(N):
        first = f"{VERBS[rng.integers(len(VERBS))]} {THINGS[rng.integers(len(THINGS))]} " \
                f"{PLACES[rng.integers(len(PLACES))]}"
        instr = (first,) if i % 2 else (first, EXTRAS[rng.integers(len(EXTRAS))])
        out.append(Episode(scope="task", kind="lesson", task="deliver", instructions=instr,
                           plan="move_to(Table_1)\npick(Cup_1)", roles={"item": "Cup_1"}))
    return out


def pct(xs, q) -> float:
    return round(float(np.percentile(xs, q)), 2)


def main() -> None:
    enc = shared_encoder()
    enc.encode(["warm up"])
    enc.wait_fast(600)                  # the TorchScript path is built in the background after loading
    rng = np.random.default_rng(7)
    figs: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as d:
        db = Path(d) / "memory.db"
        m = EpisodicMemory(db, encoder=Cached(enc))
        t0 = time.monotonic()
        m.add_many(episodes(rng))
        print(f"  stored {len(m)} examples in {time.monotonic() - t0:.1f} s")
        add_ms = []
        for i in range(30):
            t = time.perf_counter()
            m.add(Episode(scope="task", kind="lesson", task="fetch", instructions=(f"get me the spare part {i}",),
                          plan="pick(Part_1)"))
            add_ms.append((time.perf_counter() - t) * 1e3)
        m.close()
        t = time.perf_counter()
        m = EpisodicMemory(db, encoder=enc)
        figs["memory_open_s_10000_examples"] = round(time.perf_counter() - t, 3)
        assert len(m) >= N
        requests = [f"could you {VERBS[i % len(VERBS)]} {THINGS[(i * 7) % len(THINGS)]} please, number {i}"
                    for i in range(200)]
        for r in requests[:5]:
            m.retrieve(r + " (warm-up)")    # numpy, tokenizer; other words, so not in the request cache
        vecs = enc.encode(requests)
        plain = MiniLMEncoder(fast=False)
        plain.encode(["warm up"])
        figs["load_average_1min_at_retrieval"] = round(os.getloadavg()[0], 2)
        # interleaved, so that every figure sees the same load: end to end, scoring alone, and
        # one request embedded by the encoder in use and by the plain wrapper
        full, full_cpu, rank = [], [], []
        fast_ms, plain_ms = [], []
        for r, v in zip(requests, vecs):
            t, c = time.perf_counter(), time.thread_time()
            hits = m.retrieve(r, k=8)
            full.append((time.perf_counter() - t) * 1e3)
            full_cpu.append((time.thread_time() - c) * 1e3)
            assert len(hits) == 8
            t = time.perf_counter()
            m.retrieve("", k=8, request_embedding=v)
            rank.append((time.perf_counter() - t) * 1e3)
            again = r + " again"            # not in the memory's request cache (the encoders have none)
            t = time.perf_counter()
            enc.encode([again])
            fast_ms.append((time.perf_counter() - t) * 1e3)
            t = time.perf_counter()
            plain.encode([again])
            plain_ms.append((time.perf_counter() - t) * 1e3)
        m.close()
    figs["load_average_1min_after_retrieval"] = round(os.getloadavg()[0], 2)
    figs["memory_encoder_torchscript"] = int(enc.fast_path == "torchscript")
    figs["memory_encode_ms_p50"], figs["memory_encode_ms_p95"] = pct(fast_ms, 50), pct(fast_ms, 95)
    figs["memory_encode_plain_ms_p50"], figs["memory_encode_plain_ms_p95"] = pct(plain_ms, 50), pct(plain_ms, 95)
    figs["memory_retrieve_ms_p95_10000_examples"] = pct(full, 95)
    figs["memory_retrieve_ms_p50_10000_examples"] = pct(full, 50)
    figs["memory_retrieve_cpu_ms_p95_10000_examples"] = pct(full_cpu, 95)
    figs["memory_retrieve_cpu_ms_p50_10000_examples"] = pct(full_cpu, 50)
    figs["memory_rank_ms_p95_10000_examples"] = pct(rank, 95)
    figs["memory_add_lesson_ms_p95"] = pct(add_ms, 95)
    learning, _ = run_sets(["dev", "heldout"], encoder=enc)
    figs.update(learning)
    write_figures("memory", figs)


if __name__ == "__main__":
    main()
