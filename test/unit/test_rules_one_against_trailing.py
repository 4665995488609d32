"""Change 20 of the rules reasoner: "the one that's still on" takes its noun from an earlier
sentence ("Someone left a laptop running."); "up against" / "against" is near; a last lower-case
word after a comma that names nothing the knowledge knows says how, not what ("Open the till,
quick."); a drink named while the gripper holds a vessel is handed over in it ("give Arthur the
water" while holding his cup)."""
from __future__ import annotations

import pytest

from raider_ros.agent.backends.rules.query import parse_query
from support.rules_fakes import assert_dev_case_right


def test_the_one_takes_its_noun_from_an_earlier_sentence(kb):
    p = parse_query("Someone left a laptop running. Can you switch off the one that's still on?", "", kb)
    assert p.action == "turn_off" and p.args["object"].words == ["laptop"]
    assert [(s.key, s.value) for s in p.args["object"].states] == [("switched_on", True)]
    assert parse_query("Pick up the one on the left.", "", kb).args["object"].words == ["one"]   # no earlier noun


@pytest.mark.parametrize("query", ["Pick up the mug that's sitting right up against the kettle.",
                                   "Pick up the mug against the kettle."])
def test_against_is_near(kb, query):
    q = parse_query(query, "", kb).args["object"].quals
    assert [(x.relations, x.ref.words) for x in q] == [(("near",), ["kettle"])]


@pytest.mark.parametrize("query, action, words", [
    ("Open the till, quick.", "open", ["till"]),
    ("Turn the lamp off, quickly!", "turn_off", ["lamp"]),
    ("Pick up the fruit, apple.", "pick", ["fruit", "apple"]),        # a kind of object stays
    ("Give the cup to her, Maria.", "handover", ["cup"]),            # a name stays
])
def test_a_last_word_that_names_nothing_is_dropped(kb, query, action, words):
    p = parse_query(query, "", kb)
    assert p.action == action and p.args["object"].words == words


@pytest.mark.parametrize("case_id", [
    "h21-meeting_room-008",               # "Someone left a laptop running. ... the one that's still on"
    "h21-office_break_room-006",          # "right up against the kettle"
    "h21-greengrocer_stall-022",          # "Open the till, quick."
    "h21-gp_waiting_room-005",            # "Give Arthur the water" while holding his cup
    "h21-gp_waiting_room-014",            # "Hand Arthur his water": too far for a handover
])
def test_mended_dev_cases(reasoner, case_id):
    assert_dev_case_right(reasoner, case_id)
