"""Change 16 of the rules reasoner: a past participle says the state its verb's action leaves
(action_results: "the watering can that's been drained" is empty, drain being a verb of emptying;
"the box that's been unlocked" is open by WordNet), "nobody has filled" negates it, "used up" is
empty, "bring along" is a handover with a particle, "left open" is a state, not a result; a thing
that "needs V-ing" asks for the action; "for" and a bare noun after a changed object is what it
is for; a plural WordNet knows on its own ("glasses", "specs": spectacles) names that thing."""
from __future__ import annotations

import pytest

from raider_ros.agent.backends.rules.grounding import lex_words
from raider_ros.agent.backends.rules.knowledge import KnowledgeError, load_knowledge
from raider_ros.agent.backends.rules.query import _participle_bases, parse_query
from support.rules_fakes import edited_knowledge, grounder as _grounder


def _states(kb, query):
    p = parse_query(query, "", kb)
    return p.action, p.args["object"].raw, [(s.key, s.value) for s in p.args["object"].states]


@pytest.mark.parametrize("query, obj, state", [
    ("Bring along the watering can that's been drained.", "watering can", ("filled", False)),
    ("I'll need the paint pot that's been emptied.", "paint pot", ("filled", False)),
    ("Pick up the box that's been unlocked.", "box", ("open", True)),          # WordNet: a way to open
    ("Take the mug that has been washed.", "mug", ("clean", True)),            # a state word, as before
])
def test_a_participle_says_the_state_its_action_leaves(kb, query, obj, state):
    _, raw, states = _states(kb, query)
    assert raw == obj and states == [state]


@pytest.mark.parametrize("query, state", [
    ("Bring along the soda cup nobody has filled.", ("filled", False)),
    ("Could you send over the spray bottle nobody has filled yet?", ("filled", False)),
    ("Grab the jar that nobody has opened.", ("open", False)),
    ("Grab the jar no one has opened.", ("open", False)),
])
def test_nobody_has_negates_the_state(kb, query, state):
    assert _states(kb, query)[2] == [state]


def test_used_up_is_empty_and_used_is_dirty(kb):
    assert _states(kb, "Send over the oil can that's been used up.")[2] == [("filled", False)]
    assert _states(kb, "Grab the cup that's been used.")[2] == [("clean", False)]


def test_a_participle_of_no_action_says_nothing(kb):
    assert _states(kb, "Pick up the book that's been read.")[2] == []


def test_bring_along_is_a_handover_and_left_open_a_state(kb):
    action, raw, _ = _states(kb, "Bring along the watering can that's been drained.")
    assert action == "handover" and raw == "watering can"
    action, raw, states = _states(kb, "Get the tin that's been left open.")
    assert action == "pick" and raw == "tin" and states == [("open", True)]
    assert parse_query("Get the lamp on.", "", kb).action == "turn_on"      # a result state still is one


def test_participle_bases():
    assert "drain" in _participle_bases("drained")
    assert "empty" in _participle_bases("emptied") and "stop" in _participle_bases("stopped")
    assert "use" in _participle_bases("used") and _participle_bases("red") == []


def test_action_results_must_name_an_action_and_a_state(tmp_path):
    path = edited_knowledge(tmp_path, "language.yaml", "action_results: {open: [open, true]",
                            "action_results: {open: [ajar, true]")
    with pytest.raises(KnowledgeError, match="action_results.open"):
        load_knowledge(path)
    assert load_knowledge().action_results["empty"] == ("filled", False)


@pytest.mark.parametrize("query, action, obj", [
    ("The oil can that's empty needs filling, could you do that?", "fill", "oil can"),
    ("The mug needs washing.", "clean", "mug"),
    ("The bread needs slicing, then bring it to me.", "slice", "bread"),
])
def test_a_thing_that_needs_doing_is_the_request(kb, query, action, obj):
    p = parse_query(query, "", kb)
    assert p.action == action and p.args["object"].raw == obj


def test_a_statement_of_state_is_no_request(kb):
    assert parse_query("The cup is dirty.", "", kb).action is None


@pytest.mark.parametrize("query, obj, purpose", [
    ("Cut the bread for toast.", "bread", "for toast"),
    ("Open the tin for the kids.", "tin", "for the kids"),
])
def test_what_a_change_is_for_is_no_part_of_the_object(kb, query, obj, purpose):
    p = parse_query(query, "", kb)
    assert p.args["object"].raw == obj and p.purpose == purpose


def test_what_a_fetched_thing_is_for_may_say_which_it_is(kb):
    assert parse_query("Get the box for paperclips.", "", kb).args["object"].raw == "box for paperclips"


# ------------------------------------------------------------------ plurals WordNet knows on their own

@pytest.mark.parametrize("query, ids, expected", [
    ("Pass me my specs, I want to read.", ["ReadingGlasses_1", "Apple_1", "WaterGlass_1"], ["ReadingGlasses_1"]),
    ("Grab my glasses too.", ["ReadingGlasses_1", "WaterGlass_1", "WaterGlass_2"], ["ReadingGlasses_1"]),
    ("Grab the glasses.", ["WaterGlass_1", "WaterGlass_2"], ["WaterGlass_1", "WaterGlass_2"]),   # no spectacles here
    ("Grab the scissors.", ["Scissors_1", "Knife_1"], ["Scissors_1"]),
])
def test_a_plural_wordnet_knows_on_its_own_names_that_thing(kb, query, ids, expected):
    np = parse_query(query, "", kb).args["object"]
    assert sorted(_grounder(kb, ids).match_name(np, ids)[0]) == expected


def test_a_type_is_read_by_its_plural_only_when_wordnet_knows_it():
    assert lex_words("ReadingGlasses_1") == ["reading", "glasses"]
    assert lex_words("Headphones_1") == ["headphone"] and lex_words("WaterGlass_2") == ["water", "glass"]


def test_for_a_bare_noun_is_a_purpose_only_for_a_thing_made_or_changed(kb):
    p = parse_query("Switch on the bell customers tap for service.", "", kb)
    assert p.action == "turn_on" and p.purpose == "" and "service" in p.args["object"].text
