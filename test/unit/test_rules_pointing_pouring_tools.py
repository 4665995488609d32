"""Change 18 of the rules reasoner: "put it on the hot plate" with an empty gripper points at
nothing (the answer says so and grounds only the place, not every id in view); an ambiguous
argument keeps the others in the grounding ("pass this receipt book to the customer"); a
recipient found by WordNet's person senses ("take this to the teacher") and a role clarified with
a phrase after it ("Jonas is the teacher on snack duty today"); "pour me some water in the mug"
fills the mug; one notion of a knife for the parser, the precondition check and the simulated
skill (a type named "...Knife" or a knife by WordNet: the scalpel); a word list in YAML that reads
a bare on/off as a boolean is refused."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from raider_ros.agent.backends.rules.knowledge import KnowledgeError, load_knowledge
from raider_ros.agent.backends.rules.lexicon import type_is_a
from raider_ros.agent.backends.rules.query import parse_query
from raider_ros.sim.skills import is_knife
from support.rules_fakes import assert_dev_case_right, edited_knowledge


def test_take_this_to_a_person_by_wordnet_and_a_role_with_a_phrase_after_it(kb):
    p = parse_query("Take this to the teacher, please.", "Jonas is the teacher on snack duty today.", kb)
    assert p.action == "handover" and p.args["recipient"].words == ["teacher"]
    assert p.role_names == {"teacher": "jonas"}
    assert parse_query("Take the box to the kitchen.", "", kb).action == "pick"        # a room is no one


def test_pour_me_some_liquid_in_a_container_fills_it(kb):
    p = parse_query("Pour me some water in the clean mug.", "", kb)
    assert p.action == "fill" and p.args["object"].words == ["mug"]
    assert parse_query("Pour me a glass of water.", "", kb).action == "handover"


@pytest.mark.parametrize("type_name, knife", [
    ("Knife", True), ("BreadKnife", True), ("PenKnife", True), ("Scalpel", True), ("Cleaver", True),
    ("KnifeBlock", False), ("Scissors", False), ("Spatula", False), ("PizzaCutter", False),
])
def test_one_notion_of_a_knife(type_name, knife):
    assert type_is_a(type_name, "knife") is knife
    assert is_knife(SimpleNamespace(type=type_name)) is knife       # the simulated slice skill agrees


def test_a_bare_on_in_a_word_list_is_refused(tmp_path):
    path = edited_knowledge(tmp_path, "language.yaml", 'in, "on", at, by', "in, on, at, by")
    with pytest.raises(KnowledgeError, match=r"function_words: a word read as the boolean True; quote it"):
        load_knowledge(path)


def test_the_loaded_function_words_hold_on(kb):
    assert "on" in kb.function_words and "True" not in kb.function_words


@pytest.mark.parametrize("case_id", [
    "h19-soil_testing_lab-027",           # "Put it on the hot plate." with an empty gripper
    "h19-car_detailing_bay-026",          # "Drop it in the bucket."
    "h19-dry_cleaner_counter-012",        # "Pass this receipt book to the customer": two customers
    "h19-preschool_snack_table-006",      # "take this to the teacher" + "Jonas is the teacher on ..."
    "h19-podcast_booth-022",              # "Pour me some water in the clean mug."
    "h17-microbiology_lab-004",           # "... with the scalpel": a knife
])
def test_mended_dev_cases(reasoner, case_id):
    assert_dev_case_right(reasoner, case_id)
