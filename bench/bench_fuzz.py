"""Fuzzing at scale (issue 11): 100,000 generated and mutated inputs for each parser of
untrusted text (test/support/fuzz.py TARGETS: tool calls, final answers, recovery plans,
scenes, benchmark case files, LTL formulas). Prints and writes bench/results/fuzz.json:

- fuzz_inputs_total (target >= 500,000), fuzz_crashes (0), fuzz_slow_inputs (0: none over 1 s)
- per target: fuzz_<name>_inputs / _rejected / _crashes / _slow / _max_ms / _mean_ms

Run: ``python bench/bench_fuzz.py [--n N]``. Crashing and slow inputs are printed.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

from support.fuzz import TARGETS, fuzz  # noqa: E402
from figures import write_figures  # noqa: E402


def main(n: int) -> dict:
    figures: dict = {}
    total = crashes = slow = 0
    for t in TARGETS:
        rep = fuzz(t, n, seed=2024)
        print(rep.summary(), flush=True)
        for inp, problem in rep.crashes[:10]:
            print(f"  crash: {problem} <- {inp}")
        for inp, dt in rep.slow[:10]:
            print(f"  slow: {dt:.2f} s <- {inp}")
        total += rep.inputs
        crashes += len(rep.crashes)
        slow += len(rep.slow)
        figures.update({f"fuzz_{t.name}_inputs": float(rep.inputs), f"fuzz_{t.name}_rejected": float(rep.rejected),
                        f"fuzz_{t.name}_crashes": float(len(rep.crashes)), f"fuzz_{t.name}_slow": float(len(rep.slow)),
                        f"fuzz_{t.name}_max_ms": round(rep.max_s * 1e3, 2),
                        f"fuzz_{t.name}_mean_ms": round(rep.total_s / max(1, rep.inputs) * 1e3, 3)})
    return {"fuzz_inputs_total": float(total), "fuzz_crashes": float(crashes), "fuzz_slow_inputs": float(slow),
            **figures}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000, help="inputs per target")
    write_figures("fuzz", main(ap.parse_args().n))
