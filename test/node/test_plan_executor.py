"""plan_executor, recovery_planner and human_interface as nodes in one private Context, with the
issue detector and the robot's skills played by scripted fakes: the exact number of calls to
detect_issue, plan_recovery, human/ask and each skill per scenario, and clear reasons for a
malformed PDDL file, an unsolvable problem, an action with no mapping and a dead skill server."""
from __future__ import annotations

from collections import Counter

import pytest
import yaml
from rclpy.action import ActionServer
from raider_ros.ros.actions import ActionClient
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import String

from raider_ros.action import ExecuteSkill, ExecuteTask
from raider_ros.nodes.human_interface import HumanInterfaceNode
from raider_ros.nodes.plan_executor import PlanExecutorNode
from raider_ros.nodes.recovery_planner import RecoveryPlannerNode
from raider_ros.srv import ApplySetup, DetectIssue
from support.ros import params, private_context, spinning, wait_future

SCENARIO = {
    "format": "raider-scenario/1", "name": "test", "scene": "assistive_room", "order": "any",
    "entries": [
        {"match": {"keywords": ["chair"]}, "answer": "Done, I moved it.",
         "world": {"objects": {"Chair_1": {"center": [1.2, 1.6, 0.45]}}}},
        {"match": {"keywords": ["medicine"], "any": ["which"]}, "answer": "The one by the plant."},
    ],
}


class FakeRobot(Node):
    """detect_issue answers from a script per query; execute_skill succeeds or fails as told;
    sim/apply_setup records the person's world changes."""

    def __init__(self, context, detections: dict, skill_fails: dict | None = None):
        super().__init__("fake_robot", context=context)
        self.detections = {q: list(v) for q, v in detections.items()}
        self.skill_fails = dict(skill_fails or {})
        self.calls: Counter = Counter()
        self.contexts: list[tuple[str, str]] = []
        self.world_changes: list[str] = []
        g = ReentrantCallbackGroup()
        self.create_service(DetectIssue, "detect_issue", self._detect, callback_group=g)
        self.create_service(ApplySetup, "sim/apply_setup", self._setup, callback_group=g)
        self.skills = ActionServer(self, ExecuteSkill, "execute_skill", self._skill, callback_group=g)

    def _detect(self, req, res):
        self.calls["detect_issue"] += 1
        self.contexts.append((req.query, req.context))
        script = self.detections.get(req.query) or [("none", "", [])]
        issue, explanation, grounding = script.pop(0) if len(script) > 1 else script[0]
        res.status, res.issue, res.explanation, res.grounding = "ok", issue, explanation, grounding
        return res

    def _setup(self, req, res):
        self.world_changes.append(req.setup_yaml)
        res.success = True
        return res

    def _skill(self, goal_handle):
        name = goal_handle.request.skill
        self.calls[f"skill:{name}"] += 1
        fails = self.skill_fails.get(name, 0)
        res = ExecuteSkill.Result()
        if fails:
            self.skill_fails[name] = fails - 1
            res.success, res.message = False, f"{name} failed: gripper slipped"
            goal_handle.abort()
        else:
            res.success, res.message = True, "ok"
            goal_handle.succeed()
        return res


class Counting(Node):
    """Counts the recovery planner's and the person's calls by listening to the dialogue."""

    def __init__(self, context):
        super().__init__("dialogue_listener", context=context)
        self.lines: list[str] = []
        self.create_subscription(String, "human/dialogue", lambda m: self.lines.append(m.data), 20)


def run_task(detections, skill_fails=None, goal=None, max_attempts=3, kill_skills=False, tmp_path=None):
    with private_context() as ctx:
        robot = FakeRobot(ctx, detections, skill_fails)
        planner = RecoveryPlannerNode(context=ctx)
        scenario = tmp_path / "scenario.yaml"
        scenario.write_text(yaml.safe_dump(SCENARIO))
        human = HumanInterfaceNode(context=ctx, parameter_overrides=params(backend="scripted", scenario=str(scenario)))
        # skill_timeout_s bounds the wait for the skill server to be discovered to a quarter of it:
        # 5 s gave 1.25 s, which DDS discovery overran on this loaded 2-core machine (the default is 60 s)
        executor = PlanExecutorNode(context=ctx, parameter_overrides=params(
            max_recovery_attempts=max_attempts, skill_timeout_s=20.0, detect_timeout_s=10.0))
        listener = Counting(ctx)
        client = Node("task_client", context=ctx)
        plan_calls: Counter = Counter()
        plan = planner.planner.plan

        def counted_plan(*args, **kwargs):
            plan_calls["plan_recovery"] += 1
            return plan(*args, **kwargs)
        planner.planner.plan = counted_plan
        if kill_skills:
            robot.skills.destroy()
        with spinning(ctx, robot, planner, human, executor, listener, client, threads=8):
            ac = ActionClient(client, ExecuteTask, "execute_task")
            assert ac.wait_for_server(timeout_sec=10)
            handle = wait_future(ac.send_goal_async(goal or ExecuteTask.Goal(domain="assistive")), 10)
            assert handle.accepted
            result = wait_future(handle.get_result_async(), 60).result
            asks = sum(1 for line in listener.lines if line.startswith("PERSON"))
            return result, robot.calls + plan_calls, asks, robot


def test_no_issue_runs_every_step_once(tmp_path):
    result, calls, asks, _ = run_task({}, tmp_path=tmp_path)
    assert result.success, result.message
    assert calls["detect_issue"] == 4 and calls["plan_recovery"] == 0 and asks == 0
    assert [calls[f"skill:{s}"] for s in ("move_to", "pick", "handover")] == [2, 1, 1]


def test_blocked_path_recovered_by_asking_the_person(tmp_path):
    result, calls, asks, robot = run_task({
        "approach(MedicineCounter_1)": [("unfeasibility", "The path to MedicineCounter_1 is blocked by Chair_1.",
                                         ["MedicineCounter_1"]), ("none", "", ["MedicineCounter_1"])]}, tmp_path=tmp_path)
    assert result.success, result.message
    assert calls["detect_issue"] == 5 and calls["plan_recovery"] == 1 and asks == 1
    assert calls["skill:move_to"] == 2 and calls["skill:pick"] == 1 and calls["skill:handover"] == 1
    assert len(robot.world_changes) == 1 and "Chair_1" in robot.world_changes[0]


def test_ambiguity_answer_travels_as_context_to_the_next_check(tmp_path):
    result, calls, asks, robot = run_task({
        "pick(medicine)": [("ambiguity", "Medicine_1 and Medicine_2 both match.", ["Medicine_1", "Medicine_2"]),
                           ("none", "", ["Medicine_1"])]}, tmp_path=tmp_path)
    assert result.success, result.message
    assert calls["detect_issue"] == 5 and calls["plan_recovery"] == 1 and asks == 1
    picks = [c for q, c in robot.contexts if q == "pick(medicine)"]
    assert picks == ["", "The one by the plant."]


def test_unrecoverable_issue_aborts_after_the_bound_with_the_explanation(tmp_path):
    result, calls, asks, _ = run_task({"approach(MedicineCounter_1)": [
        ("unfeasibility", "MedicineCounter_1 is not pickupable: it is fixed furniture.", ["MedicineCounter_1"])]},
        max_attempts=2, tmp_path=tmp_path)
    assert not result.success and "not pickupable" in result.message
    assert calls["detect_issue"] == 3 and calls["plan_recovery"] == 2
    assert sum(v for k, v in calls.items() if k.startswith("skill:")) == 0


def test_failing_skill_is_checked_and_retried(tmp_path):
    result, calls, asks, _ = run_task({}, skill_fails={"pick": 1}, tmp_path=tmp_path)
    assert result.success, result.message
    assert calls["skill:pick"] == 2 and calls["detect_issue"] == 5 and calls["plan_recovery"] == 1


@pytest.mark.parametrize("goal, reason", [
    (ExecuteTask.Goal(domain="(define (domain broken)\n  (:requirements :strips)\n  (:action a :parameters ()\n",
                      problem="(define (problem p) (:domain broken) (:init) (:goal (and)))"), "line"),
    (ExecuteTask.Goal(domain="assistive", problem="""(define (problem stuck) (:domain assistive)
        (:objects start medicine_counter - waypoint adriana - person medicine - item)
        (:init (robot-at start) (hand-empty)) (:goal (has adriana medicine)))"""), "unsolvable"),
    (ExecuteTask.Goal(domain="assistive", mapping="kitchen"), "mapping"),
])
def test_bad_tasks_end_with_a_clear_reason(goal, reason, tmp_path):
    result, calls, _, _ = run_task({}, goal=goal, tmp_path=tmp_path)
    assert not result.success and reason in result.message.lower(), result.message
    assert calls["detect_issue"] == 0


def test_dead_skill_server_ends_the_task_with_the_reason(tmp_path):
    result, calls, _, _ = run_task({}, kill_skills=True, tmp_path=tmp_path)
    assert not result.success and "execute_skill" in result.message, result.message
