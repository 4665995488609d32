"""Argument matching: names the agent writes -> scene-graph ids."""
import pytest

from raider_ros.common.text import singular, split_words
from raider_ros.perception.matching import Entity, Match, Matcher, NoMatch

ENTITIES = [
    Entity("Bowl_1", "Bowl"),
    Entity("Mug_1", "Mug"), Entity("Mug_2", "Mug"),
    Entity("CoffeeMachine_1", "CoffeeMachine"),
    Entity("CounterTop_1", "CounterTop"),
    Entity("Knife_1", "Knife"),
    Entity("Apple_1", "Apple", present=False),          # known, out of sight
    Entity("Apple_2", "Apple"),
    Entity("Tomato_1", "Tomato", present=False),
    Entity("Person_1", "Person", "person", name="Adriana"),
    Entity("Person_2", "Person", "person"),
]


@pytest.fixture(scope="module")
def m():
    return Matcher(ENTITIES)


@pytest.mark.parametrize("query", ["bowl", "the bowl", "Bowl", "BOWL", "bowl_1", "Bowl_1", "bowl 1",
                                   "the red bowl", "a bowl", "bowls", "  the   Bowl  ", "bowl1"])
def test_bowl_variants_resolve_to_bowl_1(m, query):
    r = m.match(query)
    assert isinstance(r, Match), r
    assert r.ids == ("Bowl_1",)


@pytest.mark.parametrize("query, expected", [
    ("coffee machine", "CoffeeMachine_1"), ("the coffee machine", "CoffeeMachine_1"),
    ("coffee_machine", "CoffeeMachine_1"), ("CoffeeMachine", "CoffeeMachine_1"),
    ("coffeemachine", "CoffeeMachine_1"), ("coffee-machine 1", "CoffeeMachine_1"),
    ("countertop", "CounterTop_1"), ("counter top", "CounterTop_1"), ("the countertops", "CounterTop_1"),
    ("knives", "Knife_1"), ("the sharp knife", "Knife_1"),
    ("cofee machine", "CoffeeMachine_1"),                        # typo: fuzzy
])
def test_case_styles_plurals_and_typos(m, query, expected):
    r = m.match(query)
    assert isinstance(r, Match), r
    assert r.ids == (expected,)


def test_type_with_several_instances_returns_all(m):
    r = m.match("mug")
    assert r.ids == ("Mug_1", "Mug_2") and r.several and r.how == "type"
    assert m.match("the mugs").ids == ("Mug_1", "Mug_2")
    assert m.match("mug on the left of the bowl").ids == ("Mug_1", "Mug_2")   # head noun, leftmost


def test_specific_instance_beats_type(m):
    assert m.match("mug_2").ids == ("Mug_2",)
    assert m.match("the Mug_1").ids == ("Mug_1",)


def test_type_prefers_present_instances_but_falls_back(m):
    assert m.match("apple").ids == ("Apple_2",)             # Apple_1 is out of sight
    assert m.match("Apple_1").ids == ("Apple_1",)           # ids always resolve
    assert m.match("tomato").ids == ("Tomato_1",)           # no present tomato: the known one


def test_person_names_ids_and_words(m):
    assert m.match("Adriana").ids == ("Person_1",)
    assert m.match("adriana").how == "name"
    assert m.match("Adrianna").ids == ("Person_1",)         # typo
    assert m.match("person_2").ids == ("Person_2",)
    assert m.match("the person").ids == ("Person_1", "Person_2")
    assert m.match("human").ids == ("Person_1", "Person_2")
    assert m.match("the woman").ids == ("Person_1", "Person_2")


def test_kinds_filter(m):
    assert isinstance(m.match("bowl", kinds=["person"]), NoMatch)
    assert isinstance(m.match("Adriana", kinds=["object"]), NoMatch)
    assert m.match("Adriana", kinds=["person"]).ids == ("Person_1",)
    assert "no person" in m.match("bowl", kinds=["person"]).message


@pytest.mark.parametrize("query", ["pear", "fruit", "mug_3", "mug 10", "Bowl_2", "xyz", "mu"])
def test_unknown_names_are_not_found(m, query):
    r = m.match(query)
    assert isinstance(r, NoMatch), r
    data = r.to_data()
    assert data["error"] == "not found" and data["query"] == query
    assert isinstance(data["closest"], list)


def test_not_found_lists_closest_names(m):
    r = m.match("mug_3")
    assert "Mug_1" in r.closest and "Mug_2" in r.closest
    assert "closest: " in r.message and "mug_3" in r.message
    r = m.match("Bowl_2")
    assert r.closest[0] == "Bowl_1"
    pear = m.match("pear").closest
    assert "Apple_2" in pear and "Bowl_1" not in pear


@pytest.mark.parametrize("bad", ["", "   ", "the", None, 3])
def test_empty_or_non_string_queries(m, bad):
    assert isinstance(m.match(bad), NoMatch)


def test_empty_matcher():
    r = Matcher([]).match("bowl")
    assert isinstance(r, NoMatch) and r.closest == ()


def test_helpers():
    assert split_words("CoffeeMachine_1") == ["coffee", "machine", "1"]
    assert split_words("TVStand") == ["tv", "stand"]
    assert [singular(w) for w in ("cherries", "knives", "boxes", "glass", "bus", "mugs", "tomatoes", "cup")] == \
        ["cherry", "knife", "box", "glass", "bus", "mug", "tomato", "cup"]
