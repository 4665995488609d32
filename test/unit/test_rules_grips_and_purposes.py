"""Change 14 of the rules reasoner: the ways WordNet lists to take hold of a thing read as picking
it ("grip", "clasp", "hoist", "hold on to"), splitting as cutting, a verb the knowledge lacks
that gives the user something before any later word that looks like a verb ("lend me the
register that's already open"), a reason after "so I ..." that is no part of the object, and
"get X working" as switching it on."""
import pytest

from raider_ros.agent.backends.rules.knowledge import KnowledgeError, load_knowledge
from raider_ros.agent.backends.rules.lexicon import load_verb_senses
from raider_ros.agent.backends.rules.query import parse_query
from support.rules_fakes import edited_knowledge


@pytest.mark.parametrize("query, action, obj", [
    ("Grip the guard on the left of the bowstring.", "pick", "guard"),
    ("Clasp the glass that's still empty.", "pick", "glass"),
    ("Hoist the ballot box so I can sweep under it.", "pick", "ballot box"),
    ("Hold on to the flask for me.", "pick", "flask"),
    ("Split the log", "slice", "log"),
    ("Lend me the register that's already open.", "handover", "register"),
    ("Get the dew heater working before the lens mists over.", "turn_on", "dew heater"),
])
def test_more_verbs_read_by_their_sense(kb, query, action, obj):
    p = parse_query(query, "", kb)
    assert p.action == action and p.args["object"].raw == obj


def test_the_ways_to_get_or_take_are_not_picking(kb):
    # "earn", "depart", "exit": WordNet puts them under "get" or "take", which are pick verbs of
    # the knowledge, but not under the anchors of wordnet_verb_anchors
    senses = load_verb_senses()
    actions = {"pick": list(kb.wordnet_verb_anchors["pick"])}
    assert senses.action_of("grip", actions) == "pick" and senses.action_of("hoist", actions) == "pick"
    assert all(senses.action_of(v, actions) is None for v in ("earn", "depart", "exit", "desire", "vote"))
    assert parse_query("Exit the room", "", kb).action != "pick"


def test_a_reason_after_so_is_no_part_of_the_object(kb):
    p = parse_query("Hoist the ballot box so I can sweep under it.", "", kb)
    assert p.purpose == "so I can sweep under it"


def test_anchors_must_name_an_action_and_verbs(tmp_path):
    path = edited_knowledge(tmp_path, "language.yaml", "  pick: [grab, lift, grasp,", "  fly: [grab, lift, grasp,")
    with pytest.raises(KnowledgeError, match="wordnet_verb_anchors.fly"):
        load_knowledge(path)


@pytest.mark.parametrize("query, obj, result", [
    ("Carve a notch into the fletching jig.", "fletching jig", "a notch"),    # a notch is no thing
    ("Slice a lemon in the bowl", "lemon", ""),                               # a lemon is: where it lies
    ("Cut an apple into slices", "apple", "into slices"),
])
def test_what_a_cut_makes_in_or_into_a_thing(kb, query, obj, result):
    p = parse_query(query, "", kb)
    assert p.action == "slice" and p.args["object"].raw == obj and p.result == result


@pytest.mark.parametrize("query, head, clause, states", [
    ("Pluck whichever device is live right now.", "device", "is live", []),
    ("Switch off whichever machine is running.", "machine", "", [("switched_on", True)]),
])
def test_whichever_reads_as_a_relative_clause(kb, query, head, clause, states):
    np = parse_query(query, "", kb).args["object"]
    assert np.raw == head and np.clause == clause and [(s.key, s.value) for s in np.states] == states
