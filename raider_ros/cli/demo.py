"""make demo: RAIDER's assistive scenario (paper Fig. 17), a kitchen task, the Safety Chip and learning from a correction, run on the node graph.

Task 1 - deliver a medicine to a person (scene assistive_room, PDDL domain "assistive"): a chair
blocks the way and the person moves it when asked; two medicines -> the robot asks which ->
"the one closest to the plant"; it is out of reach -> the person brings it closer; the person
is not recognised -> the robot says so and she says who she is; she is not looking -> the robot
asks for her attention; the handover succeeds. Then the demo asks the robot about its own
state ("Why did you stop before the table?", ...; state_qa's ask_robot) and prints the answers
with the modules they came from.
Task 2 - slice the tomato while the robot holds an egg (scene kitchen_task, domain "kitchen").
Task 3 - the Safety Chip (scene house, four rooms, domain "house"), the paper's example: a person
gives the rules "You have to enter the living room before the bathroom." and "You have to enter
the bedroom before going into the living room." and asks the robot to go to the bathroom sink;
the direct move is pruned before it runs, the executor re-plans with corrective re-prompts
(through the living room - pruned again: the bedroom first), and no unsafe step is dispatched.
Task 4 - learning from interaction (ARMAR-6; data/memory/demo_learning.yaml, scene
assistive_learning): "Please bring me my medicine." is planned from the memory's seed example;
afterwards Adriana says "next time, bring me a glass of water with my medicine"; the memory node
learns it. The next day, asked in other words, the robot brings the medicine and the glass
without being told; "Please bring me the book." is carried out as before.

Offline it uses the rules backend (no LLM) and a scripted person. With an endpoint configured
(RAIDER_LLM_BASE_URL and/or OPENAI_API_KEY; model from RAIDER_LLM_MODEL) the issue checks and
recovery plans come from that LLM instead. Prints a narrated trace; exit status 0 on success.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shlex
import sys
import threading
import time

from raider_ros.ros.actions import ActionClient
from std_msgs.msg import String

from raider_ros.action import ExecuteTask
from raider_ros.human.naming import PersonNames
from raider_ros.msg import SceneGraphStatus
from raider_ros.ros.graph import NodeGraph
from raider_ros.ros.qos import LATCHED
from raider_ros.ros.state_questions import ask_about_state, demo_questions

TASKS = {
    "assistive": {"title": "Deliver Adriana's medicine (paper Fig. 17)", "scene": "assistive_room",
                  "scenario": "assistive_demo", "toolset": "assistive", "domain": "assistive"},
    "kitchen": {"title": "Slice the tomato while holding an egg", "scene": "kitchen_task",
                "scenario": "kitchen_demo", "toolset": "household", "domain": "kitchen"},
    "safety": {"title": "Go to the bathroom sink, with a house rule (Safety Chip)", "scene": "house",
               "scenario": None, "toolset": "household", "domain": "house",
               "plan": ["(approach start bathroom sink)"],          # the person's request, as one step
               "rules": ["You have to enter the living room before the bathroom.",          # the paper's example
                         "You have to enter the bedroom before going into the living room."]},
}
PERCEPTION = ("object_detector", "depth_distance", "spatial_relations")
# the robot's side of the graph: what --robot-prefix starts on the other host
ROBOT_SIDE = ("sim_world", *PERCEPTION, "scene_graph")


def robot_placement(robot_prefix: str | None) -> dict[str, list[str]]:
    """NodeGraph placement that starts the robot's side through ``robot_prefix`` (a command
    such as ``ip netns exec robot``); the rest of the graph runs here."""
    if not robot_prefix:
        return {}
    cmd = shlex.split(robot_prefix)
    return {name: cmd for name in ROBOT_SIDE}


def llm_params() -> dict:
    """The rules backend offline; an OpenAI-compatible LLM when RAIDER_LLM_BASE_URL or
    OPENAI_API_KEY is set (the nodes read RAIDER_LLM_BASE_URL / RAIDER_LLM_MODEL themselves)."""
    if not (os.environ.get("RAIDER_LLM_BASE_URL") or os.environ.get("OPENAI_API_KEY")):
        return {"backend": "rules"}
    return {"backend": "openai"}


class Narrator:
    """Prints what happens, in order, as a person would follow it."""

    def __init__(self):
        self.lock = threading.Lock()
        self.t0 = time.monotonic()

    def __call__(self, who: str, text: str) -> None:
        with self.lock:
            print(f"[{time.monotonic() - self.t0:6.1f}s] {who:<9} {text}", flush=True)


@contextlib.contextmanager
def demo_node():
    """The demo's own node in a private context, spun by two threads; shut down on leaving."""
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.node import Node

    ctx = Context()
    rclpy.init(context=ctx)
    node = Node("demo", context=ctx)
    executor = MultiThreadedExecutor(num_threads=2, context=ctx)
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()
    try:
        yield node
    finally:
        executor.shutdown(timeout_sec=2.0)
        node.destroy_node()
        ctx.try_shutdown()


def _run(key: str, timeout: float, log_dir: str | None, robot_prefix: str | None = None) -> bool:

    task = TASKS[key]
    llm = llm_params()
    say = Narrator()
    print(f"\n=== {task['title']} ===  (issue checks: {llm['backend'] if llm['backend'] != 'rules' else 'rules (no LLM)'}"
          f", person: scripted)", flush=True)
    with NodeGraph(log_dir, placement=robot_placement(robot_prefix)) as graph:
        graph.start("sim_world", {"scene": task["scene"], "skill_duration_s": 0.3})
        for name in PERCEPTION:
            graph.start(name)
        graph.start("scene_graph", {"preload_user_info": False})
        graph.start("issue_detector", {"toolset": task["toolset"], **llm})
        graph.start("recovery_planner", {"backend": llm["backend"], **({k: v for k, v in llm.items() if k != "backend"})})
        if task["scenario"]:
            graph.start("human_interface", {"backend": "scripted", "scenario": task["scenario"]})
        rules = task.get("rules", [])
        if rules:
            graph.start("safety_monitor")
        graph.start("plan_executor", {"safety": bool(rules)})
        questions = demo_questions(key)          # about the robot's state, after the task
        with demo_node() as node:
            names, ready = watch_graph(node, say)
            client = ActionClient(node, ExecuteTask, "execute_task")
            end = time.monotonic() + 60
            while not (client.wait_for_server(timeout_sec=0.5) and ready.is_set()):
                graph.check_alive()
                if time.monotonic() > end:
                    raise TimeoutError("the node graph did not come up within 60 s (perception or plan_executor)")
            prevented, executed = [], []
            if rules:
                from raider_ros.msg import SafetyViolation
                node.create_subscription(SafetyViolation, "safety_monitor/violations",
                                         lambda m: (executed if m.executed else prevented).append(m.action), 50)
                _add_rules(node, rules, say, graph)
            say("READY", "simulated world, perception, issue detector, planner, " +
                ("person and executor" if task["scenario"] else "Safety Chip and executor") + " are up")
            last = {"stage": None}

            def on_feedback(m):
                f = m.feedback
                if f.stage == "planning" or (f.stage, f.message) != last["stage"]:
                    last["stage"] = (f.stage, f.message)
                    who = {"planning": "PLAN", "checking": "CHECK", "issue": "ISSUE", "recovering": "RECOVER",
                           "executing": "ROBOT", "done": "DONE"}.get(f.stage, f.stage.upper())
                    step = f"step {f.step_index + 1} " if f.step_index >= 0 else ""
                    # plans and queries are shown as written; what the robot does and finds, as a person says it
                    text = f.message if f.stage in ("planning", "checking", "recovering") else \
                        _by_type(names["now"].rewrite(f.message, capitalise=False))
                    say(who, f"{step}{text}")

            goal_future = client.send_goal_async(ExecuteTask.Goal(domain=task["domain"], plan=task.get("plan", [])),
                                                 feedback_callback=on_feedback)
            result_future = None
            while result_future is None or not result_future.done():
                time.sleep(0.2)
                graph.check_alive()
                if result_future is None and goal_future.done():
                    handle = goal_future.result()
                    if not handle.accepted:
                        raise RuntimeError("plan_executor refused the task")
                    result_future = handle.get_result_async()
                if time.monotonic() - say.t0 > timeout:
                    raise TimeoutError(f"the task did not finish within {timeout:.0f} s")
            res = result_future.result().result
            say("RESULT", f"{'success' if res.success else 'FAILED'}: {res.message} "
                          f"({res.steps_done}/{res.steps_total} steps)")
            if questions:   # started now: its model loading does not compete with the task for the CPU;
                graph.start("state_qa")     # every module's latest summary is kept on the topic
                ask_about_state(node, questions, say, graph=graph)
            if rules:
                time.sleep(0.5)             # the last violations message, if any, is on its way
                say("SAFETY", f"{len(prevented)} unsafe action(s) pruned before they ran, "
                              f"{len(executed)} unsafe step(s) dispatched")
                return bool(res.success) and not executed
            return bool(res.success)


def _add_rules(node, rules, say, graph) -> None:
    """Give the Safety Chip the person's rules (translated to LTL and read back in English)."""
    from raider_ros.srv import AddConstraint
    client = node.create_client(AddConstraint, "safety_monitor/add_constraint")
    end = time.monotonic() + 60
    while not client.wait_for_service(timeout_sec=0.5):
        graph.check_alive()
        if time.monotonic() > end:
            raise TimeoutError("safety_monitor did not come up within 60 s")
    for text in rules:
        done = threading.Event()
        future = client.call_async(AddConstraint.Request(text=text))
        future.add_done_callback(lambda _f: done.set())
        if not done.wait(30):
            raise TimeoutError("safety_monitor/add_constraint did not answer within 30 s")
        r = future.result()
        if not r.success:
            raise RuntimeError(f"the Safety Chip refused the rule {text!r}: {r.message}")
        say("RULE", f'"{text}" -> {r.constraint.ltl}')
        say("RULE", f"(read back: {r.constraint.english})")


def _by_type(text: str) -> str:
    """Ids the scene graph has not named (not seen yet) said by their type: "Sink_1" -> "the sink"."""
    from raider_ros.human.naming import dedupe_words
    from raider_ros.recovery.rules_writer import type_word
    out = re.sub(r"\b[A-Z][A-Za-z]*_\d+\b", lambda m: "the " + type_word(m.group(0)), text)
    return dedupe_words(re.sub(r"\b([Tt]he) the\b", r"\1", out))


LEARNING = "learning"   # task 4, raider_ros/cli/demo_learning.py


def _learning(timeout: float, log_dir: str | None, robot_prefix: str | None = None) -> bool:
    from raider_ros.cli.demo_learning import run_learning
    return run_learning(timeout, log_dir, robot_prefix)


def watch_graph(node, say) -> tuple[dict, threading.Event]:
    """Narrate the dialogue; keep how people name the objects ({"now": PersonNames}, from the
    scene graph: "the medicine by the plant"); an event set once the scene graph has the truth."""
    node.create_subscription(String, "human/dialogue", lambda m: say(*_speaker(m.data)), 50)
    names = {"now": PersonNames()}

    def on_graph(m: String) -> None:
        try:
            names["now"] = PersonNames(json.loads(m.data).get("graph"))
        except (ValueError, AttributeError):
            pass
    node.create_subscription(String, "scene_graph/json", on_graph, LATCHED)
    ready = threading.Event()
    node.create_subscription(SceneGraphStatus, "scene_graph/status",
                             lambda m: ready.set() if m.truth_version >= 0 else None, LATCHED)
    return names, ready


def _speaker(line: str) -> tuple[str, str]:
    who, _, text = line.partition(": ")
    return who, text


def main(args=None) -> int:
    parser = argparse.ArgumentParser(description="RAIDER demo on the simulated household")
    parser.add_argument("--task", default="all",
                        help=f"all, or a comma-separated list of {', '.join([*TASKS, LEARNING])} (run in that order)")
    parser.add_argument("--timeout", type=float, default=150.0, help="seconds per task")
    parser.add_argument("--log-dir", help="keep each node's log here")
    parser.add_argument("--robot-prefix", metavar="CMD",
                        help="start the robot's side (sim_world, perception, scene_graph) through this command, "
                             "e.g. 'ip netns exec robot', the rest here: the graph across two hosts")
    ns = parser.parse_args(args)
    # a private ROS domain, unless one is chosen: the demo's graph never meets another graph
    # (a robot's, a test run's, or the remains of an earlier run still known to DDS)
    if "ROS_DOMAIN_ID" not in os.environ:
        os.environ["ROS_DOMAIN_ID"] = str(random.SystemRandom().randint(1, 100))
    print(f"(ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']})", flush=True)
    known = [*TASKS, LEARNING]
    keys = known if ns.task == "all" else [k.strip() for k in ns.task.split(",") if k.strip()]
    unknown = [k for k in keys if k not in known]
    if unknown or not keys:
        parser.error(f"--task: unknown task {', '.join(map(repr, unknown)) or '(none given)'}; "
                     f"choose all or from {', '.join(known)}")
    keys = [k for k in known if k in keys]
    ok = True
    for key in keys:
        try:
            ok = (_learning(ns.timeout, ns.log_dir, ns.robot_prefix) if key == LEARNING
                  else _run(key, ns.timeout, ns.log_dir, ns.robot_prefix)) and ok
        except (TimeoutError, RuntimeError) as exc:
            print(f"demo task {key} failed: {exc}", file=sys.stderr)
            ok = False
    print("\nDemo " + ("succeeded." if ok else "FAILED."), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
