"""ask_robot over ROS (RACCOON state QA through the node graph, rules answerer).

For each scenario of the Q&A benchmark (data/state_qa/benchmark) a fresh node graph is started
(sim_world, perception, scene_graph, state_qa; for executor scenarios also issue_detector,
recovery_planner, human_interface with the scripted person, plan_executor), run to its
checkpoint through the nodes; the summaries are collected from state/summaries and every
question is asked through the ask_robot service (raider_ros.ros.qa_bench).
  ask_robot_ms_p50 / p95     client-side round trip of ask_robot [ms] (target p95 <= 100 ms;
                             at house scale - 10,000 objects - once the scene-graph retrieval
                             branch has landed), after one unscored warm-up question per graph
  ask_robot_first_ms_max     that first question's round trip (it may wait for the embedding
                             model the node loads in the background at start)
  ask_robot_after_change_ms_max  the first question right after the checkpoint (unscored, not in
                             p50/p95): it may pay for embedding the facts of the summaries that
                             just arrived when the node's background indexing is still running
  qa_truthful_rate_ros       share of factual questions answered truthfully through the nodes
  qa_truthful_rate_unknown_ros  the same for questions about absent things / unknown / refused
  qa_module_recall_bench_ros    selection recall on the benchmark's own questions (dev)

Run: ``python bench/bench_ask_robot.py [REGEX]`` (only scenarios whose name matches); prints the
figures and writes bench/results/ask_robot.json.
"""
from __future__ import annotations

import os
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from figures import write_figures  # noqa: E402


def main(argv: list[str]) -> None:
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 100)))  # a private graph
    from raider_ros.ros.qa_bench import run_benchmark_ros
    from raider_ros.state_qa.benchmark import load_benchmark
    benches = load_benchmark()
    if argv:
        benches = [b for b in benches if re.search(argv[0], b.name)]
    t0 = time.monotonic()
    report, per = run_benchmark_ros(benches, on_line=lambda s: print(f"  {s}", flush=True))
    rtt = sorted(x for r in per for x in r.rtt_ms)
    for r in report.results:
        if not r.truth.truthful:
            print(f"  not truthful [{r.scenario}] {r.question.text!r} -> {r.answer.answer[:160]!r}")
    f = report.figures()
    write_figures("ask_robot", {
        "ask_robot_ms_p50": round(rtt[len(rtt) // 2], 1),
        "ask_robot_ms_p95": round(rtt[min(len(rtt) - 1, int(0.95 * len(rtt)))], 1),
        "ask_robot_ms_max": round(rtt[-1], 1),
        "ask_robot_questions": len(rtt),
        "ask_robot_first_ms_max": round(max(r.first_ms for r in per), 1),
        "ask_robot_after_change_ms_max": round(max(r.after_change_ms for r in per), 1),
        "qa_truthful_rate_ros": f["truthful_rate_factual"],
        "qa_truthful_rate_unknown_ros": f["truthful_rate_unknown"],
        "qa_module_recall_bench_ros": f["module_recall"],
        "qa_ros_scenarios": len(per),
        "qa_ros_graph_startup_s_max": round(max(r.startup_s for r in per), 1),
        "qa_ros_elapsed_s": round(time.monotonic() - t0, 1),
    })


if __name__ == "__main__":
    main(sys.argv[1:])
