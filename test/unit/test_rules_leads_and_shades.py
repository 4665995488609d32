"""Change 8 of the rules reasoner: phrasal verbs and request leads ("top up", "bring over the",
"I'd like", "find me"), "take X over to <someone>" as a handover, un- before a state word, a
colour word that ends a noun of its own ("ice cream"), a remark whose subject is a person after a
dash, shades of the colour survey compared with the measured RGB, and the last-resort readings
of a phrase by WordNet (a synonym of what a type holds, the head noun of a phrase whose
modifiers nothing here has)."""

import pytest

from raider_ros.agent.backends.rules.lexicon import load_lexicon
from raider_ros.agent.backends.rules.query import parse_query
from support.rules_fakes import Props as _Props, grounder as _grounder


def _obj(pq):
    np = pq.args["object"]
    return np.words, sorted((s.key, s.value) for s in np.states)


@pytest.mark.parametrize("query, action, words, states", [
    ("Could you top up the shoyu, please?", "fill", ["shoyu"], []),
    ("Can you bring over the bottle of rice wine?", "handover", ["rice", "wine", "bottle"], []),
    ("I'd like the teacup that hasn't been poured yet.", "pick", ["teacup"], []),
    ("I would like the red mug", "pick", ["mug"], [("colour", True)]),
    ("Could you find me the stapler?", "pick", ["stapler"], []),
    ("Pick up the unlit lantern.", "pick", ["lantern"], [("switched_on", False)]),
    ("Pick up the unopened jar", "pick", ["jar"], [("open", False)]),
    ("Grab the lantern that's lit", "pick", ["lantern"], [("switched_on", True)]),
    ("Could you fill the ice cream scoop with water?", "fill", ["ice", "cream", "scoop"], []),
    ("Fill up the empty mug, please - the teller wants some water.", "fill", ["mug"], [("filled", False)]),
])
def test_verbs_leads_and_states(kb, query, action, words, states):
    pq = parse_query(query, "", kb)
    assert pq.action == action and _obj(pq) == (words, states)


def test_the_relation_over_needs_an_object_before_it(kb):
    pq = parse_query("Pick up the mug over the shelf", "", kb)
    assert [(q.phrase, q.ref.words) for q in pq.args["object"].quals] == [("over", ["shelf"])]


@pytest.mark.parametrize("query, recipient", [
    ("Take the coin tray over to the client.", ["client"]),
    ("Could you take this whistle over to Aisha Bello?", ["aisha", "bello"]),
    ("Take the cup to him", ["him"]),
])
def test_taking_something_to_someone_is_a_handover(kb, query, recipient):
    pq = parse_query(query, "", kb)
    assert pq.action == "handover" and pq.args["recipient"].words == recipient


def test_taking_something_to_a_place_stays_a_pick(kb):
    assert parse_query("Take the mug to the sink", "", kb).action == "pick"
    assert parse_query("Take the mug next to the customer", "", kb).action == "pick"
    assert parse_query("Grab the mug to the left of the customer", "", kb).action == "pick"


def test_id_like_then_a_pronoun_request_is_one_request(kb):
    pq = parse_query("I'd like the orange, can you get it?", "", kb)
    assert pq.action == "pick" and pq.args["object"].words == ["orange"]


def test_a_lemma_cut_by_the_plural_rule_is_found():
    lex = load_lexicon()
    assert lex.senses(["contact", "len"]) == lex.senses(["contact", "lens"]) != ()


def test_survey_shades_have_their_own_rgb_basic_words_do_not(kb):
    assert "mauve" in kb.colour_shades and "celadon" in kb.colour_shades
    assert "red" not in kb.colour_shades and "grey" not in kb.colour_shades


@pytest.mark.parametrize("word, expected", [
    ("celadon", ["GlazeJar_1", "GlazeJar_3"]),       # both pale green jars; the dark red one is not
    ("mauve", ["Mug_1", "Mug_2"]),                   # measured "grey", but the shade is near
])
def test_a_shade_is_compared_with_the_measured_rgb(kb, word, expected):
    seen = {"GlazeJar_1": ("white", [0.57, 0.70, 0.60]), "GlazeJar_3": ("white", [0.55, 0.68, 0.58]),
            "GlazeJar_2": ("red", [0.45, 0.05, 0.07]),
            "Mug_1": ("grey", [0.51, 0.38, 0.55]), "Mug_2": ("grey", [0.50, 0.38, 0.54])}
    ids = [i for i in seen if i.startswith("Glaze" if word == "celadon" else "Mug")]
    if word == "mauve":
        ids = ids + ["GlazeJar_1"]
    g = _grounder(kb, ids, obs=_Props(seen))
    st = parse_query(f"Pick up the {word} thing", "", kb).args["object"].states[0]
    keep, waiting, why = g._colour_filter(ids, st)
    assert not waiting and keep == expected and len(why) == len(ids) - len(expected)


@pytest.mark.parametrize("phrase, ids, expected", [
    ("Pass me a serviette", ["NapkinStack_1", "Scoop_1"], ["NapkinStack_1"]),
    ("Could you take the lid off the change tray?", ["CoinTray_1", "Stapler_1"], ["CoinTray_1"]),
    ("Pick up the little brass bell.", ["ServiceBell_1", "RubberStamp_1"], ["ServiceBell_1"]),
    ("Open the bottle of ear cleaner.", ["ShampooBottle_1", "Towel_1"], []),       # other contents
    ("Grab the bag of tulip bulbs.", ["CompostBag_1", "Trowel_1"], []),
    ("pick(ContactLensCase)", ["GlassesCase_1", "GlassesCase_2"], []),            # another thing
])
def test_the_last_resort_readings_by_wordnet(kb, phrase, ids, expected):
    np = parse_query(phrase, "", kb).args["object"]
    g = _grounder(kb, ids)
    assert g._by_head(np.words, ids) == expected
