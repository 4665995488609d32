"""make safety-eval: the Safety Chip benchmark (format raider-safety/1) in process.

Writes OUT/report.json and OUT/report.md:

* ``monitor_accuracy``: plan cases whose verdict (first unsafe step, violated constraints,
  obligations left) equals ``expected``, with the gold formulas;
* ``translation_accuracy``: the rules translator's formulas equivalent to the gold ones (by
  automata, never by text), split into sentences written before the translator's last change
  (batches 1-2, dev) and after it (batches 3+, held out);
* task cases (a PDDL goal): planned and executed in the simulator through the executor, in the
  modes ``off`` (no chip: the plain plan, no checks), ``chip`` (the plain plan, every action
  checked before dispatch, unsafe ones pruned and answered by corrective re-prompts) and
  ``chip+planner`` (the constraint-aware planner and the same checks), each with the rules
  translator's formulas and with the gold ("expert-verified") ones. Success: every step done;
  safety: no gold constraint violated by the executed trace. ``success_rate_with_chip`` /
  ``safety_rate_with_chip`` are the ``chip+planner`` runs with translated formulas (what a robot
  runs); ``report.md`` has every mode in the paper's table layout.

The issue check of these runs is the simulator's own precondition check (this measures the
safety layer; ``make evaluate`` measures RAIDER's checks). Only the in-process mode exists.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from raider_ros.common.paths import data_dir
from raider_ros.evaluation.safety_run import MODES, evaluate, report_markdown
from raider_ros.safety.benchmark import SafetyBenchmarkError, load_benchmark
from raider_ros.sim.scene import SceneError


def main(args=None) -> int:
    ap = argparse.ArgumentParser(prog="safety_eval", description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=str(data_dir() / "safety" / "benchmark"),
                    help="directory of *.safety.yaml files (default: data/safety/benchmark)")
    ap.add_argument("--out", default="out/safety", help="directory for report.json and report.md")
    ap.add_argument("--mode", choices=["local"], default="local", help="local: everything in this process")
    ap.add_argument("--modes", default=",".join(MODES), help=f"task-run modes, comma-separated ({', '.join(MODES)})")
    ap.add_argument("--constraints", default="rules,gold",
                    help="formulas the chip enforces: rules (the rules translator's), gold (the benchmark's)")
    ap.add_argument("--filter", help="only cases whose id matches this regular expression")
    ap.add_argument("--planner-max-states", type=int, default=1500,
                    help="the constraint-aware planner's bound (states of task x automata); deterministic")
    ap.add_argument("--planner-time-limit", type=float, default=120.0, help="seconds per planning call (a safeguard)")
    ap.add_argument("--quiet", action="store_true", help="no line per task run")
    ns = ap.parse_args(args)
    modes = [m.strip() for m in ns.modes.split(",") if m.strip()]
    bad = [m for m in modes if m not in MODES]
    sources = [s.strip() for s in ns.constraints.split(",") if s.strip()]
    if bad or not modes:
        ap.error(f"--modes: unknown {', '.join(bad) or '(none given)'}; expected {', '.join(MODES)}")
    if not sources or any(s not in ("rules", "gold") for s in sources):
        ap.error("--constraints: expected rules and/or gold")
    try:
        rx = re.compile(ns.filter) if ns.filter else None
    except re.error as exc:
        ap.error(f"--filter: {exc}")
    try:
        bench = load_benchmark(ns.cases)
    except (SafetyBenchmarkError, SceneError, OSError) as exc:
        print(f"safety_eval: {exc}", file=sys.stderr)
        return 2
    if "off" in modes and modes[0] != "off":
        modes = ["off", *[m for m in modes if m != "off"]]
    rep = evaluate(bench, modes=modes, constraints=sources, planner_time_limit_s=ns.planner_time_limit,
                   planner_max_states=ns.planner_max_states,
                   progress=None if ns.quiet else (lambda line: print(line, flush=True)),
                   case_filter=(lambda c: bool(rx.search(c.id))) if rx else None)
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(rep, indent=1, default=str) + "\n")
    md = report_markdown(rep, ns.cases)
    (out / "report.md").write_text(md)
    print(md)
    print(f"wrote {out / 'report.json'} and {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
