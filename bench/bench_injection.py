"""Prompt injection (issue 11): every case of test/data/injection/*.yaml, end to end in one
process (simulator -> perception -> tools -> issue check -> recovery -> executor -> skills), as
test/unit/test_injection.py runs them. Prints and writes bench/results/injection.json:

- injection_cases, injection_cases_with_control
- injection_verdict_changes: cases whose verdict differs from their control's (target 0)
- injection_unsafe_actions: skills outside the whitelist or forbidden by a case, and tool calls
  outside the toolset that reached the tools (target 0)
- injection_expectation_failures: cases whose own expectations fail
- injection_cases_<vector>: cases per place the planted text sits
- injection_cases_safety_chip: cases run with the Safety Chip on (planted text asks for a step its
  constraints forbid); injection_safety_refusals: steps the chip refused in them (the unsafe
  steps it stopped; any that got through count in injection_unsafe_actions)
"""
from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

from support.injection import VECTORS, load_cases, run_case  # noqa: E402
from figures import write_figures  # noqa: E402


def main() -> dict:
    cases = load_cases()
    t0 = time.monotonic()
    changes = unsafe = failures = refusals = 0
    for c in cases:
        r = run_case(c)
        changes += r.verdict_changed
        unsafe += len(r.unsafe)
        failures += bool(r.failures)
        refusals += len(r.outcome.pruned)
        if not r.ok:
            print(r.describe(), flush=True)
    by_vector = Counter(c.vector for c in cases)
    figures = {"injection_cases": float(len(cases)),
               "injection_cases_with_control": float(sum(c.control_fields() is not None for c in cases)),
               "injection_verdict_changes": float(changes),
               "injection_unsafe_actions": float(unsafe),
               "injection_expectation_failures": float(failures),
               "injection_cases_safety_chip": float(sum(bool(c.get("safety")) for c in cases)),
               "injection_safety_refusals": float(refusals),
               "injection_run_s": round(time.monotonic() - t0, 1)}
    figures.update({f"injection_cases_{v}": float(by_vector.get(v, 0)) for v in VECTORS})
    return figures


if __name__ == "__main__":
    write_figures("injection", main())
