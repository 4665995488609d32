"""The Safety Chip as a service (raider_ros/safety/service.py, what the safety_monitor node
answers), constraint files, and the monitor's trace positions for planners."""
from __future__ import annotations

import pytest

from raider_ros.common.paths import scenes_dir
from raider_ros.safety import SafetyMonitor, SymbolicState
from raider_ros.safety.automata import Compiler
from raider_ros.safety.constraints import ConstraintFileError, constraints_dir, load_constraints
from raider_ros.safety.planning import MonitorLooker
from raider_ros.safety.service import SafetyService
from raider_ros.safety.translate import RulesTranslator
from raider_ros.sim.scene import load_scene
from raider_ros.sim.world import SimWorld

COMPILER = Compiler()
HOUSE_SCENE = load_scene(scenes_dir() / "house.scene.yaml")
HOUSE = SymbolicState.from_scene(HOUSE_SCENE)


def service(*items, state=HOUSE) -> SafetyService:
    s = SafetyService(SafetyMonitor(None, compiler=COMPILER, translator=RulesTranslator()))
    if state is not None:
        s.observe(state)
    for it in items:
        assert s.add(**it).success
    return s


def test_add_translates_reads_back_and_lists():
    s = service()
    a = s.add(text="You have to enter the living room before the bathroom.")
    assert a.success and a.constraint.ltl == "!agent_at(bathroom) U agent_at(living_room)"
    assert "living room" in a.constraint.english and a.constraint.source == "rules (no LLM)"
    b = s.add(ltl="G !switched_on(stove)", text="Never turn on the stove.")
    assert b.success and b.constraint.source == "ltl"
    assert [(c.id, c.status) for c in s.constraints()] == [(a.constraint.id, "pending"), (b.constraint.id, "safe")]
    assert s.remove(a.constraint.id).success and [c.id for c in s.constraints()] == [b.constraint.id]
    r = s.remove(99)
    assert not r.success and "no constraint #99" in r.message


@pytest.mark.parametrize("kw, words", [
    ({"ltl": "G (agent_at(bathroom)"}, ["column", "')'"]),
    ({"ltl": "G !flying(robot)"}, ["unknown predicate 'flying'"]),
    ({"ltl": "G !agent_at(garage)"}, ["'garage'", "names no object"]),
    ({"text": "Be nice to everybody."}, ["cannot translate"]),
    ({"ltl": "G !pick(knife) & F pick(knife)"}, ["can never be satisfied"]),
    ({}, ["give an English sentence"]),
])
def test_errors_name_the_problem_and_keep_the_set(kw, words):
    s = service({"ltl": "G !switched_on(stove)"})
    before = [c.ltl for c in s.constraints()]
    a = s.add(**kw)
    assert not a.success and all(w in a.message for w in words), a.message
    assert [c.ltl for c in s.constraints()] == before


def test_a_set_that_cannot_hold_together_is_refused_naming_both():
    s = service({"ltl": "G !pick(knife)", "text": "Never pick up the knife."})
    a = s.add(ltl="F pick(knife)", text="Pick up the knife at some point.")
    assert not a.success and "no sequence of states can satisfy" in a.message and "Never pick up the knife." in a.message
    assert len(s.constraints()) == 1


def test_check_action_gives_the_state_change_and_the_corrective_prompt():
    s = service({"text": "you have to enter living room before bathroom", "ltl": "!agent_at(bathroom) U agent_at(livingroom)"})
    v = s.check_action("move_to(Toilet_1)")
    assert v.verdict == "unsafe" and v.violated_text == ["you have to enter living room before bathroom"]
    assert v.state_safe == "!agent_at(bathroom) & !agent_at(livingroom)"
    assert v.state_violated == "agent_at(bathroom) & !agent_at(livingroom)"
    assert v.corrective_prompt.splitlines()[1] == "Invalid action: move_to(Toilet_1)"
    assert "(LTL: !agent_at(bathroom) U agent_at(livingroom))" in v.corrective_prompt
    assert s.check_action("move_to(Sofa_1)").verdict == "safe"
    e = s.check_action("fly_to(Moon_1)")
    assert e.verdict == "error" and "unknown skill 'fly_to'" in e.reason


def test_check_plan_first_unsafe_step_and_automaton_states():
    s = service({"ltl": "!agent_at(bathroom) U agent_at(living_room)"})
    v = s.check_plan(["move_to(Bed_1)", "move_to(Toilet_1)"])
    assert v.verdict == "unsafe" and v.first_unsafe_step == 1 and v.action == "move_to(Toilet_1)"
    assert "Rejected plan: [move_to(Bed_1), move_to(Toilet_1)]" in v.corrective_prompt
    ok = s.check_plan(["move_to(Sofa_1)", "move_to(Toilet_1)"])
    assert ok.verdict == "safe" and ok.first_unsafe_step == -1 and len(ok.automaton_states) == 1
    assert s.check_plan(["move_to(Bed_1)"]).verdict == "pending"


def test_follow_advances_the_trace_and_reset_starts_a_new_one():
    s = service({"ltl": "!agent_at(bathroom) U agent_at(living_room)"})
    world = SimWorld(HOUSE_SCENE)
    assert world.execute("move_to", ["living_room"]).success
    f = s.follow("move_to(living_room)", SymbolicState.from_truth(world.truth()))
    assert f.verdict == "safe" and f.trace_length == 1
    assert s.check_action("move_to(Toilet_1)").verdict == "safe"        # the living room came first
    s.reset(HOUSE)
    assert s.check_action("move_to(Toilet_1)").verdict == "unsafe"      # a new trace forgets it


def test_without_constraints_everything_is_safe_and_without_a_state_checks_are_errors():
    assert service().check_action("fly_to(Moon_1)").verdict == "safe"
    s = service(state=None)
    s.monitor.add("G !agent_at(bathroom)")
    assert s.check_action("move_to(Toilet_1)").verdict == "error"
    a = s.add(text="Never enter the kitchen.")
    assert not a.success and "no world state" in a.message


def test_queued_constraints_wait_for_the_first_state_all_or_none():
    s = service(state=None)
    s.queue([{"ltl": None, "text": "Never enter the bathroom."}, {"ltl": "G !agent_at(garage)", "text": None}])
    s.observe(HOUSE)
    assert s.constraints() == [] and "garage" in s.queue_error
    s.queue([{"ltl": None, "text": "Never enter the bathroom."}])
    assert [c.ltl for c in s.constraints()] == ["G !agent_at(bathroom)"] and s.queue_error == ""


def test_constraint_files():
    items, path = load_constraints("paper_example")
    assert path.parent == constraints_dir() and [i["text"] for i in items][0].startswith("You have to enter")
    items, _ = load_constraints("living_room_first")
    assert items == [{"ltl": "!agent_at(bathroom) U agent_at(living_room)",
                      "text": "You have to enter the living room before the bathroom."}]
    for f in sorted(constraints_dir().glob("*.yaml")):
        load_constraints(f)


@pytest.mark.parametrize("text, words", [
    ("format: raider-constraints/2\nconstraints: []\n", ["format", "raider-constraints/1"]),
    ("format: raider-constraints/1\nconstraints: {a: 1}\n", ["constraints: expected a list"]),
    ("format: raider-constraints/1\nconstraints: [{ltl: 'G a', colour: red}]\n", ["constraints[0]", "'colour'"]),
    ("format: raider-constraints/1\nconstraints: [{}]\n", ["constraints[0]", "give a formula"]),
    ("format: raider-constraints/1\nconstraints: [3]\n", ["constraints[0]", "expected a sentence"]),
])
def test_bad_constraint_files_name_the_entry(tmp_path, text, words):
    p = tmp_path / "c.yaml"
    p.write_text(text)
    with pytest.raises(ConstraintFileError) as e:
        load_constraints(p)
    assert all(w in str(e.value) for w in words), str(e.value)
    with pytest.raises(ConstraintFileError, match="no such constraints file"):
        load_constraints(tmp_path / "missing.yaml")


def test_trace_positions_step_like_check_plan():
    m = SafetyMonitor(HOUSE, compiler=COMPILER)
    m.add("!agent_at(bathroom) U agent_at(living_room)")
    looker = MonitorLooker(m)
    root = looker.start()
    assert root.verdict == "pending"
    a = looker.step(root.handle, "move_to(Sofa_1)")
    b = looker.step(a.handle, "move_to(Toilet_1)")
    assert (a.verdict, b.verdict) == ("safe", "safe")
    assert looker.step(root.handle, "move_to(Toilet_1)").verdict == "unsafe"
    assert b.key == m.check_plan(["move_to(Sofa_1)", "move_to(Toilet_1)"]).end_states
    assert looker.step(root.handle, "pick(nothing_here)").verdict == "error"
