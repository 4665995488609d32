"""Change 10 of the rules reasoner: a verb the knowledge lacks that moves a lid ("twist the cap
off the bottle": open it), a participle before a relation ("the cheese sitting next to the
oatcakes"), and a plain noun that WordNet says some types are ("the shoe": the brogues, not the
shoe horn the embeddings liked)."""

import pytest

from raider_ros.agent.backends.rules import embedding
from raider_ros.agent.backends.rules.query import parse_query
from support.rules_fakes import grounder as _grounder


@pytest.mark.parametrize("query, action, obj", [
    ("Twist the cap off the pigment bottle for me.", "open", "pigment bottle"),
    ("Pop the lid off the tin that's still closed.", "open", "tin"),
    ("Prise the cork out of the wine bottle", "open", "wine bottle"),
    ("Pop the lid back on the paint tin.", "close", "paint tin"),
    ("Take the lid off the jar", "open", "jar"),          # a known verb, as before
    ("Cap the bottle", "close", "bottle"),                 # "cap" as the verb, as before
])
def test_a_lid_moved_off_or_on_by_any_verb(kb, query, action, obj):
    p = parse_query(query, "", kb)
    assert p.action == action and p.args["object"].raw == obj


def test_a_verb_the_knowledge_lacks_with_no_lid_names_no_action(kb):
    assert parse_query("Twist the knob", "", kb).action is None


@pytest.mark.parametrize("query, obj, relation, ref", [
    ("Pick up the cheese sitting next to the oatcakes.", "cheese", "next to", "oatcakes"),
    ("Grab the pocket heater lying near the lift pass.", "pocket heater", "near", "lift pass"),
    ("Pick up the mug standing on the left of the kettle", "mug", "on the left of", "kettle"),
    ("Grab the string next to the box", "string", "next to", "box"),     # a thing, not a participle
])
def test_a_participle_before_a_relation_is_dropped(kb, query, obj, relation, ref):
    o = parse_query(query, "", kb).args["object"]
    assert o.raw == obj and [(q.phrase, q.ref.raw) for q in o.quals] == [(relation, ref)]


def test_a_plain_noun_names_what_wordnet_says_is_one(kb):
    if not embedding.warm_up():
        pytest.fail(f"the packaged embedding model does not load: {embedding.unavailable_reason()}")
    ids = ["Brogue_1", "Brogue_2", "ShoeHorn_1", "ShoeStretcher_1", "Hammer_1"]
    g = _grounder(kb, ids)
    np = parse_query("Grab the shoe", "", kb).args["object"]
    assert sorted(g.match_name(np, ids)[0]) == ["Brogue_1", "Brogue_2"]


def test_a_plain_noun_takes_every_kind_of_it_and_no_type_that_only_carries_the_word(kb):
    if not embedding.warm_up():
        pytest.fail(f"the packaged embedding model does not load: {embedding.unavailable_reason()}")
    ids = ["CheeseCounter_1", "CheeseKnife_1", "Brie_1", "Cheddar_1", "Gouda_1", "Fig_1"]
    g = _grounder(kb, ids)
    np = parse_query("Slice the cheese, please.", "", kb).args["object"]
    got, _ = g.match_name(np, ids)
    assert sorted(got) == ["Brie_1", "Cheddar_1", "Gouda_1"]
