"""Change 9 of the rules reasoner: a reference no name grounds is read by meaning ("the flat dish
to the right of the cleaning tank": the ultrasonic cleaner), trailing "as well" / "too", and a
fronted object taken up by "those" / "get me those"."""

import pytest

from raider_ros.agent.backends.rules import embedding
from raider_ros.agent.backends.rules.knowledge import load_knowledge
from raider_ros.agent.backends.rules.query import parse_query
from support.rules_fakes import grounder as _grounder


@pytest.fixture(scope="module")
def kb():
    if not embedding.warm_up():
        pytest.fail(f"the packaged embedding model does not load: {embedding.unavailable_reason()}")
    return load_knowledge()


def _object(kb, query):
    return parse_query(query, "", kb).args["object"]


def test_a_reference_no_name_grounds_is_the_kind_clearly_closest_in_meaning(kb):
    ids = ["PartsTray_1", "PartsTray_2", "UltrasonicCleaner_1", "Tweezers_1", "Wristwatch_1"]
    g = _grounder(kb, ids)
    ref = _object(kb, "Pick up the flat dish to the right of the cleaning tank").quals[0].ref
    assert g._loose_ref(ref, ["PartsTray_1", "PartsTray_2"]) == ["UltrasonicCleaner_1"]
    # the phrase is no longer "not found" for want of its reference (without a toolset the
    # relation itself cannot be asked here: both trays stay)
    got = g.ground(_object(kb, "Pick up the parts tray to the right of the cleaning tank"))
    assert got.status == "several" and got.missing_ref is None
    assert any("cleaning tank" in n and "UltrasonicCleaner_1" in n for n in g.notes)


def test_no_reference_is_guessed_without_a_clear_winner(kb):
    ids = ["Lemon_1", "Lemon_2", "ChipTray_1", "Griddle_1", "DeepFryer_1"]
    g = _grounder(kb, ids)
    ref = _object(kb, "Slice the lemon next to the hotplate").quals[0].ref
    assert g._loose_ref(ref, ["Lemon_1", "Lemon_2"]) == []
    got = g.ground(_object(kb, "Slice the lemon next to the hotplate"))
    assert got.status == "none" and got.missing_ref is not None


def test_a_candidate_is_never_its_own_reference(kb):
    g = _grounder(kb, ["UltrasonicCleaner_1", "PartsTray_1"])
    ref = _object(kb, "Pick up the cleaner next to the cleaning tank").quals[0].ref
    assert g._loose_ref(ref, ["UltrasonicCleaner_1", "PartsTray_1"]) == []


@pytest.mark.parametrize("query, action, obj", [
    ("Grab the pot of honey as well.", "pick", "honey pot"),
    ("Grab the desk light too, please.", "pick", "desk light"),
    ("The goggles on the left of the red hat - get me those.", "pick", "goggles"),
    ("The spools by the vice - grab those.", "pick", "spools"),
])
def test_trailing_also_and_a_fronted_object_taken_up_by_a_pronoun(kb, query, action, obj):
    p = parse_query(query, "", kb)
    assert p.action == action and p.args["object"].raw == obj
