"""Change 19 of the rules reasoner: the object in the gripper named by a clause ("what you're
holding", "whatever you're carrying", "the thing in your hand", "the bottle you've got"); a
state said by what the thing needs ("the plate that still needs washing": not clean, "the jug
that needs filling": empty); a question tag after a statement asks nothing ("That knife is an
electric one, isn't it? Switch it on."); what already lies on or in a place does not block
putting something there."""
from __future__ import annotations

import pytest

from raider_ros.agent.backends.rules.query import parse_np, parse_query
from support.rules_fakes import assert_dev_case_right


@pytest.mark.parametrize("query, role, words", [
    ("Put what you're holding on the plate.", "object", []),
    ("Set whatever you're carrying down on the shoe cabinet.", "object", []),
    ("Hand Tom the thing you're holding.", "object", []),
    ("Give Lily whatever you're holding.", "object", []),
    ("Put the bottle you've got back on the shelf.", "object", ["bottle"]),
    ("Give me the book in your hand.", "object", ["book"]),
])
def test_the_held_object_named_by_a_clause(kb, query, role, words):
    np = parse_query(query, "", kb).args[role]
    assert np.held and np.words == words


@pytest.mark.parametrize("phrase", ["the cup you like", "you", "the box near you", "the mug you washed"])
def test_other_clauses_with_you_say_nothing_of_the_gripper(kb, phrase):
    assert not parse_np(phrase.split(), kb).held


def test_the_recipient_is_kept_before_whatever(kb):
    p = parse_query("Give Lily whatever you're holding.", "", kb)
    assert p.action == "handover" and p.args["recipient"].raw == "Lily"


@pytest.mark.parametrize("query, state", [
    ("Bring me the plate that still needs washing.", ("clean", False)),
    ("Bring me the sweater that needs a wash.", ("clean", False)),
    ("Grab the jug that needs filling.", ("filled", False)),
    ("Grab the mug that needs to be washed.", ("clean", False)),
])
def test_a_state_said_by_what_the_thing_needs(kb, query, state):
    st = parse_query(query, "", kb).args["object"].states
    assert [(s.key, s.value) for s in st] == [state]


def test_needs_as_the_main_verb_still_asks_for_the_action(kb):
    assert parse_query("The mug needs washing.", "", kb).action == "clean"
    assert parse_query("Grab the jug that needs a handle.", "", kb).args["object"].states == []


@pytest.mark.parametrize("query, action, obj", [
    ("That knife is an electric one, isn't it? Switch it on.", "turn_on", ["knife"]),
    ("That shaker is one of the electric ones, isn't it? Turn it on.", "turn_on", ["shaker"]),
    ("The kettle's empty, right? Fill it up.", "fill", ["kettle"]),
])
def test_a_question_tag_asks_nothing(kb, query, action, obj):
    p = parse_query(query, "", kb)
    assert p.action == action and p.args["object"].words == obj


@pytest.mark.parametrize("case_id", [
    "h20-walk_in_closet-027",             # "Put what you've got into the hamper." with nothing held
    "h20-hotel_breakfast_buffet-007",     # "hand her the one you're holding"
    "h20-mudroom_entryway-030",           # "Hand Tom the thing you're holding."
    "h20-backyard_barbecue-006",          # "the plate that still needs washing"
    "h20-walk_in_closet-010",             # "the sweater that needs a wash"
    "h20-hotel_breakfast_buffet-028",     # "..., isn't it? Switch it on."
    "h20-walk_in_closet-008",             # the shirt in the hamper does not block putting the sweater in
    "h20-home_gym-005",                   # place(Banana, WallShelf): the towel lies on the shelf
])
def test_mended_dev_cases(reasoner, case_id):
    assert_dev_case_right(reasoner, case_id)
