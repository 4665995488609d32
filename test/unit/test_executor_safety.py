"""The executor with the Safety Chip (ROS-free): every skill is checked before dispatch, an unsafe
one is never dispatched, it is answered by corrective re-prompts (bounded), and a dead, silent,
confused or restarted monitor means nothing more is dispatched."""
from __future__ import annotations

import threading
from collections import Counter

from raider_ros.common.paths import scenes_dir
from raider_ros.evaluation.safety_run import LocalSafetyPorts
from raider_ros.executor.machine import DetectionOutcome, Executor, ExecutorConfig, Ports, SafetyVerdict
from raider_ros.executor.mapping import ExecStep
from raider_ros.recovery.plan import parse_plan
from raider_ros.recovery.planner import RecoveryPlanner
from raider_ros.safety import SafetyMonitor, SymbolicState
from raider_ros.safety.automata import Compiler
from raider_ros.safety.service import SafetyService
from raider_ros.sim.scene import load_scene
from raider_ros.sim.world import SimWorld

COMPILER = Compiler()
HOUSE = load_scene(scenes_dir() / "house.scene.yaml")
PAPER = [{"text": "you have to enter living room before bathroom", "ltl": "!agent_at(bathroom) U agent_at(living_room)"},
         {"text": "you have to enter bedroom before going into living room",
          "ltl": "!agent_at(living_room) U agent_at(bedroom)"}]


def step(target="Toilet_1", index=0, skill="move_to", query=None) -> ExecStep:
    return ExecStep(index=index, action="approach", pddl_args=("start", target.lower()),
                    query=query or f"approach({target.lower()})", skill=skill, params={"to": target},
                    arg_templates=("{to}",), ground=("to",))


class Robot:
    """The simulated world behind the skill port; records what was dispatched."""

    def __init__(self):
        self.world = SimWorld(HOUSE)
        self.sent: list[str] = []

    def skill(self, name, args, cancel):
        self.sent.append(f"{name}({', '.join(args)})")
        r = self.world.execute(name, args)
        return r.success, r.message

    def observe(self) -> SymbolicState:
        return SymbolicState.from_truth(self.world.truth())


def no_issue(query, context):
    return DetectionOutcome("none", "", [])


def chip(*constraints) -> SafetyService:
    m = SafetyMonitor(SymbolicState.from_scene(HOUSE), compiler=COMPILER)
    m.add_many(list(constraints))
    return SafetyService(m)


class Planner:
    def __init__(self, fixed: str | None = None):
        self.rules = RecoveryPlanner()
        self.fixed = fixed
        self.calls: list[tuple[str, str, str]] = []

    def __call__(self, query, issue, explanation, holding):
        self.calls.append((query, issue, explanation))
        return parse_plan(self.fixed) if self.fixed else self.rules.plan(query, issue, explanation, holding)


def run(steps, *, safety=None, planner=None, detect=no_issue, robot=None, **config):
    robot = robot or Robot()
    planner = planner or Planner()
    extra = safety if isinstance(safety, dict) else (LocalSafetyPorts(safety, robot.observe).ports() if safety else {})
    ports = Ports(detect=detect, plan_recovery=planner, skill=robot.skill, ask=lambda q, t: None, **extra)
    out = Executor(ports, ExecutorConfig(say_on_abort=False, **config)).run(steps)
    return out, robot, planner


# --------------------------------------------------------------------------- the paper's example
def test_the_unsafe_step_is_pruned_and_replanned_as_in_the_paper():
    svc = chip(*PAPER)
    out, robot, planner = run([step()], safety=svc)
    assert out.success, out.reason + "\n" + "\n".join(out.log_lines())
    assert robot.sent == ["move_to(bedroom)", "move_to(living_room)", "move_to(Toilet_1)"] == out.dispatched
    assert out.pruned == ["move_to(Toilet_1)", "move_to(living_room)"]
    # two corrective re-prompts, as in the paper: the step, then the first re-plan's first step
    assert [c[1] for c in planner.calls] == ["unsafe", "unsafe"]
    first, second = planner.calls[0][2].splitlines(), planner.calls[1][2].splitlines()
    assert first[0] == 'Constraints: ["you have to enter living room before bathroom", ' \
                       '"you have to enter bedroom before going into living room"]'
    assert first[1:5] == ["Invalid action: move_to(Toilet_1)", "State change:",
                          "Safe: !agent_at(bathroom) & !agent_at(living_room) & !agent_at(bedroom)",
                          "Violated: agent_at(bathroom) & !agent_at(living_room) & !agent_at(bedroom)"]
    assert first[5].startswith("Reason of violation: move_to(Toilet_1) makes agent_at(bathroom) true")
    assert second[1] == "Invalid action: move_to(living_room)"
    assert second[-1] == "Rejected plan: [move_to(living_room), move_to(Toilet_1)]"
    assert out.steps[0].safety_replans == 2
    assert svc.constraints()[0].status == "safe" and svc.constraints()[1].status == "safe"


def test_the_step_is_pruned_before_its_issue_check():
    seen = []
    out, robot, _ = run([step()], safety=chip(*PAPER), detect=lambda q, c: seen.append(q) or no_issue(q, c))
    assert out.success and seen == ["approach(toilet_1)"]          # one check: of the step once it is safe


# --------------------------------------------------------------------------- bounds and refusals
def test_corrective_re_prompts_are_bounded_and_nothing_unsafe_is_dispatched():
    planner = Planner("move_to(bathroom)\nmove_to(Toilet_1)")      # a planner that never learns
    out, robot, _ = run([step()], safety=chip(*PAPER), planner=planner, max_safety_replans=3)
    assert out.status == "aborted" and robot.sent == [] and out.dispatched == []
    assert len(planner.calls) == 3 and "No safe plan after 3 corrective re-prompt(s)" in out.reason
    assert "you have to enter living room before bathroom" in out.reason


def test_a_prohibition_with_no_way_around_stops_after_saying_so():
    said = []
    robot = Robot()
    svc = chip({"ltl": "G !agent_at(bathroom)", "text": "Never enter the bathroom."})
    ports = Ports(detect=no_issue, plan_recovery=Planner(), skill=robot.skill, ask=lambda q, t: None,
                  say=said.append, **LocalSafetyPorts(svc, robot.observe).ports())
    out = Executor(ports, ExecutorConfig(say_on_abort=False)).run([step()])
    assert out.status == "aborted" and robot.sent == [] and "no action that keeps the rule" in out.reason
    assert len(said) == 1 and "Never enter the bathroom." in said[0]


def test_an_unsafe_recovery_action_is_pruned_too():
    # the issue check finds a problem; the ordinary recovery plan would walk into the bathroom
    calls = []

    def plan(q, i, e, h):
        calls.append(i)
        return parse_plan("move_to(Towel_1)\nmove_to(Bed_1)") if i == "unfeasibility" else Planner()(q, i, e, h)
    detect = iter([DetectionOutcome("unfeasibility", "the bed is in the way", [])])
    out, robot, _ = run([step("Bed_1")], safety=chip({"ltl": "G !agent_at(bathroom)", "text": "Never enter the bathroom."}),
                        planner=plan, detect=lambda q, c: next(detect))
    assert robot.sent == [] and out.pruned == ["move_to(Towel_1)"] and calls == ["unfeasibility", "unsafe"]
    assert out.status == "aborted" and "Never enter the bathroom." in out.reason


# --------------------------------------------------------------------------- an unreliable monitor
def fake(verdicts=None, *, raise_on=None, hang=False, session=lambda n: "s1"):
    """A scripted safety port: verdicts per call (default safe)."""
    n = Counter()
    release = threading.Event()

    def check(action):
        n["check"] += 1
        if hang:
            release.wait(30)
        if raise_on and raise_on(n["check"]):
            raise ConnectionError("the service safety_monitor/check_action is not available")
        v = (verdicts or {}).get(n["check"], "safe")
        return SafetyVerdict(v, action, f"{v} by script", reason="no state" if v == "error" else "",
                             session=session(n["check"]))
    return {"check_action": check, "follow": lambda a: None}, n, release


def test_a_dead_monitor_means_nothing_is_dispatched():
    ports, n, _ = fake(raise_on=lambda k: True)
    out, robot, _ = run([step("Sofa_1")], safety=ports)
    assert out.status == "aborted" and robot.sent == []
    assert "not dispatched: the safety monitor could not check" in out.reason
    assert "safety_monitor/check_action is not available" in out.reason


def test_a_monitor_that_dies_half_way_stops_before_the_next_step():
    ports, n, _ = fake(raise_on=lambda k: k >= 3)      # pre-check and gate of step 1 answer, then silence
    out, robot, _ = run([step("Bed_1"), step("Remote_1", 1)], safety=ports)
    assert robot.sent == ["move_to(Bed_1)"] and out.status == "aborted" and "step 2" in out.reason


def test_a_silent_monitor_means_nothing_is_dispatched():
    ports, n, release = fake(hang=True)
    try:
        out, robot, _ = run([step("Sofa_1")], safety=ports, safety_timeout_s=0.2)
    finally:
        release.set()
    assert out.status == "aborted" and robot.sent == [] and "did not answer within 0.2 s" in out.reason


def test_an_error_verdict_at_the_gate_is_not_a_pass():
    ports, n, _ = fake({1: "error", 2: "error"})
    out, robot, _ = run([step("Sofa_1")], safety=ports)
    assert robot.sent == [] and "the safety monitor cannot check move_to(Sofa_1): no state" in out.reason


def test_a_restarted_monitor_stops_the_task():
    ports, n, _ = fake(session=lambda k: "s1" if k <= 2 else "s2")
    out, robot, _ = run([step("Bed_1"), step("Remote_1", 1)], safety=ports)
    assert robot.sent == ["move_to(Bed_1)"] and "restarted during the task" in out.reason


def test_follow_is_told_every_dispatched_skill_that_succeeded():
    followed = []
    ports = {"check_action": lambda a: SafetyVerdict("safe", a), "follow": followed.append}
    out, robot, _ = run([step("Bed_1"), step("Nowhere_1", 1)], safety=ports,
                        detect=lambda q, c: DetectionOutcome("none", "", []), max_recovery_attempts=0)
    assert robot.sent == ["move_to(Bed_1)", "move_to(Nowhere_1)"] and followed == ["move_to(Bed_1)"]


def test_without_the_safety_ports_the_executor_is_unchanged():
    out, robot, _ = run([step()], safety=None)
    assert out.success and robot.sent == ["move_to(Toilet_1)"] and out.pruned == []


def test_a_task_that_starts_where_a_rule_is_already_broken_is_refused():
    robot = Robot()
    robot.world.execute("move_to", ["bathroom"])
    svc = chip(PAPER[0])
    out, robot, _ = run([step("Sink_1")], safety=svc, robot=robot)
    assert out.status == "aborted" and robot.sent == [] and "already violates" in out.reason
