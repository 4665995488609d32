"""The safety monitor: safe / pending / unsafe, the paper's example, plans, follow, errors."""
from __future__ import annotations

import pytest

from raider_ros.common.paths import scenes_dir
from raider_ros.safety.automata import Compiler
from raider_ros.safety.ltl import Atom, LTLSyntaxError
from raider_ros.safety.monitor import (
    PENDING, SAFE, UNSAFE, ConstraintError, NoStateError, SafetyMonitor, UnsatisfiableError, corrective_prompt,
    render_valuation,
)
from raider_ros.safety.predicates import ActionError, PredicateError, SymbolicState
from raider_ros.sim.scene import load_scene

COMPILER = Compiler()
HOUSE = SymbolicState.from_scene(load_scene(scenes_dir() / "house.scene.yaml"))
KITCHEN = SymbolicState.from_scene(load_scene(scenes_dir() / "kitchen.scene.yaml"))
PAPER = [
    {"text": "you have to enter living room before bathroom", "ltl": "!agent_at(bathroom) U agent_at(livingroom)"},
    {"text": "you have to enter bedroom before going into living room", "ltl": "!agent_at(livingroom) U agent_at(bedroom)"},
]


def monitor(state=HOUSE, *constraints) -> SafetyMonitor:
    m = SafetyMonitor(state, compiler=COMPILER)
    if constraints:
        m.add_many(list(constraints))
    return m


# --------------------------------------------------------------------------- the paper's example
def test_walking_to_the_bathroom_first_is_unsafe_and_cites_the_constraint():
    m = monitor(HOUSE, *PAPER)
    res = m.check_action("move_to(bathroom)")
    assert res.verdict == UNSAFE
    assert res.violated == [m.constraints()[0].id]
    assert "you have to enter living room before bathroom" in res.explanation()
    # the state change of the paper's corrective re-prompt
    bad = [r for r in res.results if r.status == UNSAFE][0]
    assert render_valuation(bad.before) == "!agent_at(bathroom) & !agent_at(livingroom)"
    assert render_valuation(bad.after) == "agent_at(bathroom) & !agent_at(livingroom)"


def test_the_corrective_re_prompt_of_the_paper():
    m = monitor(HOUSE, *PAPER)
    res = m.check_action("move_to(bathroom)")
    text = corrective_prompt(res, m.constraints())
    assert text.splitlines() == [
        'Constraints: ["you have to enter living room before bathroom", '
        '"you have to enter bedroom before going into living room"]',
        "Invalid action: move_to(bathroom)",
        "State change:",
        "Safe: !agent_at(bathroom) & !agent_at(livingroom) & !agent_at(bedroom)",
        "Violated: agent_at(bathroom) & !agent_at(livingroom) & !agent_at(bedroom)",
        "Reason of violation:",
    ]
    assert m.check_action("move_to(Bed_1)").change_before == {}        # only unsafe steps carry it


def test_walking_to_the_living_room_first_violates_the_bedroom_constraint():
    m = monitor(HOUSE, *PAPER)
    res = m.check_action("move_to(Sofa_1)")
    assert res.verdict == UNSAFE and res.violated == [m.constraints()[1].id]
    assert "bedroom before going into living room" in res.explanation()


def test_the_corrected_plan_is_safe_and_leaves_nothing_pending():
    m = monitor(HOUSE, *PAPER)
    check = m.check_plan(["move_to(bedroom)", "move_to(living_room)", "move_to(bathroom)", "move_to(Toilet_1)"])
    assert check.first_unsafe_step is None and check.pending_at_end == []
    assert [s.verdict for s in check.steps] == [PENDING, SAFE, SAFE, SAFE]


def test_check_plan_stops_at_the_first_unsafe_step():
    m = monitor(HOUSE, *PAPER)
    check = m.check_plan(["move_to(Bed_1)", "move_to(Toilet_1)", "move_to(Sofa_1)"])
    assert check.first_unsafe_step == 1 and len(check.steps) == 2
    assert check.violated == [m.constraints()[0].id]


# --------------------------------------------------------------------------- verdicts
def test_safe_pending_unsafe():
    m = monitor(KITCHEN, {"ltl": "G (open(fridge) -> F close(fridge))"}, {"ltl": "G !pick(knife)"})
    assert m.check_action("move_to(Fridge_1)").verdict == SAFE
    m.follow("move_to(Fridge_1)")
    res = m.check_action("open(Fridge_1)")
    assert res.verdict == PENDING and res.pending == [m.constraints()[0].id]   # an open obligation
    m.follow("open(Fridge_1)")
    assert m.check_action("close(Fridge_1)").verdict == SAFE
    assert m.check_action("pick(Knife_1)").verdict == UNSAFE
    assert m.history == ["move_to(Fridge_1)", "open(Fridge_1)"]


def test_checks_do_not_change_the_monitor_but_follow_does():
    m = monitor(HOUSE, {"ltl": "G !agent_at(bathroom)"})
    before = m.status()
    m.check_action("move_to(Toilet_1)")
    m.check_plan(["move_to(Toilet_1)"])
    assert m.status() == before and m.state is HOUSE
    res = m.follow("move_to(Toilet_1)")
    assert res.verdict == UNSAFE and m.status() == {m.constraints()[0].id: UNSAFE}
    assert m.state.robot_room == "bathroom"


def test_follow_takes_the_observed_state():
    m = monitor(HOUSE, {"ltl": "G !agent_at(bathroom)"})
    observed = HOUSE.with_changes(robot_xy=(5.0, 1.0))           # the robot ended up in the living room
    res = m.follow("move_to(Toilet_1)", observed)
    assert res.verdict == SAFE and m.state.robot_room == "living_room"


def test_a_constraint_added_later_starts_from_the_current_state():
    m = monitor(HOUSE)
    m.follow("move_to(Toilet_1)")
    c = m.add("G !agent_at(kitchen)")                           # fine: the robot is in the bathroom now
    assert m.status() == {c.id: SAFE}
    with pytest.raises(ConstraintError, match="already violated in the current state"):
        m.add("G !agent_at(bathroom)")
    assert [x.id for x in m.constraints()] == [c.id]


def test_constraints_added_before_the_state_start_at_reset():
    m = SafetyMonitor(compiler=COMPILER)
    with pytest.raises(NoStateError):
        m.check_action("move_to(Bed_1)")
    m.add("G !agent_at(bedroom)")
    assert m.reset(HOUSE) == []
    assert m.check_action("move_to(Bed_1)").verdict == UNSAFE
    assert m.reset(HOUSE.with_changes(robot_xy=(1.0, 1.0))) == [m.constraints()[0].id]


def test_remove_and_list_constraints():
    m = monitor(HOUSE, {"ltl": "G !agent_at(bedroom)", "text": "stay out of the bedroom"})
    (c,) = m.constraints()
    assert c.text == "stay out of the bedroom" and c.english.startswith("It must never happen that the robot is at")
    assert m.check_action("move_to(Bed_1)").verdict == UNSAFE
    m.remove(c.id)
    assert m.constraints() == [] and m.check_action("move_to(Bed_1)").verdict == SAFE
    with pytest.raises(KeyError, match="no constraint #"):
        m.remove(c.id)


# --------------------------------------------------------------------------- errors
def test_errors_leave_the_constraints_as_they_were():
    m = monitor(HOUSE, {"ltl": "G !agent_at(bathroom)"})
    ids = [c.id for c in m.constraints()]
    with pytest.raises(LTLSyntaxError, match="column"):
        m.add("G (agent_at(bathroom)")
    with pytest.raises(PredicateError, match="unknown predicate 'teleported'"):
        m.add("G !teleported(robot)")
    with pytest.raises(PredicateError, match="'garage' names no object, type, person or room"):
        m.add("G !agent_at(garage)")
    with pytest.raises(UnsatisfiableError, match="can never be satisfied"):
        m.add("F pick(knife) & G !pick(knife)")
    with pytest.raises(UnsatisfiableError, match="together with"):
        m.add("F agent_at(bathroom)")
    with pytest.raises(UnsatisfiableError):                      # all or none
        m.add_many(["G !pick(apple)", "F pick(apple)"])
    assert [c.id for c in m.constraints()] == ids


def test_bad_plan_steps_are_errors_naming_the_step():
    m = monitor(HOUSE, {"ltl": "G !agent_at(bathroom)"})
    with pytest.raises(ActionError, match="unknown skill 'fly'"):
        m.check_action("fly(Bed_1)")
    with pytest.raises(ActionError, match="nothing called 'Garage_1'"):
        m.check_action("move_to(Garage_1)")
    check = m.check_plan(["move_to(Bed_1)", "pick(Unicorn_1)"])
    assert check.error and check.error.startswith("step 1:") and check.first_unsafe_step is None


def test_no_translator_means_sentences_cannot_be_added():
    with pytest.raises(ConstraintError, match="no translator"):
        monitor(HOUSE).add(text="never enter the bathroom")


def test_twenty_constraints_at_once():
    rooms = ["kitchen", "bedroom", "living_room", "bathroom"]
    things = ["knife", "apple", "mug", "book", "remote", "vase", "towel", "medicine"]
    cons = [f"G !(holding({t}) & agent_at({r}))" for t in things[:4] for r in rooms[1:]]
    cons += [f"G (pick({t}) -> F place(CounterTop_1))" for t in things[4:]]
    cons += ["G !switched_on(stove)", "!agent_at(bathroom) U agent_at(living_room)",
             "G (is_open(fridge) -> agent_at(kitchen))", "!F (open(fridge) & X F open(fridge))"]
    m = monitor(HOUSE, *cons)
    assert len(cons) == len(m.constraints()) == 20
    check = m.check_plan(["move_to(Knife_1)", "pick(Knife_1)", "move_to(Bed_1)"])
    assert check.first_unsafe_step == 2
    assert Atom("holding", ("knife",)) in m.constraints()[0].atoms
