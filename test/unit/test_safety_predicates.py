"""Predicates over the symbolic state (rooms, types, ids), its builders and the skill predictor."""
from __future__ import annotations

import pytest

from raider_ros.common.paths import scenes_dir
from raider_ros.safety.ltl import Atom, parse
from raider_ros.safety.predicates import (
    SKILL_PARAMS, ActionError, PredicateError, SymbolicState, check_atom, evaluate, parse_action, predict,
    resolve_action,
)
from raider_ros.sim import skills
from raider_ros.sim.scene import load_scene
from raider_ros.sim.world import SimWorld

HOUSE_SCENE = load_scene(scenes_dir() / "house.scene.yaml")
HOUSE = SymbolicState.from_scene(HOUSE_SCENE)
ASSIST = SymbolicState.from_scene(load_scene(scenes_dir() / "assistive_room.scene.yaml"))


def holds(text: str, state: SymbolicState) -> bool:
    atom = parse(text)
    check_atom(atom, state)
    return evaluate(atom, state)


def test_skill_table_agrees_with_the_simulator():
    assert SKILL_PARAMS == skills.SKILL_ARGS


def test_rooms_types_and_ids():
    s = predict(HOUSE, "move_to(Toilet_1)")
    assert s.robot_room == "bathroom"
    assert holds("agent_at(bathroom)", s) and not holds("agent_at(kitchen)", s)
    assert holds("agent_at(Toilet_1)", s) and holds("agent_at(toilet)", s) and holds("agent_at(TOILET_1)", s)
    assert holds("agent_at(livingroom)", predict(HOUSE, "move_to(Sofa_1)"))        # room names: any spelling
    assert holds("agent_at(Living_Room)", predict(HOUSE, "move_to(Sofa_1)"))
    s = predict(HOUSE, "move_to(Knife_1)")
    assert s.at == {"Knife_1", "CounterTop_1"}                                       # the target and what carries it
    assert holds("agent_at(counter_top)", s) and holds("agent_at(kitchen)", s)


def test_holding_state_predicates_and_actions():
    s = predict(predict(HOUSE, "move_to(Knife_1)"), "pick(Knife_1)")
    assert holds("holding(knife)", s) and holds("holding(Knife_1)", s) and not holds("holding(apple)", s)
    assert holds("pick(knife)", s) and holds("pick(kitchen)", s) and not holds("pick(apple)", s)
    assert not holds("move_to(knife)", s)
    s = predict(s, "place(CounterTop_1)")
    assert not holds("holding(knife)", s) and holds("place(counter_top)", s)
    s = predict(predict(HOUSE, "move_to(Fridge_1)"), "open(Fridge_1)")
    assert holds("is_open(fridge)", s) and holds("open(fridge)", s) and holds("is_open(kitchen)", s)
    s = predict(s, "close(fridge)")
    assert not holds("is_open(fridge)", s) and holds("close(Fridge_1)", s)
    s = predict(HOUSE, "turn_on(TV_1)")
    assert holds("switched_on(tv)", s) and holds("turn_on(living_room)", s)
    assert not holds("switched_on(tv)", predict(s, "turn_off(TV_1)"))
    assert holds("sliced(apple)", predict(HOUSE, "slice(Apple_1)"))
    assert holds("move_to(bathroom)", predict(HOUSE, "move_to(bathroom)"))
    assert holds("move_to(bathroom)", predict(HOUSE, "move_to(Towel_1)"))


def test_handover_keeps_the_object_nameable():
    s = predict(predict(ASSIST, "move_to(Medicine_2)"), "pick(Medicine_2)")
    s = predict(s, "handover(medicine, Person_1)")            # type: the held medicine wins
    assert s.action.targets == ("Medicine_2", "Person_1")
    assert holds("handover(medicine)", s) and holds("handover(Medicine_2, person)", s)
    assert not holds("holding(medicine)", s) and not holds("handover(bottle)", s)


def test_person_near():
    assert holds("person_near(living_room)", HOUSE) and not holds("person_near(kitchen)", HOUSE)
    assert not holds("person_near(robot)", HOUSE)
    assert holds("person_near(robot)", predict(HOUSE, "move_to(Person_1)"))
    assert holds("person_near(Alice)", HOUSE) is False                             # no other person near her
    assert not holds("person_near(knife)", HOUSE)
    s = predict(predict(HOUSE, "move_to(Knife_1)"), "pick(Knife_1)")
    assert holds("person_near(knife)", predict(s, "move_to(Person_1)"))             # the held knife goes along


def test_the_state_from_simulator_truth_and_from_a_scene_graph_snapshot():
    truth = SimWorld(HOUSE_SCENE).truth()
    s = SymbolicState.from_truth(truth)
    assert s.robot_room == "kitchen" and set(s.things) == set(HOUSE.things)
    snapshot = {"nodes": [
        {"id": "robot", "kind": "robot", "x": 11.0, "y": 1.0, "holding": "Towel_1"},
        {"id": "Towel_1", "kind": "object", "type": "Towel", "center": [11.0, 1.0, 1.0], "size": [0.2, 0.2, 0.04]},
        {"id": "Toilet_1", "kind": "object", "type": "Toilet", "box_min": [11.4, 0.175, 0.0],
         "box_max": [11.8, 0.825, 0.8], "state": {}},
        {"id": "Person_1", "kind": "person", "type": "Person", "name": "Bob", "center": [10.5, 1.0, 0.85],
         "size": [0.45, 0.35, 1.7]},
    ], "edges": []}
    g = SymbolicState.from_snapshot(snapshot, HOUSE_SCENE.rooms)
    assert holds("agent_at(bathroom)", g) and holds("holding(towel)", g) and holds("agent_at(toilet)", g)
    assert holds("person_near(robot)", g) and holds("person_near(Bob)", g) is False
    with pytest.raises(Exception, match="no robot node"):
        SymbolicState.from_snapshot({"nodes": []})


def test_initial_at_from_geometry():
    kitchen = SymbolicState.from_scene(load_scene(scenes_dir() / "kitchen.scene.yaml"))
    assert "CounterTop_1" in kitchen.at and "Fridge_1" not in kitchen.at
    assert HOUSE.at == frozenset()


@pytest.mark.parametrize("atom, words", [
    ("teleported(robot)", "unknown predicate 'teleported'"),
    ("agent_at(bathroom, kitchen)", "agent_at takes 1 argument, got 2"),
    ("handover(a, b, c)", "handover takes 1 or 2 arguments, got 3"),
    ("agent_at(garage)", "'garage' names no object, type, person or room of scene house"),
    ("holding(robot)", "'robot' can only be the argument of person_near"),
    ("holding(kitchen)", "cannot hold a room"),
    ("agent_at", "agent_at takes 1 argument, got 0"),
])
def test_bad_atoms_are_errors_naming_them(atom, words):
    with pytest.raises(PredicateError, match=words.replace("(", r"\(").replace(")", r"\)")):
        check_atom(parse(atom), HOUSE)


@pytest.mark.parametrize("step, words", [
    ("dance()", "unknown skill 'dance'"),
    ("move_to", "expected a skill call"),
    ("pick(a, b)", "pick takes 1 argument (object)"),
    ("handover(Knife_1)", "handover takes 2 arguments"),
    ("pick(Mug_9)", "nothing called 'Mug_9'"),
    (42, "expected a skill call"),
])
def test_bad_steps(step, words):
    with pytest.raises(ActionError, match=words.replace("(", r"\(").replace(")", r"\)")):
        resolve_action(HOUSE, step)


def test_ambiguous_type_names_the_candidates():
    kitchen = SymbolicState.from_scene(load_scene(scenes_dir() / "kitchen.scene.yaml"))
    with pytest.raises(ActionError, match="ambiguous: it could be Mug_1, Mug_2"):
        resolve_action(kitchen, "pick(mug)")
    assert parse_action({"skill": "pick", "args": ["Mug_1"]}).args == ("Mug_1",)
    assert str(resolve_action(kitchen, "pick(mug_1)")) == "pick(mug_1)"
    assert resolve_action(kitchen, "pick(mug_1)").targets == ("Mug_1",)
    assert Atom("pick", ("mug",)) == parse("pick(mug)")
