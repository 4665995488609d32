"""safety_monitor as a node in a private Context, its world played by a small fake of sim_world
(sim/get_ground_truth and robot_state over a SimWorld of the house, no rendering): constraints
in English and LTL with every error named and the set kept, verdicts with the state change and
the corrective re-prompt, violations published, the trace following the observed world, a
constraints file loaded on the first world state, and the issue detector's pre-check."""
from __future__ import annotations

import json

import pytest
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from raider_ros.common.paths import scenes_dir
from raider_ros.msg import RobotState, SafetyViolation, StateSummary as StateSummaryMsg
from raider_ros.nodes.safety_monitor import SafetyMonitorNode
from raider_ros.ros.qos import LATCHED
from raider_ros.ros.spin import StartupError
from raider_ros.ros.state_summary import SUMMARY_QOS, TOPIC
from raider_ros.sim.scene import load_scene
from raider_ros.sim.world import SimWorld
from raider_ros.srv import (
    AddConstraint, CheckAction, CheckPlan, FollowStep, GetGroundTruth, ListConstraints, RemoveConstraint, ResetMonitor,
)
from support.ros import call, params, private_context, spinning, wait_until

HOUSE = load_scene(scenes_dir() / "house.scene.yaml")


class FakeWorld(Node):
    def __init__(self, context):
        super().__init__("fake_world", context=context)
        self.world = SimWorld(HOUSE)
        self.truth_calls = 0
        self.pub = self.create_publisher(RobotState, "robot_state", LATCHED)
        self.create_service(GetGroundTruth, "sim/get_ground_truth", self._truth, callback_group=ReentrantCallbackGroup())
        self.announce()

    def announce(self):
        self.pub.publish(RobotState(world_version=self.world.version, scene="house"))

    def do(self, skill, *args):
        r = self.world.execute(skill, list(args))
        assert r.success, r.message
        self.announce()

    def _truth(self, _req, res):
        self.truth_calls += 1
        truth = self.world.truth()
        res.success, res.truth_json = True, json.dumps(truth)
        res.robot.world_version = self.world.version
        return res


class Client(Node):
    def __init__(self, context):
        super().__init__("safety_client", context=context)
        self.violations: list[SafetyViolation] = []
        self.create_subscription(SafetyViolation, "safety_monitor/violations", self.violations.append, 20)
        self.summaries: list[StateSummaryMsg] = []
        self.create_subscription(StateSummaryMsg, TOPIC, self.summaries.append, SUMMARY_QOS)
        mk = self.create_client
        self.add = mk(AddConstraint, "safety_monitor/add_constraint")
        self.remove = mk(RemoveConstraint, "safety_monitor/remove_constraint")
        self.list = mk(ListConstraints, "safety_monitor/list_constraints")
        self.check = mk(CheckAction, "safety_monitor/check_action")
        self.plan = mk(CheckPlan, "safety_monitor/check_plan")
        self.follow = mk(FollowStep, "safety_monitor/follow")
        self.reset = mk(ResetMonitor, "safety_monitor/reset")

    def ready(self):
        return wait_until(lambda: call(self.list, ListConstraints.Request()).has_state, timeout=30,
                          what="the monitor's first world state")


@pytest.fixture
def graph():
    with private_context() as ctx:
        world, client = FakeWorld(ctx), Client(ctx)
        monitor = SafetyMonitorNode(context=ctx, parameter_overrides=params(constraints_file="living_room_first"))
        with spinning(ctx, world, monitor, client, threads=6):
            client.ready()
            yield world, monitor, client


def test_the_constraints_file_is_loaded_on_the_first_world_state(graph):
    _, _, c = graph
    r = call(c.list, ListConstraints.Request())
    assert [(x.ltl, x.text, x.status) for x in r.constraints] == [
        ("!agent_at(bathroom) U agent_at(living_room)", "You have to enter the living room before the bathroom.", "pending")]
    assert r.translator == "rules (no LLM)" and r.load_error == "" and r.session


def test_add_in_english_and_ltl_then_remove(graph):
    _, _, c = graph
    a = call(c.add, AddConstraint.Request(text="Never turn on the stove."))
    assert a.success and a.constraint.ltl == "G !turn_on(stove)" and "stove" in a.constraint.english
    assert a.constraint.source == "rules (no LLM)"
    b = call(c.add, AddConstraint.Request(ltl="G !pick(knife)", text="Never pick up the knife."))
    assert b.success and b.constraint.source == "ltl"
    assert len(call(c.list, ListConstraints.Request()).constraints) == 3
    r = call(c.remove, RemoveConstraint.Request(id=a.constraint.id))
    assert r.success and [x.id for x in r.removed] == [a.constraint.id]
    r = call(c.remove, RemoveConstraint.Request(id=99))
    assert not r.success and "no constraint #99" in r.message


@pytest.mark.parametrize("req, words", [
    ({"ltl": "G (agent_at(bathroom)"}, ["column"]),
    ({"ltl": "G !hovering(robot)"}, ["unknown predicate 'hovering'"]),
    ({"text": "Please be careful with the cat."}, ["cannot translate"]),
    ({"ltl": "G !agent_at(living_room)"}, ["no sequence of states can satisfy",
                                           "You have to enter the living room before the bathroom."]),
])
def test_each_bad_constraint_is_an_error_naming_it_and_the_set_stays(graph, req, words):
    _, _, c = graph
    r = call(c.add, AddConstraint.Request(**req))
    assert not r.success and all(w in r.message for w in words), r.message
    assert len(call(c.list, ListConstraints.Request()).constraints) == 1


def test_check_action_is_unsafe_with_the_state_change_and_is_published(graph):
    _, _, c = graph
    r = call(c.check, CheckAction.Request(action="move_to(Toilet_1)"))
    assert r.verdict == "unsafe" and r.violated_text == ["You have to enter the living room before the bathroom."]
    assert r.state_safe == "!agent_at(bathroom) & !agent_at(living_room)"
    assert r.state_violated == "agent_at(bathroom) & !agent_at(living_room)"
    assert "Invalid action: move_to(Toilet_1)" in r.corrective_prompt and "(LTL: " in r.corrective_prompt
    v = wait_until(lambda: [m for m in c.violations if m.action == "move_to(Toilet_1)"], what="a violation message")
    assert v[0].executed is False and list(v[0].violated_text) == list(r.violated_text)
    assert call(c.check, CheckAction.Request(action="move_to(Sofa_1)")).verdict == "safe"
    bad = call(c.check, CheckAction.Request(action="teleport(Toilet_1)"))
    assert bad.verdict == "error" and "unknown skill 'teleport'" in bad.error


def test_check_plan_and_a_given_state(graph):
    _, _, c = graph
    r = call(c.plan, CheckPlan.Request(steps=["move_to(Bed_1)", "move_to(Toilet_1)"]))
    assert r.verdict == "unsafe" and r.first_unsafe_step == 1 and r.action == "move_to(Toilet_1)"
    ok = call(c.plan, CheckPlan.Request(steps=["move_to(living_room)", "move_to(Toilet_1)"]))
    assert ok.verdict == "safe" and ok.first_unsafe_step == -1 and len(ok.automaton_states) == 1
    # a given world is what the step is predicted from (the automata stay as the trace left them)
    w = SimWorld(HOUSE)
    w.apply_setup({"remove": ["Toilet_1"]}, reset=False)
    there = call(c.check, CheckAction.Request(action="move_to(Toilet_1)", state_json=json.dumps(w.truth())))
    assert there.verdict == "error" and "nothing called 'Toilet_1'" in there.error
    assert call(c.check, CheckAction.Request(action="move_to(Sink_1)", state_json=json.dumps(w.truth()))).verdict == "unsafe"
    broken = call(c.check, CheckAction.Request(action="move_to(Toilet_1)", state_json="{not json"))
    assert broken.verdict == "error" and "state_json" in broken.error


def test_the_trace_follows_the_observed_world_and_resets(graph):
    world, _, c = graph
    world.do("move_to", "living_room")
    f = call(c.follow, FollowStep.Request(action="move_to(living_room)", observe=True))
    assert f.verdict == "safe" and f.observed and f.trace_length == 1
    assert call(c.check, CheckAction.Request(action="move_to(Toilet_1)")).verdict == "safe"
    world.do("move_to", "kitchen")
    assert call(c.follow, FollowStep.Request(action="move_to(kitchen)", observe=True)).trace_length == 2
    assert call(c.check, CheckAction.Request(action="move_to(Toilet_1)")).verdict == "safe"   # still remembered
    assert call(c.reset, ResetMonitor.Request()).success               # a new trace starts in the kitchen
    assert call(c.check, CheckAction.Request(action="move_to(Toilet_1)")).verdict == "unsafe"


def test_a_bad_constraints_file_stops_the_node_with_the_reason(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("format: raider-constraints/1\nconstraints: [{colour: red}]\n")
    with private_context() as ctx:
        with pytest.raises(StartupError, match=r"constraints\[0\].*'colour'"):
            SafetyMonitorNode(context=ctx, parameter_overrides=params(constraints_file=str(bad)))
        with pytest.raises(StartupError, match="no such constraints file"):
            SafetyMonitorNode(context=ctx, parameter_overrides=params(constraints_file="no_such_rules"))


def test_the_issue_detector_reports_a_forbidden_action_as_unfeasibility_citing_the_rule():
    from raider_ros.nodes.issue_detector import IssueDetectorNode
    from raider_ros.srv import DetectIssue
    with private_context() as ctx:
        world, client = FakeWorld(ctx), Client(ctx)
        monitor = SafetyMonitorNode(context=ctx, parameter_overrides=params(constraints_file="living_room_first"))
        detector = IssueDetectorNode(context=ctx, parameter_overrides=params(fresh_frame_timeout_s=0.0, time_limit_s=5.0))
        ask = client.create_client(DetectIssue, "detect_issue")
        with spinning(ctx, world, monitor, client, detector, threads=8):
            client.ready()
            wait_until(lambda: detector.safety.check_action_client.service_is_ready(), what="the detector to see the monitor")
            r = call(ask, DetectIssue.Request(query="approach(toilet)", context=""), timeout=30)
            assert r.status == "ok" and r.issue == "unfeasibility" and r.backend.endswith("+ safety_monitor")
            assert '"You have to enter the living room before the bathroom."' in r.explanation
            assert r.tool_calls == 0
            # an allowed action, and a request in words, are the agent's (here without tools: an error)
            for q in ("approach(sofa)", "go to the toilet"):
                r = call(ask, DetectIssue.Request(query=q, context=""), timeout=30)
                assert "safety_monitor" not in r.backend, (q, r.backend, r.explanation)


def test_its_state_summary_follows_constraints_and_refused_actions(graph):
    """state/summaries (for state_qa): the constraints with their status, and an action it refused."""
    _, _, c = graph

    def latest():
        mine = [m for m in c.summaries if m.module == "safety_monitor"]
        return {f.key: f.value for f in mine[-1].facts} if mine else {}

    wait_until(lambda: "enter the living room before the bathroom" in latest().get("constraints", ""),
               timeout=30, what="the summary with the constraints file's rule")
    assert latest()["blocked_actions"] == "none" and latest()["violations"] == "none"
    assert call(c.check, CheckAction.Request(action="move_to(Toilet_1)")).verdict == "unsafe"
    wait_until(lambda: latest().get("blocked_actions", "").startswith("move_to(Toilet_1) (breaks: You have to enter"),
               timeout=30, what="the summary with the refused action")
