"""General lexical means of the rules reasoner (change 5): kinds of things from WordNet
(data/knowledge/wordnet_nouns.tsv.gz), people named by a role (data/knowledge/person_nouns.txt),
and the grammar of negated predicates, "re-" verbs, titled names and "something to V X with"."""
import gzip

import pytest

from raider_ros.agent.backends.rules import embedding
from raider_ros.agent.backends.rules.grounding import role_words
from raider_ros.agent.backends.rules.lexicon import load_lexicon
from raider_ros.agent.backends.rules.query import parse_query
from raider_ros.common.text import singular
from support.rules_fakes import grounder as _grounder


@pytest.fixture(scope="module")
def lex():
    return load_lexicon()


@pytest.mark.parametrize("type_words, phrase, expected", [
    (["spanner"], ["tool"], True),
    (["screwdriver"], ["tool"], True),
    (["toolbox"], ["tool"], False),           # a box for tools is no tool
    (["rag"], ["cloth"], True),
    (["sponge"], ["cloth"], False),
    (["banana"], ["fruit"], False),           # its most frequent sense is the plant (categories.yaml lists it)
    (["chair"], ["instrument"], False),       # not its third sense, the electric chair
    (["spray", "bottle"], ["bottle"], True),  # the longest tail WordNet knows
    (["dental", "floss"], ["dental", "floss"], True),
    (["toothbrush"], ["dental", "floss"], False),
    (["zorblax"], ["tool"], None),            # unknown to WordNet: no answer
    (["spanner"], ["zorblax"], None),
])
def test_kinds_of_things(lex, type_words, phrase, expected):
    assert lex.is_a(type_words, phrase) is expected


@pytest.mark.parametrize("type_words, phrase, expected", [
    (["pen"], ["biro"], True),                 # a ballpoint, a pen
    (["sunglasses"], ["shades"], True),        # one kind, two names
    (["napkin"], ["serviette"], True),
    (["dog"], ["poodle"], True),
    (["pen"], ["pencil"], False),
    (["mug"], ["cup"], False),
    (["apple"], ["pear"], False),
    (["knife"], ["fork"], False),
])
def test_a_phrase_may_name_a_close_kind_of_the_type(lex, type_words, phrase, expected):
    assert lex.names_a_kind_of(type_words, phrase) is expected


def test_a_broken_lexicon_file_names_its_line(tmp_path):
    bad = tmp_path / "w.tsv.gz"
    with gzip.open(bad, "wt") as f:
        f.write("# header\nL\tspanner\t1\nX broken\n")
    with pytest.raises(ValueError, match=r"w.tsv.gz:3: expected"):
        load_lexicon(str(bad))
    assert load_lexicon(str(tmp_path / "absent.tsv.gz")).senses(["spanner"]) == ()


def test_role_nouns_come_from_wordnet_but_never_name_an_object_type(kb):
    assert {"customer", "dentist", "barber", "receptionist"} <= kb.role_nouns
    assert "monitor" in kb.known_types and "monitor" not in kb.role_nouns    # WordNet: a person first
    assert not {"towel", "spanner", "doll"} & kb.role_nouns


@pytest.mark.parametrize("word, expected", [
    ("gloves", "glove"), ("olives", "olive"), ("valves", "valve"), ("wolves", "wolf"),
    ("shelves", "shelf"), ("knives", "knife"), ("leaves", "leaf"), ("loaves", "loaf"),
])
def test_plurals_in_ves(word, expected):
    assert singular(word) == expected


def _args(pq):
    return {role: (np.raw, np.words, [(s.key, s.value, s.colour) for s in np.states]) for role, np in pq.args.items()}


@pytest.mark.parametrize("query, action, expected", [
    ("Hand me the spanner that isn't red.", "handover",
     {"object": ("spanner", ["spanner"], [("colour", False, "red")]), "recipient": ("me", ["me"], [])}),
    ("Pick up the mugs that aren't blue", "pick", {"object": ("mugs", ["mug"], [("colour", False, "blue")])}),
    ("Pick the apple that hasn't been sliced", "pick", {"object": ("apple", ["apple"], [("sliced", False, None)])}),
    ("Get the towel that has been used", "pick", {"object": ("towel", ["towel"], [("clean", False, None)])}),
    ("Hand Dr Osei the forceps.", "handover",
     {"object": ("forceps", ["forcep"], []), "recipient": ("Dr Osei", ["dr", "osei"], [])}),
    ("Give Mrs Lindqvist the cup.", "handover",
     {"object": ("cup", ["cup"], []), "recipient": ("Mrs Lindqvist", ["mrs", "lindqvist"], [])}),
    ("Give Leila the towel.", "handover", {"object": ("towel", ["towel"], []), "recipient": ("Leila", ["leila"], [])}),
    ("Please give the customer their receipt.", "handover",
     {"object": ("receipt", ["receipt"], []), "recipient": ("customer", ["customer"], [])}),
    ("Could you refill the spray bottle?", "fill", {"object": ("spray bottle", ["spray", "bottle"], [])}),
    ("Reopen the box", "open", {"object": ("box", ["box"], [])}),
])
def test_negated_predicates_re_verbs_and_titled_names(kb, query, action, expected):
    pq = parse_query(query, "", kb)
    assert pq.action == action and _args(pq) == expected


def test_remove_is_no_move_again(kb):
    assert parse_query("Remove the lid", "", kb).action != "approach"


def test_something_to_do_with_names_the_instrument_not_its_object(kb):
    pq = parse_query("I need something to cut the bread with - could you get it for me?", "", kb)
    assert pq.action == "pick" and pq.args["object"].words == ["something", "to", "cut"]


@pytest.mark.parametrize("query, people, expected", [
    ("Give the towel to the customer.", {"Person_1": None}, ["Person_1"]),
    ("Pass the forceps to the dentist.", {"Person_1": "Dr Osei"}, ["Person_1"]),
    ("Give the box to the person waiting.", {"Person_1": "Dr Osei", "Person_2": "Mrs Lindqvist"},
     ["Person_1", "Person_2"]),
    ("Give the towel to Leila.", {"Person_1": None, "Person_2": "Leila"}, ["Person_2"]),
    ("Give the towel to Kenji.", {"Person_1": None, "Person_2": "Leila"}, []),     # a name nobody has
])
def test_a_role_names_the_people_present_a_name_only_its_owner(kb, query, people, expected):
    np = parse_query(query, "", kb).args["recipient"]
    g = _grounder(kb, ["Towel_1"], people).ground_person(np)
    assert sorted(g.ids) == expected


def test_role_words(kb):
    def words(q):
        return role_words(parse_query(q, "", kb).args["recipient"], kb)
    assert words("Give it to the customer") == ["customer"]
    assert words("Give it to the visitor Hana") == []
    assert words("Give it to Baker") == []


def test_a_kind_grounds_where_no_name_or_category_does(kb):
    if not embedding.warm_up():
        pytest.fail(f"the packaged embedding model does not load: {embedding.unavailable_reason()}")
    g = _grounder(kb, ["Rag_1", "ChainLube_1", "Spanner_1"], {})
    np = parse_query("Can you pass me that cloth?", "", kb).args["object"]
    assert g.match_name(np, ["Rag_1", "ChainLube_1", "Spanner_1"]) == (["Rag_1"], "kind")
    ids = ["Spanner_1", "Spanner_2", "Toolbox_1", "Bicycle_1"]
    np = parse_query("Pick up the tool", "", kb).args["object"]
    assert {"Spanner_1", "Spanner_2"} <= set(g.match_name(np, ids)[0])     # spanners are tools
    ids = ["Pen_1", "Pencil_1", "Stapler_1"]
    np = parse_query("Could you grab the biro for me?", "", kb).args["object"]
    assert g.match_name(np, ids) == (["Pen_1"], "kind")


@pytest.mark.parametrize("type_words, phrase, expected", [
    (["flashlight"], ["torch"], True),          # torch, third sense
    (["sweater"], ["jumper"], True),
    (["washcloth"], ["flannel"], True),
    (["eraser"], ["rubber"], True),             # a rubber eraser, a kind of eraser
    (["candle"], ["torch"], False),
    (["mug"], ["cup"], False),
    (["pen"], ["pencil"], False),
    (["sweater"], ["zorblax"], False),
])
def test_a_phrase_in_any_of_its_senses_may_be_a_synonym_of_the_type(lex, type_words, phrase, expected):
    assert lex.shares_a_sense(type_words, phrase) is expected


def test_a_synonym_in_a_later_sense_grounds_where_nothing_more_frequent_does(kb):
    if not embedding.warm_up():
        pytest.fail(f"the packaged embedding model does not load: {embedding.unavailable_reason()}")
    ids = ["Flashlight_1", "Candle_1", "Matchbox_1"]
    g = _grounder(kb, ids, {})
    np = parse_query("Hand me the torch", "", kb).args["object"]
    assert g.match_name(np, ids)[0] == ["Flashlight_1"]
    np = parse_query("Pick up the stapler", "", kb).args["object"]
    assert g.match_name(np, ids)[0] == []       # a thing nothing here is


def test_a_synonym_needs_the_whole_type_name(lex):
    # "stamp" in a later sense is a stamping machine, a machine; a card machine is no such thing
    assert lex.shares_a_sense(["card", "machine"], ["stamp"]) is False
