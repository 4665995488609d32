"""Safety Chip figures: the core in process, and the safety_monitor node's check_action over ROS.

* ``ltl_compile_ms_p50`` / ``_p95`` / ``_max``: compiling each distinct gold formula of the
  safety benchmark (data/safety/benchmark) to its automaton with MONA, cold (cache off),
  ``--runs`` times each; ``ltl_compile_cached_us_p50``: the same through the in-memory cache.
* ``monitor_check_ms_p50`` / ``_p95`` (20 constraints): SafetyMonitor.check_action on the house
  scene (predict the state, evaluate the atoms, step 20 automata), over a set of steps;
  ``monitor_plan_step_ms_mean``: check_plan of a 4-step plan, per step.
* ``safety_check_ms_p50`` / ``_p95`` / ``_p99_20_constraints``: round trip of the
  ``safety_monitor/check_action`` service over ROS (the node in its own process, 20 constraints,
  its world from a small truth server in this process, no rendering), after a warm-up; the
  client waits on each answer before sending the next (``--ros-calls`` calls; ``--no-ros`` skips).
* ``monitor_accuracy``: benchmark plan cases whose verdict (first unsafe step, violated
  constraints, pending obligations) equals ``expected``, with the gold formulas.
* ``translation_accuracy_rules_batch<N>``: the rules translator's formulas equivalent (by
  automata) to the gold ones, per batch of sentences; batch 1 and 2 are dev figures (the
  translator was tuned on their failures), batches 3 and 4 were written after its last change
  (held out). See docs/safety.md for the history.

Run: ``python bench/bench_safety.py [--runs N] [--ros-calls N] [--no-ros]``; writes bench/results/safety.json.
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
    ap.add_argument("--ros-calls", type=int, default=500)
    ap.add_argument("--no-ros", action="store_true", help="skip the check_action round trip over ROS")
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
    batches = sorted(int(k[len("batch"):-len("_accuracy")]) for k in tr
                     if k.startswith("batch") and k.endswith("_accuracy"))
    for b in batches:
        figures[f"translation_sentences_batch{b}"] = tr[f"batch{b}_sentences"]
        figures[f"translation_accuracy_rules_batch{b}"] = tr[f"batch{b}_accuracy"]
    figures["translation_untranslated"] = tr["untranslated"]
    if not args.no_ros:
        figures.update(ros_check_times(args.ros_calls))
    write_figures("safety", figures)


def ros_check_times(calls: int) -> dict:
    """check_action over ROS with the 20 constraints (see the module docstring)."""
    import json
    import os
    import random
    import threading

    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    from raider_ros.msg import RobotState
    from raider_ros.ros.graph import NodeGraph
    from raider_ros.ros.qos import LATCHED
    from raider_ros.sim.world import SimWorld
    from raider_ros.srv import AddConstraint, CheckAction, GetGroundTruth, ListConstraints

    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))
    world = SimWorld(load_scene(scenes_dir() / "house.scene.yaml"))
    ctx = Context()
    rclpy.init(context=ctx)
    node = Node("bench_safety", context=ctx)
    pub = node.create_publisher(RobotState, "robot_state", LATCHED)

    def truth(_req, res):
        res.success, res.truth_json = True, json.dumps(world.truth())
        res.robot.world_version = world.version
        return res
    node.create_service(GetGroundTruth, "sim/get_ground_truth", truth)
    pub.publish(RobotState(world_version=world.version, scene="house"))
    executor = SingleThreadedExecutor(context=ctx)
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()

    def call(client, req, timeout=30.0):
        done = threading.Event()
        fut = client.call_async(req)
        fut.add_done_callback(lambda _f: done.set())
        if not done.wait(timeout):
            raise TimeoutError(f"{client.srv_name}: no answer within {timeout} s")
        return fut.result()

    out = {}
    try:
        with NodeGraph() as graph:
            graph.start("safety_monitor")
            lst = node.create_client(ListConstraints, "safety_monitor/list_constraints")
            add = node.create_client(AddConstraint, "safety_monitor/add_constraint")
            chk = node.create_client(CheckAction, "safety_monitor/check_action")
            for c in (lst, add, chk):
                if not c.wait_for_service(timeout_sec=60):
                    raise TimeoutError(f"{c.srv_name} did not come up")
            end = time.monotonic() + 60
            while not call(lst, ListConstraints.Request()).has_state:
                graph.check_alive()
                if time.monotonic() > end:
                    raise TimeoutError("safety_monitor got no world state")
                time.sleep(0.2)
            for f in TWENTY:
                r = call(add, AddConstraint.Request(ltl=f))
                if not r.success:
                    raise RuntimeError(f"{f}: {r.message}")
            for k in range(50):                                    # warm-up
                call(chk, CheckAction.Request(action=STEPS[k % len(STEPS)]))
            times = []
            for k in range(calls):
                t0 = time.perf_counter()
                r = call(chk, CheckAction.Request(action=STEPS[k % len(STEPS)]))
                times.append((time.perf_counter() - t0) * 1000)
                if r.verdict == "error":
                    raise RuntimeError(f"check_action: {r.error}")
        out["safety_check_calls"] = len(times)
        out["safety_check_constraints"] = len(TWENTY)
        out["safety_check_ms_p50"] = round(pct(times, 0.5), 3)
        out["safety_check_ms_p95"] = round(pct(times, 0.95), 3)
        out["safety_check_ms_p99_20_constraints"] = round(pct(times, 0.99), 3)
    finally:
        executor.shutdown(timeout_sec=2.0)
        node.destroy_node()
        ctx.try_shutdown()
    return out


if __name__ == "__main__":
    main()
