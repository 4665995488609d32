"""Clauses around the request (change 6 of the rules reasoner): what is inside ("that's got my
tea in it"), "has" in 's ("whatever's been left on"), parts after commas (a clarification "the
fuchsia one", a remark with its own subject, a lone "please"), a statement before "turn it off",
and "could I have ..."."""
import pytest

from raider_ros.agent.backends.rules.query import parse_query


def _obj(pq):
    np = pq.args["object"]
    return np.words, sorted((s.key, s.value) for s in np.states), [(q.phrase, q.ref.words if q.ref else None) for q in np.quals]


@pytest.mark.parametrize("query, action, words, states", [
    ("Bring me the mug that's got my tea in it.", "handover", ["mug"], [("filled", True)]),
    ("Pick up the paper cup that hasn't got anything in it yet.", "pick", ["paper", "cup"], [("filled", False)]),
    ("Bring me the cup that already has Mr Hale's tablets in it.", "handover", ["cup"], [("filled", True)]),
    ("Fetch the mug that isn't empty.", "pick", ["mug"], [("filled", True)]),
    ("Pick up the bowl with nothing in it", "pick", ["bowl"], [("filled", False)]),
    ("Could I have the purple chocolate, please?", "pick", ["chocolate"], [("colour", True)]),
])
def test_what_is_inside_and_could_i_have(kb, query, action, words, states):
    pq = parse_query(query, "", kb)
    got_words, got_states, _ = _obj(pq)
    assert pq.action == action and got_words == words and got_states == states


def test_a_negated_empty_is_not_also_nothing_inside(kb):
    st = parse_query("Fetch the mug that isn't empty.", "", kb).args["object"].states[0]
    assert st.value is True and not st.nothing_inside


@pytest.mark.parametrize("query, action, words, states, quals", [
    ("Turn off whatever's been left switched on on the counter, it's closing time.", "turn_off",
     ["whatever"], [("switched_on", True)], [("on", ["counter"])]),
    ("Something on this table has been left switched on. Turn it off, please.", "turn_off",
     ["something"], [("switched_on", True)], [("on", ["table"])]),
    ("The card machine's gone dark, turn it on for me?", "turn_on", ["card", "machine"], [], []),
    ("Switch the urn on, people will be wanting tea.", "turn_on", ["urn"], [], []),
    ("Pick up the thread beside the pin cushion, the fuchsia one.", "pick",
     ["thread"], [("colour", True)], [("beside", ["pin", "cushion"])]),
    ("The fish look gloomy, switch their tank light on.", "turn_on", ["tank", "light"], [], []),
    ("Could you power up whichever machine on the table is switched off at the moment?", "turn_on",
     ["machine"], [("switched_on", False)], [("on", ["table"])]),      # change 14: "whichever" is no name word
    ("Please, pick up the mug", "pick", ["mug"], [], []),
])
def test_parts_after_commas_and_statements_before_a_request(kb, query, action, words, states, quals):
    pq = parse_query(query, "", kb)
    assert pq.action == action and _obj(pq) == (words, states, quals)


def test_possessive_s_stays_a_possessive(kb):
    pq = parse_query("Hand Eleni her newspaper and bring Adriana's medicine", "", kb)
    assert pq.args["object"].words == ["newspaper"]
    pq = parse_query("Pick up Adriana's medicine", "", kb)
    assert pq.args["object"].owner == "Adriana"
