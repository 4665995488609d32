"""Safety Chip core figures (in-process, no ROS).

* ``ltl_compile_ms_p50`` / ``_p95`` / ``_max``: compiling each distinct gold formula of the
  safety benchmark (data/safety/benchmark) to its automaton with MONA, cold (cache off),
  ``--runs`` times each; ``ltl_compile_cached_us_p50``: the same through the in-memory cache.
* ``monitor_check_ms_p50`` / ``_p95`` (20 constraints): SafetyMonitor.check_action on the house
  scene (predict the state, evaluate the atoms, step 20 automata), over a set of steps;
  ``monitor_plan_step_ms_mean``: check_plan of a 4-step plan, per step.
* ``monitor_accuracy``: benchmark plan cases whose verdict (first unsafe step, violated
  constraints, pending obligations) equals ``expected``, with the gold formulas.
* ``translation_accuracy_rules_batch1/2/3``: the rules translator's formulas equivalent (by
  automata) to the gold ones, per batch of sentences; batch 1 and 2 are dev figures (the
  translator was tuned on their failures), batch 3 was written after its last change
  (held out). See docs/safety.md for the history.

Run: ``python bench/bench_safety.py [--runs N]``; writes bench/results/safety.json.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from raider_ros.common.paths import data_dir, scenes_dir  # noqa: E402
from raider_ros.safety import ltl  # noqa: E402
from raider_ros.safety.automata import Compiler  # noqa: E402
from raider_ros.safety.benchmark import (  # noqa: E402
    load_benchmark, run_benchmark, score_translations, summarise_translations,
)
from raider_ros.safety.monitor import SafetyMonitor  # noqa: E402
from raider_ros.safety.predicates import SymbolicState  # noqa: E402
from raider_ros.safety.translate import RulesTranslator  # noqa: E402
from raider_ros.sim.scene import load_scene  # noqa: E402
from figures import write_figures  # noqa: E402

TWENTY = (
    [f"G !(holding({t}) & agent_at({r}))" for t in ("knife", "apple", "mug", "book")
     for r in ("bedroom", "living_room", "bathroom")]
    + [f"G (pick({t}) -> F place(CounterTop_1))" for t in ("remote", "vase", "towel", "medicine")]
    + ["G !switched_on(stove)", "!agent_at(bathroom) U agent_at(living_room)",
       "G (is_open(fridge) -> agent_at(kitchen))", "!F (open(fridge) & X F open(fridge))"]
)
STEPS = ["move_to(Knife_1)", "move_to(Toilet_1)", "move_to(Sofa_1)", "open(Fridge_1)", "turn_on(TV_1)",
         "move_to(bedroom)", "pick(Apple_1)"]


def pct(xs, q):
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    bench = load_benchmark(data_dir() / "safety" / "benchmark")
    figures: dict[str, float | int] = {}

    # compile, cold
    import ltlf2dfa.ltlf  # noqa: F401  (the import is not compile time)
    gold = sorted({ltl.normalise(g) for c in bench.cases for g in (c.ltl or ())})
    cold = Compiler(cache=False)
    times = []
    for _ in range(args.runs):
        for g in gold:
            t0 = time.perf_counter()
            cold.compile(g)
            times.append((time.perf_counter() - t0) * 1000)
    figures["ltl_formulas"] = len(gold)
    figures["ltl_compile_ms_p50"] = round(pct(times, 0.5), 2)
    figures["ltl_compile_ms_p95"] = round(pct(times, 0.95), 2)
    figures["ltl_compile_ms_max"] = round(max(times), 2)
    warm = Compiler()
    for g in gold:
        warm.compile(g)
    cached = []
    for g in gold:
        t0 = time.perf_counter()
        warm.compile(g)
        cached.append((time.perf_counter() - t0) * 1e6)
    figures["ltl_compile_cached_us_p50"] = round(statistics.median(cached), 1)

    # monitor, 20 constraints
    house = SymbolicState.from_scene(load_scene(scenes_dir() / "house.scene.yaml"))
    mon = SafetyMonitor(house, compiler=warm)
    mon.add_many(TWENTY)
    checks = []
    for _ in range(max(20, 10 * args.runs)):
        for s in STEPS:
            t0 = time.perf_counter()
            mon.check_action(s)
            checks.append((time.perf_counter() - t0) * 1000)
    figures["monitor_constraints"] = len(mon.constraints())
    figures["monitor_check_ms_p50"] = round(pct(checks, 0.5), 3)
    figures["monitor_check_ms_p95"] = round(pct(checks, 0.95), 3)
    plan = ["move_to(Knife_1)", "pick(Knife_1)", "move_to(Apple_1)", "place(CounterTop_1)"]
    t0 = time.perf_counter()
    n = 50
    for _ in range(n):
        mon.check_plan(plan)
    figures["monitor_plan_step_ms_mean"] = round((time.perf_counter() - t0) * 1000 / (n * len(plan)), 3)

    # accuracy
    res = run_benchmark(bench, compiler=warm)
    figures["monitor_cases"] = res["cases"]
    figures["monitor_accuracy"] = round(res["accuracy"], 3)
    tr = summarise_translations(score_translations(bench, RulesTranslator(), compiler=warm))
    figures["translation_sentences"] = tr["sentences"]
    figures["translation_accuracy_rules"] = tr["accuracy"]
    for b in (1, 2, 3):
        if f"batch{b}_accuracy" in tr:
            figures[f"translation_sentences_batch{b}"] = tr[f"batch{b}_sentences"]
            figures[f"translation_accuracy_rules_batch{b}"] = tr[f"batch{b}_accuracy"]
    figures["translation_untranslated"] = tr["untranslated"]
    write_figures("safety", figures)


if __name__ == "__main__":
    main()
