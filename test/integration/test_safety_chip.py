"""The Safety Chip over DDS: plan_executor, safety_monitor, recovery_planner and sim_world as
processes (the issue check is a test-side fake that finds no issue, so what is measured is the
safety layer). An unsafe step is pruned and re-planned with corrective re-prompts, as in the
paper's example, and nothing unsafe reaches the robot; with the monitor gone, nothing at all does."""
from __future__ import annotations

import contextlib
import threading
import time

import pytest
from rclpy.callback_groups import ReentrantCallbackGroup

from raider_ros.action import ExecuteTask
from raider_ros.msg import SafetyViolation
from raider_ros.ros.graph import NodeGraph
from raider_ros.srv import ApplySetup, DetectIssue, GetGroundTruth, ListConstraints
from support.graph import GraphClient


class Detections:
    """detect_issue in the test process: no issue, no grounding (the step's own ids are used)."""

    def __init__(self, node):
        self.queries: list[str] = []
        node.create_service(DetectIssue, "detect_issue", self._on, callback_group=ReentrantCallbackGroup())

    def _on(self, req, res):
        self.queries.append(req.query)
        res.status, res.issue, res.explanation = "ok", "none", "no issue (test fake)"
        return res


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    with contextlib.ExitStack() as stack:
        graph = stack.enter_context(NodeGraph(tmp_path_factory.mktemp("logs")))
        graph.start("sim_world", {"scene": "house", "skill_duration_s": 0.1})
        graph.start("safety_monitor", {"constraints_file": "paper_example"})
        graph.start("recovery_planner")
        graph.start("plan_executor", {"safety": True})
        client = stack.enter_context(GraphClient(graph, name="safety_client"))
        detections = Detections(client.node)
        violations: list[SafetyViolation] = []
        client.node.create_subscription(SafetyViolation, "safety_monitor/violations", violations.append, 50)
        end = time.monotonic() + 90
        while not client.call(ListConstraints, "safety_monitor/list_constraints", timeout=60).has_state:
            graph.check_alive()
            assert time.monotonic() < end, "safety_monitor got no world state"
            time.sleep(0.3)
        yield graph, client, detections, violations


def run_task(client, graph, timeout=120.0, **goal):
    ac = client.action_client(ExecuteTask, "execute_task")
    assert ac.wait_for_server(timeout_sec=60)
    feedback: list[str] = []
    handle_future = ac.send_goal_async(ExecuteTask.Goal(**goal),
                                       feedback_callback=lambda m: feedback.append(f"{m.feedback.stage}: {m.feedback.message}"))
    done = threading.Event()
    handle_future.add_done_callback(lambda _f: done.set())
    assert done.wait(30), "execute_task did not accept the goal"
    result_future = handle_future.result().get_result_async()
    end = time.monotonic() + timeout
    while not result_future.done():
        graph.check_alive()
        assert time.monotonic() < end, f"the task did not finish within {timeout} s: {feedback[-5:]}"
        time.sleep(0.1)
    return result_future.result().result, feedback


def robot_room(client) -> str:
    import json
    from raider_ros.sim.scene import parse_scene
    truth = json.loads(client.call(GetGroundTruth, "sim/get_ground_truth").truth_json)
    truth.pop("version", None)
    scene = parse_scene(truth, "truth")
    return scene.room_at(scene.robot.x, scene.robot.y)


def test_an_unsafe_step_is_pruned_and_replanned_and_nothing_unsafe_runs(env):
    graph, client, detections, violations = env
    res, feedback = run_task(client, graph, domain="house", plan=["(approach start bathroom sink)"])
    log = "\n".join(res.step_log)
    assert res.success, res.message + "\n" + log
    assert "pruned move_to(Sink_1) (unsafe)" in log and "pruned move_to(living_room) (unsafe)" in log
    assert any(f.startswith("recovering: safe re-plan 2/3: move_to(bedroom); move_to(living_room); move_to(Sink_1)")
               for f in feedback), feedback
    assert robot_room(client) == "bathroom"
    assert detections.queries == ["approach(Sink_1)"]          # the issue check only saw the step once it was safe
    time.sleep(0.5)
    assert {v.action for v in violations if not v.executed} >= {"move_to(Sink_1)", "move_to(living_room)"}
    assert [v.action for v in violations if v.executed] == []


def test_a_planned_task_goes_around_the_rules(env):
    graph, client, detections, violations = env
    assert client.call(ApplySetup, "sim/apply_setup", setup_yaml="{}", reset=True).success   # back in the kitchen
    res, feedback = run_task(client, graph, domain="house", problem=problem_with_goal("(at toilet)"))
    assert res.success, res.message + "\n" + "\n".join(res.step_log)
    notes = [f for f in feedback if f.startswith("planning: the first plan")]
    assert notes and "re-planned around it" in notes[0], feedback
    assert any("plan of 4 steps: (go start bedroom) (go bedroom living_room) (go living_room bathroom)" in f
               for f in feedback), feedback
    assert robot_room(client) == "bathroom"
    assert [v.action for v in violations if v.executed] == []


def test_a_task_that_starts_in_violation_is_refused(env):
    graph, client, detections, violations = env
    # the robot stands in the bathroom: a new trace starts there, and "the living room before the
    # bathroom" can no longer hold on it
    res, _ = run_task(client, graph, domain="house", plan=["(approach start bathroom sink)"])
    assert not res.success and res.steps_done == 0 and "already violates" in res.message, res.message


def problem_with_goal(goal: str) -> str:
    from raider_ros.common.paths import data_dir
    text = (data_dir() / "pddl" / "house" / "problem.pddl").read_text()
    return text[:text.index("(:goal")] + f"(:goal {goal}))\n"


def test_without_the_monitor_nothing_is_dispatched(env):
    graph, client, detections, violations = env
    graph.stop("safety_monitor")
    before = client.call(GetGroundTruth, "sim/get_ground_truth").robot.world_version
    res, feedback = run_task(client, graph, domain="house", plan=["(approach start living_room sofa)"])
    assert not res.success and "safety_monitor/reset is not available" in res.message and res.steps_done == 0, res.message
    assert client.call(GetGroundTruth, "sim/get_ground_truth").robot.world_version == before
