"""Change 21 of the rules reasoner: a part after a comma or dash that is a sentence of its own
(a subject and a finite verb: "the drinks are in there", "my earring rolled underneath") is a
remark, not part of the object; "and check whether ..." starts a second request; adverbials such
as "first" and "a bit" at the end say when or how much, not what; WordNet senses of a type in view
are a thing's ("jumper": the sweater, not someone who jumps; "scale": the weighing machine) and an
open compound is looked up closed ("ice box": icebox); a thing named by what it is doing ("the
thing that's projecting onto the wall") is found by the agent noun in -or (a projector) as in -er,
and "weigh" by its "weighing machine"."""
from __future__ import annotations

import pytest

from raider_ros.agent.backends.rules.grounding import instrument_nouns, used_verb
from raider_ros.agent.backends.rules.lexicon import load_lexicon
from raider_ros.agent.backends.rules.query import _own_clause, parse_query, query_words
from support.rules_fakes import assert_dev_case_right


@pytest.mark.parametrize("query, action, words", [
    ("Open the ice box, the drinks are in there.", "open", ["ice", "box"]),
    ("Pick the counter up, my earring rolled underneath.", "pick", ["counter"]),
    ("Lift the belt up, something's rolled under it.", "pick", ["belt"]),
    ("Turn the music off, that speaker is way too loud.", "turn_off", ["music"]),
    ("Open the book and check whether someone wrote their name inside.", "open", ["book"]),
    ("Deal the cards - open the pack first.", "open", ["pack"]),
    ("Cut the plant back a bit, it's overgrown.", "slice", ["plant"]),
])
def test_a_clause_of_its_own_is_no_part_of_the_object(kb, query, action, words):
    p = parse_query(query, "", kb)
    assert p.action == action and p.args["object"].words == words


@pytest.mark.parametrize("part, own", [
    ("the drinks are in there", True),
    ("that speaker is way too loud", True),
    ("my earring rolled underneath", True),
    ("something is rolled under it", True),
    ("the mug left of the bowl", False),          # a relation says which mug
    ("the watering can to the left of the pump", False),   # "can" is part of a noun here
    ("the one that is clean", False),             # which one
    ("the red mug", False),                       # no verb
    ("the mug filled with tea", False),           # a participle after a determiner describes
    ("pick up the mug", False),
])
def test_own_clause(kb, part, own):
    assert _own_clause(query_words(part), kb) is own


def test_a_description_after_a_comma_still_says_which(kb):
    p = parse_query("Pick up the mug, the one that's clean.", "", kb)
    assert p.args["object"].words == ["mug"] and [s.key for s in p.args["object"].states] == ["clean"]
    p = parse_query("Pick up the salt and pepper if you can.", "", kb)
    assert p.args["object"].words == ["salt", "and", "pepper"]      # "and pepper" is no second request


def test_type_senses_are_things():
    lex = load_lexicon()
    assert lex.is_a(["jumper"], ["sweater"]) and lex.shares_a_sense(["jumper"], ["sweater"])
    assert lex.is_a(["guard"], ["person"]) is False       # a guard in view is a fire guard
    assert lex.is_a(["scale"], ["weighing", "machine"])   # its first sense is no thing
    assert lex.is_a(["cooler"], ["ice", "box"])           # "ice box" is the icebox
    assert lex.is_a(["cooler"], ["ice", "cream"]) is False
    assert lex.senses(["teapot"]) == lex.senses(["tea", "pot"])
    assert lex.names_a_kind_of(["bread", "roll"], ["croissant"]) is False   # not every sense of "roll"


def test_things_named_by_what_they_do(kb):
    assert used_verb(["s", "projecting", "onto", "the", "wall"], kb) == "projecting"
    assert used_verb(["is", "red"], kb) is None
    assert ["projector"] in instrument_nouns("projecting", kb)
    assert ["weighing", "machine"] in instrument_nouns("weigh", kb)
    assert ["generator"] not in instrument_nouns("cut", kb)


@pytest.mark.parametrize("query, action, words", [
    ("Keiko's having the eye treatment, so I need the cucumber cut into rounds.", "slice", ["cucumber"]),
    ("I want the door closed.", "close", ["door"]),
    ("I'd like the lamp switched off, please.", "turn_off", ["lamp"]),
    ("We need the box opened.", "open", ["box"]),
])
def test_wanting_a_thing_done_asks_for_it(kb, query, action, words):
    p = parse_query(query, "", kb)
    assert p.action == action and p.args["object"].words == words


@pytest.mark.parametrize("query, state", [
    ("I want the sliced bread.", ("sliced", True)),          # the participle before the noun says which
    ("I'd like the teacup that hasn't been poured yet.", None),
])
def test_wanting_a_thing_in_a_state_is_not_an_action(kb, query, state):
    p = parse_query(query, "", kb)
    assert p.action == "pick"
    if state:
        assert [(s.key, s.value) for s in p.args["object"].states] == [state]


def test_a_particle_after_a_determiner_is_a_noun(kb):
    q = parse_query("Grab the mug beside the cereal box at the back.", "", kb).args["object"].quals
    assert sorted((x.phrase, x.superlative) for x in q) == [("at the back", "max"), ("beside", None)]
    p = parse_query("Put the lid back on the jar.", "", kb)
    assert p.action == "close" and p.args["object"].words == ["jar"]


@pytest.mark.parametrize("query, state", [
    ("Grab the clean towel - leave the one that's been used.", ("clean", True)),
    ("Take the red cup, not the blue one.", ("colour", True)),
])
def test_what_not_to_take_is_left_out(kb, query, state):
    p = parse_query(query, "", kb)
    assert p.action == "pick" and [(s.key, s.value) for s in p.args["object"].states] == [state]
    assert parse_query("Leave the door open.", "", kb).action == "open"      # a request of its own


def test_particles_and_the_to_of_a_relation(kb):
    p = parse_query("Hand this over to Nadia.", "", kb)
    assert p.action == "handover" and p.args["recipient"].raw == "Nadia"
    p = parse_query("Pass that to the customer standing next to you.", "", kb)
    assert p.args["recipient"].words == ["customer"]                    # "next to you" says which customer
    p = parse_query("Hand the cup next to the kettle to Maria.", "", kb)
    assert p.args["object"].words == ["cup"] and p.args["recipient"].raw == "Maria"
    p = parse_query("Heft the fleshing wheel over to the sink.", "", kb)
    assert p.args["object"].words == ["fleshing", "wheel"] and not p.args["object"].quals
    assert p.purpose == "over to the sink"
    q = parse_query("Pick up the lamp over the desk.", "", kb).args["object"].quals
    assert [x.relations for x in q] == [("above",)]                      # "over" the desk is above it
    p = parse_query("Switch the toaster on, would you? I'd like my bread toasted.", "", kb)
    assert p.action == "turn_on" and p.args["object"].words == ["toaster"]


@pytest.mark.parametrize("case_id", [
    "h20-walk_in_closet-024",                # "Pick the counter up, my earring rolled underneath."
    "h22-charity_shop_sorting_table-027",    # "Open the book and check whether ..."
    "h20-backyard_barbecue-007",             # "Open the ice box, the drinks are in there."
    "h21-meeting_room-013",                  # "the thing that's projecting onto the wall"
    "h22-deli_counter-023",                  # "the thing we weigh the meat on"
    "h21-gp_waiting_room-001",               # "Pick up the cup of water.": the filled one
    "h22-spa_treatment_room-003",            # "so I need the cucumber cut into rounds"
    "h21-office_break_room-014",             # "the mug beside the cereal box at the back"
    "h19-dry_cleaner_counter-025",           # "Hand this over to Nadia."
    "h20-hotel_breakfast_buffet-002",        # "Switch the toaster on? I'd like my bread toasted."
])
def test_mended_dev_cases(reasoner, case_id):
    assert_dev_case_right(reasoner, case_id)
