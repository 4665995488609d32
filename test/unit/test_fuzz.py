"""Fuzzing smoke run (issue 11): 10,000 generated and mutated inputs for each parser of
untrusted text in support.fuzz.TARGETS (tool calls, final answers, recovery plans, scenes,
benchmark case files, LTL formulas). No crash; every rejection is the parser's own error type
with a message; accepted results keep the parser's contract. bench/bench_fuzz.py runs 100,000
per target and reports the time per input (fuzz_slow_inputs: over 1 s)."""
from __future__ import annotations

import pytest

from support.fuzz import TARGETS, fuzz

N = 10_000


@pytest.mark.parametrize("target", TARGETS, ids=[t.name for t in TARGETS])
def test_fuzz_smoke(target):
    rep = fuzz(target, N, seed=7, hang_s=30.0)
    assert rep.inputs == N
    assert rep.crashes == [], rep.summary() + "\n" + "\n".join(f"{p} <- {i}" for i, p in rep.crashes[:5])
    assert rep.accepted + rep.rejected == N


def test_the_fuzzer_catches_a_crash_and_a_hang():
    """The harness itself can fail: an unexpected exception, an empty-message rejection and a
    hang (stopped by the watchdog) are each counted."""
    from support.fuzz import FuzzTarget
    import time

    def run(x):
        if x == 0:
            raise KeyError("boom")
        if x == 1:
            raise ValueError("")
        if x == 2:
            time.sleep(5)
        raise ValueError("clean")
    values = iter([0, 1, 2, 3])
    rep = fuzz(FuzzTarget("toy", lambda _r: next(values), run, (ValueError,)), 4, hang_s=0.5, slow_s=0.4)
    assert [p.split(":")[0] for _i, p in rep.crashes] == ["KeyError", "ValueError without a message", "still running after 0.5 s (stopped)"]
    assert rep.rejected == 1 and len(rep.slow) == 1
