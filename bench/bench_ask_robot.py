"""ask_robot over ROS (RACCOON state QA through the node graph, rules answerer).

For each scenario of the Q&A benchmark (data/state_qa/benchmark) a fresh node graph is started
(sim_world, perception, scene_graph, state_qa; for executor scenarios also issue_detector,
recovery_planner, human_interface with the scripted person, plan_executor), run to its
checkpoint through the nodes; the summaries are collected from state/summaries and every
question is asked through the ask_robot service (raider_ros.ros.qa_bench).
  ask_robot_ms_p50 / p95     client-side round trip of ask_robot [ms] at room scale (the scenario's
                             scene only), after one unscored warm-up question per graph
  ask_robot_ms_p50_10000_objects / ask_robot_ms_p95_10000_objects
                             the same at house scale (target p95 <= 100 ms): the scenario's scene
                             embedded as one room of a generated house of 10,000 objects
                             (raider_ros.sim.house.embed_case, seed 0), the rest of the house
                             put into the scene graph as remembered objects through
                             scene_graph/remember before the scenario runs
  world_model_chars_max_10000_objects / world_model_facts_max_10000_objects
                             size of the world-model summary the node received at house scale
                             (it must stay short: counts, not 10,000 lines)
  ask_robot_first_ms_max     that first question's round trip (it may wait for the embedding
                             model the node loads in the background at start)
  ask_robot_after_change_ms_max  the first question right after the checkpoint (unscored, not in
                             p50/p95): it may pay for embedding the facts of the summaries that
                             just arrived when the node's background indexing is still running
  qa_truthful_rate_ros       share of factual questions answered truthfully through the nodes
  qa_truthful_rate_unknown_ros  the same for questions about absent things / unknown / refused
  qa_module_recall_bench_ros    selection recall on the benchmark's own questions (dev)

The qa_* figures are those of the room scale; at house scale they get the suffix too.
Run: ``python bench/bench_ask_robot.py [REGEX] [--scales 0,10000]`` (only scenarios whose name
matches; scale 0 = room scale); prints the figures and writes bench/results/ask_robot.json.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from figures import write_figures  # noqa: E402


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * len(xs)))], 1)


def run_scale(benches, objects: int) -> dict:
    from raider_ros.ros.qa_bench import QABenchError, run_scenario_ros
    from raider_ros.state_qa.benchmark import BenchReport
    sfx = f"_{objects}_objects" if objects else ""
    t0 = time.monotonic()
    per, results, runs, failed = [], [], {}, 0
    for b in benches:       # a scenario the graph cannot run is reported, the others still count
        try:
            r, _ = run_scenario_ros(b, house_objects=objects, on_line=lambda s: print(f"  {s}", flush=True))
        except QABenchError as exc:
            failed += 1
            print(f"  FAILED{sfx} [{b.name}]: {exc}", flush=True)
            continue
        per.append(r)
        runs[b.name] = r.run
        results.extend(r.results)
    if not per:
        return {f"qa_ros_failed_scenarios{sfx}": failed}
    report = BenchReport(results, runs)
    rtt = [x for r in per for x in r.rtt_ms]
    for r in report.results:
        if not r.truth.truthful:
            print(f"  not truthful{sfx} [{r.scenario}] {r.question.text!r} -> {r.answer.answer[:160]!r}")
    f = report.figures()
    out = {
        f"ask_robot_ms_p50{sfx}": _pct(rtt, 0.5),
        f"ask_robot_ms_p95{sfx}": _pct(rtt, 0.95),
        f"ask_robot_ms_max{sfx}": round(max(rtt), 1),
        f"ask_robot_questions{sfx}": len(rtt),
        f"ask_robot_first_ms_max{sfx}": round(max(r.first_ms for r in per), 1),
        f"ask_robot_after_change_ms_max{sfx}": round(max(r.after_change_ms for r in per), 1),
        f"qa_truthful_rate_ros{sfx}": f["truthful_rate_factual"],
        f"qa_truthful_rate_unknown_ros{sfx}": f["truthful_rate_unknown"],
        f"qa_module_recall_bench_ros{sfx}": f["module_recall"],
        f"qa_ros_scenarios{sfx}": len(per),
        f"qa_ros_failed_scenarios{sfx}": failed,
        f"qa_ros_graph_startup_s_max{sfx}": round(max(r.startup_s for r in per), 1),
        f"qa_ros_elapsed_s{sfx}": round(time.monotonic() - t0, 1),
    }
    if objects:
        wm = [r.run.history.latest("world_model") for r in per]
        out[f"world_model_chars_max{sfx}"] = max(len(s.render()) for s in wm if s is not None)
        out[f"world_model_facts_max{sfx}"] = max(len(s.facts) for s in wm if s is not None)
    return out


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("regex", nargs="?", default="", help="only scenarios whose name matches")
    ap.add_argument("--scales", default="0,10000", help="objects in the scene graph, comma-separated (0 = room)")
    args = ap.parse_args(argv)
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 100)))  # a private graph
    from raider_ros.state_qa.benchmark import load_benchmark
    benches = [b for b in load_benchmark() if re.search(args.regex, b.name)]
    figures: dict = {"load_average_1min_start": round(os.getloadavg()[0], 2)}
    for objects in (int(x) for x in args.scales.split(",") if x.strip()):
        figures.update(run_scale(benches, objects))
    figures["load_average_1min_end"] = round(os.getloadavg()[0], 2)
    write_figures("ask_robot", figures)


if __name__ == "__main__":
    main(sys.argv[1:])
