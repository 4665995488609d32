"""What the robot says to people names things as a person would (issue 9, demo narration)."""
from __future__ import annotations

from raider_ros.executor.machine import narrate_skill
from raider_ros.human.naming import PersonNames, dedupe_words

GRAPH = {
    "nodes": [{"id": "Medicine_1", "kind": "object", "type": "Medicine"},
              {"id": "Medicine_2", "kind": "object", "type": "Medicine"},
              {"id": "Plant_1", "kind": "object", "type": "Plant"},
              {"id": "Bottle_1", "kind": "object", "type": "Bottle"},
              {"id": "MedicineCounter_1", "kind": "object", "type": "MedicineCounter"},
              {"id": "Chair_1", "kind": "object", "type": "Chair"},
              {"id": "Mug_1", "kind": "object", "type": "Mug"}, {"id": "Mug_2", "kind": "object", "type": "Mug"},
              {"id": "Person_1", "kind": "person", "type": "Person", "name": "Adriana"},
              {"id": "Person_2", "kind": "person", "type": "Person", "name": None}],
    "edges": [{"subject": "Medicine_1", "relation": "near", "object": "Plant_1"},
              {"subject": "Medicine_2", "relation": "near", "object": "Bottle_1"},
              {"subject": "Medicine_1", "relation": "on top of", "object": "MedicineCounter_1"},
              {"subject": "Medicine_2", "relation": "on top of", "object": "MedicineCounter_1"}],
}


def test_ids_become_descriptions_a_person_understands():
    n = PersonNames(GRAPH)
    assert n.rewrite("Which medicine should I pick up, Medicine_1 or Medicine_2?") == \
        "Which medicine should I pick up, the medicine by the plant or the medicine by the bottle?"
    assert n.rewrite("Could you move Chair_1 out of the way?") == "Could you move the chair out of the way?"
    assert n.rewrite("handing Medicine_1 to Person_1") == "Handing the medicine by the plant to Adriana"
    assert n.rewrite("Person_2, could you look at me?") == "Could you look at me?"


def test_things_that_cannot_be_told_apart_keep_a_number_and_unknown_ids_stay():
    n = PersonNames(GRAPH)
    assert n.describe("Mug_1") == "mug 1" and n.describe("Kettle_9") == "Kettle_9"
    assert PersonNames(None).rewrite("pick Mug_1") == "Pick Mug_1"
    held = {"nodes": [*GRAPH["nodes"][1:], {"id": "Medicine_1", "kind": "object", "type": "Medicine", "held": True}]}
    assert PersonNames(held).describe("Medicine_1") == "the medicine I am holding"


def test_no_doubled_words():
    assert dedupe_words("step 1 step 1 done") == "step 1 done"
    assert dedupe_words("the chair or the chair blocks it") == "the chair blocks it"
    assert dedupe_words("The chair or chair") == "The chair"
    assert dedupe_words("a mug and a bowl") == "a mug and a bowl"


def test_skills_are_narrated_in_words():
    assert narrate_skill("pick", ["Medicine_1"]) == "picking up Medicine_1"
    assert narrate_skill("handover", ["Medicine_1", "Person_1"]) == "handing Medicine_1 to Person_1"
    assert narrate_skill("teleport", ["Mars"]) == "teleport Mars"
