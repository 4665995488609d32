"""Corrective re-planning without an LLM (raider_ros/safety/replan.py) and the re-prompt it reads
(raider_ros/safety/monitor.py corrective_prompt with the reason and the rejected plan)."""
from __future__ import annotations

import pytest

from raider_ros.common.paths import scenes_dir
from raider_ros.recovery.planner import RecoveryPlanner
from raider_ros.recovery.plan import PlanError
from raider_ros.safety import SafetyMonitor, SymbolicState, corrective_prompt
from raider_ros.safety.automata import Compiler
from raider_ros.safety.replan import CorrectiveError, corrective_plan, parse_corrective, parse_valuation
from raider_ros.sim.scene import load_scene

COMPILER = Compiler()
HOUSE = SymbolicState.from_scene(load_scene(scenes_dir() / "house.scene.yaml"))
PAPER = [{"text": "you have to enter living room before bathroom", "ltl": "!agent_at(bathroom) U agent_at(living_room)"},
         {"text": "you have to enter bedroom before going into living room",
          "ltl": "!agent_at(living_room) U agent_at(bedroom)"}]


def monitor(*items) -> SafetyMonitor:
    m = SafetyMonitor(HOUSE, compiler=COMPILER)
    m.add_many(list(items))
    return m


def prompt_for(m: SafetyMonitor, step: str, plan=None) -> str:
    res = m.check_action(step) if plan is None else m.check_plan(plan).steps[-1]
    return corrective_prompt(res, m.constraints(), reason=res.reason(), plan=plan)


def test_the_reprompt_carries_the_reason_with_the_formula_and_the_rejected_plan():
    m = monitor(*PAPER)
    plan = ["move_to(living_room)", "move_to(Sink_1)"]
    res = m.check_plan(plan).steps[0]
    text = corrective_prompt(res, m.constraints(), reason=res.reason(), plan=plan)
    lines = text.splitlines()
    assert lines[1] == "Invalid action: move_to(living_room)"
    assert lines[5].startswith("Reason of violation: move_to(living_room) makes agent_at(living_room) true")
    assert '"you have to enter bedroom before going into living room" (LTL: !agent_at(living_room) U agent_at(bedroom))' in lines[5]
    assert lines[6] == "Rejected plan: [move_to(living_room), move_to(Sink_1)]"
    p = parse_corrective(text)
    assert p.action == "move_to(living_room)" and p.rejected_plan == tuple(plan)
    assert [str(a) for a, v in p.violated.items() if v] == ["agent_at(living_room)"]
    assert len(p.formulas) == 1


def test_the_papers_example_takes_two_rounds_as_in_the_paper():
    m = monitor(*PAPER)
    first = corrective_plan("approach(sink)", prompt_for(m, "move_to(Sink_1)"), compiler=COMPILER)
    assert first.steps == [("move_to", ("living_room",)), ("move_to", ("Sink_1",))]
    plan = [f"{a}({', '.join(x)})" for a, x in first.steps]
    check = m.check_plan(plan)
    assert check.first_unsafe_step == 0                    # the living room needs the bedroom first
    again = corrective_prompt(check.steps[0], m.constraints(), reason=check.steps[0].reason(), plan=plan)
    second = corrective_plan("approach(sink)", again, compiler=COMPILER)
    assert [a + "(" + ", ".join(x) + ")" for a, x in second.steps] == \
        ["move_to(bedroom)", "move_to(living_room)", "move_to(Sink_1)"]
    assert m.check_plan([a + "(" + ", ".join(x) + ")" for a, x in second.steps]).first_unsafe_step is None


def test_an_action_atom_is_done_first_and_the_robot_comes_back():
    m = monitor({"text": "Turn on the lamp before you turn on the TV.", "ltl": "!turn_on(tv) U turn_on(lamp)"})
    cp = corrective_plan("turn_on(tv)", prompt_for(m, "turn_on(TV_1)"), compiler=COMPILER)
    calls = [a + "(" + ", ".join(x) + ")" for a, x in cp.steps]
    assert calls == ["move_to(lamp)", "turn_on(lamp)", "move_to(TV_1)", "turn_on(TV_1)"]
    assert m.check_plan(calls).first_unsafe_step is None


def test_holding_is_undone_by_putting_it_down():
    m = monitor({"text": "Do not take the knife out of the kitchen.", "ltl": "G (holding(knife) -> agent_at(kitchen))"})
    m.follow("move_to(Knife_1)")
    m.follow("pick(Knife_1)")
    cp = corrective_plan("approach(bed)", prompt_for(m, "move_to(Bed_1)"), compiler=COMPILER)
    assert cp.steps == [("place", ("current_loc",)), ("move_to", ("Bed_1",))]


def test_no_way_around_a_prohibition_is_said_not_planned():
    m = monitor({"text": "Never enter the bathroom.", "ltl": "G !agent_at(bathroom)"})
    cp = corrective_plan("approach(toilet)", prompt_for(m, "move_to(Toilet_1)"), compiler=COMPILER)
    assert [a for a, _ in cp.steps] == ["say"] and "Never enter the bathroom." in cp.steps[0][1][0]


def test_the_rules_recovery_planner_answers_issue_unsafe_with_the_corrective_plan():
    m = monitor(*PAPER[:1])
    plan = RecoveryPlanner().plan("approach(sink)", "unsafe", prompt_for(m, "move_to(Sink_1)"), None)
    assert plan.to_code().splitlines() == ["move_to(living_room)", "move_to(Sink_1)"]
    with pytest.raises(PlanError, match="corrective re-prompt.*Invalid action"):
        RecoveryPlanner().plan("approach(sink)", "unsafe", "the sink is in the bathroom", None)


def test_bad_reprompts_name_what_is_missing():
    with pytest.raises(CorrectiveError, match="no formula"):
        parse_corrective("Invalid action: move_to(X_1)\nSafe: true\nViolated: true\nReason of violation: \n")
    with pytest.raises(CorrectiveError, match="expected atoms"):
        parse_valuation("agent_at(a) & (b | c)")
    assert parse_valuation("true") == {}
