"""Faults mid-task (issue 11): every node of the table test/support/faults.py FAULTS is SIGKILLed
in turn while the plan executor runs a task, then started again (as respawn does) and the task
run once more - what test/integration/test_faults.py checks, here with the figures. Prints and
writes bench/results/faults.json:

- killed_node_false_successes: runs reported successful while the simulator shows the robot
  not at the counter, over the killed runs and the runs after the restart (target 0)
- killed_node_unnamed_reasons: aborts whose reason names none of the failed node's words
- killed_node_no_result: runs that ended without any result within the deadline
- killed_node_recovered: nodes after whose restart the task ran to the end
- time_to_reason_s_<node>: from the SIGKILL to the executor's result
- killed_node_time_to_reason_max_s
- killed_node_expectation_failures: rows whose own expectation failed: a node the task can do
  without (memory, state_qa) that ended it, a dead safety monitor after which the task succeeded
  or the robot still moved to the counter, ask_robot not answering after state_qa's restart
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

from raider_ros.ros.graph import NodeGraph  # noqa: E402
from support.faults import (DEADLINE_S, FAULTS, SETUP, ask_robot, fresh_world, run_task,  # noqa: E402
                            start_graph, task_done, use_executor, wait_ready)
from support.graph import GraphClient  # noqa: E402
from figures import write_figures  # noqa: E402

# a ROS domain of its own, so that other graphs on the machine never answer in its place
os.environ.setdefault("ROS_DOMAIN_ID", str(random.Random(os.getpid()).randint(1, 100)))


def main(only: list[str] | None = None) -> dict:
    faults = [f for f in FAULTS if not only or f.node in only]
    false_successes = unnamed = no_result = recovered = expectation = 0
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench_faults_") as tmp, NodeGraph(Path(tmp) / "logs") as graph:
        start_graph(graph, Path(tmp))
        client = GraphClient(graph, name="bench_faults_client")
        try:
            client.wait_refreshed(client.apply(SETUP), timeout=120)
            for fault in faults:
                use_executor(graph, client, fault)
                fresh_world(client)
                run = run_task(client, DEADLINE_S + 60, kill=lambda f=fault: graph.kill(f.node), at=fault.at)
                # judged with the node back: the client's calls check that every node is alive
                graph.restart(fault.node)
                wait_ready(client, fault)
                if run.success is None:
                    no_result += 1
                elif run.success:
                    false_successes += not task_done(client)
                elif not any(w in run.message for w in fault.reason):
                    unnamed += 1
                if fault.expect == "success" and not (run.success and task_done(client)):
                    expectation += 1
                if fault.expect == "refused" and (run.success or task_done(client)):
                    expectation += 1
                if run.time_to_reason_s is not None:
                    times[fault.node] = round(run.time_to_reason_s, 2)
                print(f"{fault.node}: killed at {fault.at}; success={run.success} after "
                      f"{run.time_to_reason_s if run.time_to_reason_s is None else round(run.time_to_reason_s, 1)} s: "
                      f"{run.message[:160]}", flush=True)
                fresh_world(client)
                again = run_task(client, 240)
                if again.success:
                    false_successes += not task_done(client)
                    recovered += task_done(client)
                print(f"{fault.node}: after the restart success={again.success}: {again.message[:120]}", flush=True)
                if fault.after == "ask_robot":
                    reply = ask_robot(client)
                    expectation += not (reply.status in ("ok", "partial") and reply.answer.strip())
                    print(f"{fault.node}: ask_robot after the restart: {reply.status}: {reply.answer[:120]}", flush=True)
        finally:
            client.close()
    figures = {"killed_nodes": float(len(faults)),
               "killed_node_false_successes": float(false_successes),
               "killed_node_unnamed_reasons": float(unnamed),
               "killed_node_no_result": float(no_result),
               "killed_node_recovered": float(recovered),
               "killed_node_expectation_failures": float(expectation),
               "killed_node_time_to_reason_max_s": max(times.values(), default=float("nan"))}
    figures.update({f"time_to_reason_s_{n}": t for n, t in times.items()})
    figures["load_average_1min"] = round(os.getloadavg()[0], 2)
    return figures


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", help="node names of the table to kill (default: all)")
    write_figures("faults", main(ap.parse_args().only))
