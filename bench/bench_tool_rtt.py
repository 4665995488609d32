"""Tool round trip over ROS: 1,000 service calls from a client process to the scene_graph node
(running with sim_world and the perception nodes as separate processes), on the project's
default kitchen scene. Prints and writes bench/results/tool_rtt.json:
tool_rtt_p50_ms, tool_rtt_p99_ms (targets: <= 3 and <= 10)."""
from __future__ import annotations

import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test"))

from raider_ros.ros.graph import NodeGraph  # noqa: E402
from raider_ros.srv import CallTool  # noqa: E402
from support.graph import PERCEPTION, GraphClient  # noqa: E402
from figures import write_figures  # noqa: E402

CALLS = 1000
# a realistic mix of the household tools
MIX = [("object_detection", []), ("robot_holding", []), ("dist_to_target", ["Mug_1"]),
       ("get_obj_state", ["Mug_1"]), ("get_obj_properties", ["Apple_1"]),
       ("check_obj_relationship", ["on top of", "CounterTop_1"]), ("check_obj_relationship", ["blocking", "Mug_1"])]


def main() -> dict:
    with NodeGraph() as graph:
        graph.start("sim_world", {"skill_duration_s": 0.0})
        for name in PERCEPTION:
            graph.start(name, {"preload_user_info": False} if name == "scene_graph" else None)
        client = GraphClient(graph, name="bench_tool_rtt")
        try:
            client.wait_refreshed(client.apply(""), timeout=60)
            clients = {t: client.client(CallTool, f"scene_graph/tools/{t}") for t, _ in MIX}
            for c in clients.values():
                assert c.wait_for_service(timeout_sec=20)
            samples = []
            for i in range(CALLS + 50):
                tool, args = MIX[i % len(MIX)]
                done = threading.Event()
                t0 = time.perf_counter()
                fut = clients[tool].call_async(CallTool.Request(args=args))
                fut.add_done_callback(lambda _f: done.set())
                if not done.wait(5.0):
                    raise TimeoutError(f"{tool} did not answer")
                dt = (time.perf_counter() - t0) * 1e3
                assert fut.result().success, fut.result().error
                if i >= 50:  # warm-up excluded
                    samples.append(dt)
        finally:
            client.close()
    a = np.array(samples)
    return {"tool_rtt_p50_ms": round(float(np.percentile(a, 50)), 3),
            "tool_rtt_p99_ms": round(float(np.percentile(a, 99)), 3),
            "tool_rtt_mean_ms": round(float(statistics.fmean(a)), 3),
            "tool_rtt_max_ms": round(float(a.max()), 3), "tool_rtt_calls": float(len(a))}


if __name__ == "__main__":
    write_figures("tool_rtt", main())
