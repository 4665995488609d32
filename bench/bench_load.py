"""Load and soak (issue 11). Prints and writes bench/results/load.json.

Load: for every row of test/support/load.py TARGETS (detect_issue as an action and as a
service, whose scripted LLM answers each turn after 50 ms; safety_monitor/check_action with one
constraint; ask_robot with the rules answerer), a burst of 50 simultaneous requests:
- concurrent_goals_lost: requests never answered, over every target (target 0)
- load_<target>_lost / _refused / _out_of_order / _p50_s / _p95_s / _max_s
- load_<target>_wrong_answers: answers that are not the one their request must get (check_action:
  the verdict), or refusals without a reason

Soak (bounded in time, --soak-s seconds per node): a stream of requests, the process's resident
memory measured after a warm-up and at the end:
- scene_graph: tool calls on scene_graph/call_tool (a rotation of the agent's tools)
- issue_detector: detect_issue checks (each also calls a tool on scene_graph)
- rss_growth_mb_per_1000_queries_<node>, soak_queries_<node>, rss_mb_<node>
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

from raider_ros.ros.graph import NodeGraph  # noqa: E402
from raider_ros.srv import CallTool, DetectIssue  # noqa: E402
from support.graph import GraphClient  # noqa: E402
from support.load import (TARGETS, burst, check_report, percentile, scripted_fixture, start_detector,  # noqa: E402
                          start_graph, wait_ready)
from figures import write_figures  # noqa: E402

# a ROS domain of its own, so that other graphs on the machine never answer in its place
os.environ.setdefault("ROS_DOMAIN_ID", str(random.Random(os.getpid()).randint(1, 100)))

N = 50
SOAK_TOOLS = [("object_detection", []), ("robot_holding", []), ("get_obj_state", ["Apple_1"]),
              ("dist_robot_to_obj", ["Apple_1"]), ("get_obj_properties", ["Mug_2"])]


def rss_mb(pid: int) -> float:
    """Resident memory of the node's process [MB] (each node is one Python process)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    raise RuntimeError(f"no VmRSS for pid {pid}")


def load_figures(client) -> dict:
    figures: dict = {}
    lost = 0
    for t in TARGETS:
        report = burst(client.node, t, N, timeout_s=300)
        problems = check_report(report, t)
        lat = [o.latency_s for o in report.outcomes if o.latency_s is not None]
        refused = sum(1 for o in report.outcomes if o.result is not None and
                      (o.result == "rejected" or t.status(o.result) != "ok"))
        lost += len(report.lost())
        key = t.name.replace("-", "_")
        figures.update({f"load_{key}_requests": float(N), f"load_{key}_lost": float(len(report.lost())),
                        f"load_{key}_refused": float(refused),
                        f"load_{key}_out_of_order": float(sum("out of queue order" in p for p in problems)),
                        f"load_{key}_wrong_answers": float(sum("wrong answer:" in p for p in problems)),
                        f"load_{key}_p50_s": round(percentile(lat, 50), 3),
                        f"load_{key}_p95_s": round(percentile(lat, 95), 3),
                        f"load_{key}_max_s": round(max(lat, default=float("nan")), 3)})
        print(report.describe(t), flush=True)
        for p in problems[:5]:
            print(f"  problem: {p}", flush=True)
    return {"concurrent_goals_lost": float(lost), **figures}


def soak(client, graph, node: str, call, seconds: float, warmup: int = 50) -> dict:
    """``call(i)`` returns None, or the reason the query failed (counted; more than one in ten
    stops the soak, which would no longer measure the service)."""
    for i in range(warmup):
        call(i)
    pid = graph.nodes[node].process.pid
    before, t0, n, errors = rss_mb(pid), time.monotonic(), 0, 0
    while time.monotonic() - t0 < seconds:
        problem = call(n)
        n += 1
        if problem:
            errors += 1
            print(f"soak {node}: query {n}: {problem}", flush=True)
            if errors > max(5, n // 10):
                raise RuntimeError(f"soak {node}: {errors} of {n} queries failed")
    after = rss_mb(pid)
    growth = (after - before) / max(n, 1) * 1000.0
    print(f"soak {node}: {n} queries in {time.monotonic() - t0:.0f} s, RSS {before:.1f} -> {after:.1f} MB", flush=True)
    return {f"soak_queries_{node}": float(n), f"soak_errors_{node}": float(errors), f"rss_mb_{node}": round(after, 1),
            f"rss_growth_mb_per_1000_queries_{node}": round(growth, 3)}


def main(soak_s: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench_load_") as tmp, NodeGraph(Path(tmp) / "logs") as graph:
        fixtures = Path(tmp)
        start_graph(graph, fixtures)
        (fixtures / "soak").mkdir()
        start_detector(graph, "/soak", scripted_fixture(fixtures / "soak", delay_s=0.0), queue_size=64,
                       request_deadline_s=60.0, fresh_frame_timeout_s=10.0, perception_silent_s=20.0)
        client = GraphClient(graph, name="bench_load_client")
        try:
            client.wait_refreshed(client.apply(""), timeout=120)
            wait_ready(client)
            figures = load_figures(client)

            def tool_call(i):
                tool, args = SOAK_TOOLS[i % len(SOAK_TOOLS)]
                r = client.call(CallTool, "scene_graph/call_tool", 30, tool=tool, args=args)
                return None if r.success else f"tool {tool}: {r.error}"

            def check(i):
                r = client.call(DetectIssue, "/soak/detect_issue", 60, query=f"pick(Apple) #{i}")
                return None if r.status == "ok" else f"{r.status}: {r.error}"

            figures.update(soak(client, graph, "scene_graph", tool_call, soak_s))
            time.sleep(5.0)          # perception catches up after the tool stream
            figures.update(soak(client, graph, "soak_detector", check, soak_s))
            graph.check_alive()
        finally:
            client.close()
    # the soak detector is an issue_detector: name the figure by the executable
    figures = {k.replace("soak_detector", "issue_detector"): v for k, v in figures.items()}
    figures["load_average_1min"] = round(os.getloadavg()[0], 2)
    return figures


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--soak-s", type=float, default=120.0, help="seconds of soak per node")
    write_figures("load", main(ap.parse_args().soak_s))
