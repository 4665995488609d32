"""Change 24 of the rules reasoner: things named by their use that no instrument noun reaches
are the kinds WordNet's definitions say are made for that use ("something to sweep the floor
with": "broom: a cleaning implement for sweeping"; data/knowledge/wordnet_uses.tsv.gz from
scripts/gen_wordnet_uses.py), and a not-found answer names such a kind; "I need something to
ring" is a use, not a handover to someone called "ring"; "something I can turn ... with" reads
the verb past the auxiliary; one kind far ahead in meaning is taken for a phrase whose head is a
known kind only when that kind has the same head ("the icing bag": the piping bag, but "the
bowling ball" is no bowling pin, and "the bottle of ear cleaner" no shampoo bottle)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from raider_ros.agent.backends.rules.grounding import done_with, use_description, use_object, used_verb
from raider_ros.agent.backends.rules.lexicon import load_lexicon, load_uses
from raider_ros.agent.backends.rules.query import parse_query
from support.rules_fakes import assert_dev_case_right

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import gen_wordnet_uses as gen  # noqa: E402

VERBS = {"sweep", "mix", "spread", "light", "ignite", "dry", "wipe", "prune", "stir", "turn", "lift"}


@pytest.mark.parametrize("definition, uses", [
    ("a cleaning implement for sweeping; bundle of straws or twigs attached to a long handle", ["sweep"]),
    ("a hand tool with a thin flexible blade used to mix or spread soft substances", ["mix", "spread"]),
    ("a device for lighting or igniting fuel or charges or fires", ["light", "ignite"]),
    ("a rectangular piece of absorbent cloth (or paper) for drying or wiping", ["dry", "wipe"]),
    ("cooking utensil having a flat flexible part used to lift or turn over food", ["lift", "turn"]),
    ("a small pair of shears used for light pruning", []),          # "used for" wants a gerund
    ("a cleaning implement for sweeping and a long handle", ["sweep"]),
    ("a hollow device made of metal that makes a ringing sound when struck", []),
])
def test_uses_read_from_definitions(definition, uses):
    assert gen.uses_in(definition, VERBS, {}) == uses


@pytest.mark.parametrize("definition, uses", [
    ("a hand tool for driving screws; has a tip that fits into the head of a screw", [("drive", ["screw"])]),
    ("gauge for measuring and indicating fluid pressure", [("measure", ["fluid", "pressure"]),
                                                           ("indicate", ["fluid", "pressure"])]),
    ("measuring instrument for measuring temperature", [("measure", ["temperature"])]),
    ("a device for peeling vegetables or fruits", [("peel", ["vegetable"])]),
    ("a cleaning implement for sweeping; bundle of straws", [("sweep", [])]),
])
def test_uses_and_what_they_are_done_to(definition, uses):
    nouns = {"screw", "fluid", "pressure", "temperature", "vegetable", "fruit", "straw", "bundle"}
    verbs = VERBS | {"drive", "measure", "indicate", "peel"}
    assert gen.uses_with_objects(definition, verbs, {}, nouns, {}) == uses


def test_gerund_bases():
    verbs = {"cut", "dry", "light", "stir", "close", "ride"}
    assert gen.base_of("cutt", True, verbs, {}) == "cut"
    assert gen.base_of("stirr", True, verbs, {}) == "stir"
    assert gen.base_of("clos", True, verbs, {}) == "close"
    assert gen.base_of("rid", True, verbs, {"riding": "ride"}) == "ride"
    assert gen.base_of("zork", True, verbs, {}) is None


def test_made_for_reads_the_table():
    lex, uses = load_lexicon(), load_uses()
    assert uses.made_for(lex, ["broom"], ["sweep"])
    assert uses.made_for(lex, ["match"], ["light"])           # a match is a lighter, made for lighting
    assert uses.made_for(lex, ["bath", "towel"], ["dry"])
    assert not uses.made_for(lex, ["broom"], ["stir"])
    assert not uses.kinds_for(["hold"]) and not uses.kinds_for(["carry"])   # uses too wide to say what a thing is
    assert "broom" in uses.names(lex, ["sweep"])


def test_made_for_what_a_use_is_done_to():
    lex, uses = load_lexicon(), load_uses()
    assert uses.made_for_object(lex, ["screwdriver"], "screw")
    assert uses.made_for_object(lex, ["thermometer"], "temperature")
    assert not uses.made_for_object(lex, ["hammer"], "temperature")
    assert not uses.kinds_for_object("food")                  # too many things are for food to say which


def test_done_with_or_done_to():
    assert done_with(["something", "to", "sweep", "the", "floor", "with"], "sweep")
    assert done_with(["something", "i", "can", "drink", "out", "of"], "drink")
    assert not done_with(["something", "to", "eat"], "eat")       # the food, not the cutlery
    assert not done_with(["something", "to", "ring"], "ring")     # the bell itself


def test_use_object(kb):
    assert use_object(["something", "to", "tighten", "this", "screw", "with"], "tighten", kb) == "screw"
    assert use_object(["something", "to", "check", "the", "tyre", "pressure", "with"], "check", kb) == "pressure"
    assert use_object(["something", "to", "ring"], "ring", kb) is None
    assert use_object(["something", "to", "sit", "on"], "sit", kb) is None


def test_use_description_names_a_made_kind(kb):
    assert use_description(["something", "to", "sweep", "the", "floor", "with"], kb) == "a broom"
    assert use_description(["something", "to", "ring"], kb) is None
    assert use_description(["something", "to", "eat"], kb) is None
    heat = use_description(["thing", "we", "heat", "the", "meals", "in"], kb)
    assert heat and "such as a heater" not in heat        # a kind is no example of itself
    assert use_description(["something", "to", "sweep"], kb, said=["something", "to", "sweep", "the", "floor"]) == "a broom"


def test_used_verb_past_the_auxiliary(kb):
    assert used_verb(["something", "i", "can", "turn", "the", "sausages", "with"], kb) == "turn"
    assert used_verb(["thing", "i", "write", "with"], kb) == "write"
    assert used_verb(["something", "to", "stir", "the", "soup", "with"], kb) == "stir"


@pytest.mark.parametrize("query, obj, recipient", [
    ("I need something to ring before the service starts. Bring it here, please.", "something to ring", None),
    ("I need something to sweep the floor with. Bring it over.", "something to sweep", None),
    ("Give something to Maria.", "something", "Maria"),
    ("Give something to him.", "something", "him"),
    ("Give something to me", "something", "me"),
    ("Pass something to drink to the guest.", "something to drink", "guest"),
    ("Give the cup to the chef.", "cup", "chef"),
])
def test_to_after_something_is_a_use_unless_it_names_someone(kb, query, obj, recipient):
    pq = parse_query(query, "", kb)
    assert pq.args["object"].raw == obj
    got = pq.args.get("recipient")
    assert (got.raw if got is not None else None) == recipient


@pytest.mark.parametrize("case_id", [
    "h16-bowling_alley_counter-014",      # IU3 "bowling ball" with a bowling pin in view: still not found
    "h12-nail_salon_station-019",         # IU3 "nail buffer" with a nail file in view
    "h24-picnic_shelter-020",             # IU3 "picnic blanket" with a picnic table in view
    "ho-garage-017",                      # IU3 "wrench" with a screwdriver in view
    "h7-dog_grooming_salon-022",          # IU3 "the bottle of ear cleaner": its contents say what it is, no shampoo bottle
    "h6-newsagent_counter-023",           # IU3 pick(Stamps) with a card machine in view
])
def test_close_kinds_are_not_taken(reasoner, case_id):
    assert_dev_case_right(reasoner, case_id)


@pytest.mark.parametrize("case_id", [
    "h11-chocolatier_tempering_table-006",   # "the icing bag": the piping bag
    "h25-mountain_refuge_hut-020",           # IU3 "something to sweep the floor with": not found, a broom named
    "h18-robotics_club_table-011",           # "something to tighten this screw with": the two screwdrivers
    "h19-car_detailing_bay-007",             # "something to check the tyre pressure with": the pressure gauge
    "h24-farmhouse_dairy-004",               # "something to check the milk's temperature with": the thermometer
])
def test_mended_dev_cases(reasoner, case_id):
    assert_dev_case_right(reasoner, case_id)
