"""Change 11 of the rules reasoner: a verb the knowledge lacks read by its WordNet sense
("unlock": open; "snip": cut), a liquid moved into something as filling it ("pour some water
into the kettle"), "the slab of wax" as the wax slab or the wax, shades named by two words
("olive green"), a colour that perception reported as its neighbour by a close call, and a
fronted object taken up by "it" after a verb the knowledge lacks."""
import gzip

import pytest

from raider_ros.agent.backends.rules import embedding
from raider_ros.agent.backends.rules.knowledge import KnowledgeError, load_knowledge
from raider_ros.agent.backends.rules.lexicon import VerbSenses, load_lexicon, load_verb_senses
from raider_ros.agent.backends.rules.query import parse_query
from support.rules_fakes import Props as _Props, edited_knowledge, grounder as _grounder


# ------------------------------------------------------------------ verbs by WordNet

@pytest.mark.parametrize("query, action, obj", [
    ("Could you unlock the padlock that's still shut?", "open", "padlock"),
    ("Snip the felt strip in two, please.", "slice", "felt strip"),
    ("Carve up the ham", "slice", "ham"),
    ("Trim the wick", "slice", "wick"),
    ("Hoover the rug", "clean", "rug"),
    ("Refill the kettle", "fill", "kettle"),
])
def test_an_unknown_verb_means_the_action_its_wordnet_sense_is_or_lies_under(kb, query, action, obj):
    p = parse_query(query, "", kb)
    assert p.action == action and p.args["object"].raw == obj


@pytest.mark.parametrize("query", [
    "Run the dishwasher",        # "run": a way to travel; moving is not among wordnet_verb_actions
    "Unbuckle the messenger bag",  # "undo" is no verb of any action
    "Halve the fig",             # "divide" is no verb of any action
])
def test_a_verb_whose_sense_is_no_action_here_is_not_given_one(kb, query):
    assert parse_query(query, "", kb).action is None


def test_a_known_verb_keeps_its_own_action(kb):
    # "open" is in language.yaml: WordNet is not asked, whatever it says of the word
    assert parse_query("Open the padlock", "", kb).action == "open"
    assert parse_query("Stop the fan", "", kb).action == "turn_off"


def test_verb_senses_need_one_action_and_a_sense_at_most_one_level_up():
    senses = VerbSenses({"unlock": "2", "open": "1", "prise": "3", "move": "9", "nudge": "4"},
                        {"2": ("1",), "3": ("2",), "4": ("9",)})
    actions = {"open": ["open"], "approach": ["move"]}
    assert senses.action_of("unlock", actions) == "open"      # directly under open
    assert senses.action_of("open", actions) == "open"        # the same sense
    assert senses.action_of("prise", actions) is None         # two levels up: too general
    assert senses.action_of("nudge", {"open": ["open"]}) is None
    assert senses.action_of("nudge", {"a": ["move"], "b": ["move"]}) is None   # two actions: unsure
    assert senses.action_of("unknown", actions) is None


def test_the_verb_table_is_read_and_a_broken_line_is_named(tmp_path):
    table = load_verb_senses()
    assert table.sense("unlock") and table.sense("open")
    bad = tmp_path / "verbs.tsv.gz"
    with gzip.open(bad, "wt") as f:
        f.write("unlock\tnot-a-synset\t\n")
    with pytest.raises(ValueError, match="verbs.tsv.gz:1"):
        load_verb_senses(str(bad))
    assert load_verb_senses(str(tmp_path / "missing.tsv.gz")).sense("unlock") is None


def test_the_noun_table_names_a_broken_line_and_reads_comments_as_nothing(tmp_path):
    good = tmp_path / "nouns.tsv.gz"
    with gzip.open(good, "wt") as f:
        f.write("# a comment\n\nL\tmug\t1,2\n")
    assert load_lexicon(str(good)).senses(["mug"])
    bad = tmp_path / "nouns_bad.tsv.gz"
    with gzip.open(bad, "wt") as f:
        f.write("L\tmug\t1\nX\tcup\t2\n")
    with pytest.raises(ValueError, match=r"nouns_bad.tsv.gz:2: expected 'L\|A\|S"):
        load_lexicon(str(bad))


def test_wordnet_verb_actions_must_be_actions(tmp_path):
    path = edited_knowledge(tmp_path, "language.yaml", "wordnet_verb_actions: [open,", "wordnet_verb_actions: [fly, open,")
    with pytest.raises(KnowledgeError, match="wordnet_verb_actions: 'fly'"):
        load_knowledge(path)


# ------------------------------------------------------------------ liquids moved into things

@pytest.mark.parametrize("query, obj", [
    ("Pour some water into the green fly box.", "fly box"),
    ("Put some water in the glue warmer", "glue warmer"),
    ("Add some water to the scent diffuser.", "scent diffuser"),
    ("Splash some water into the open glue can.", "glue can"),     # not "open" the glue can
    ("Put some distilled water in the box of needles that's open.", "needles box"),
    ("Add a splash of milk to the jug", "jug"),
    ("Get some water into the kettle", "kettle"),
])
def test_a_liquid_moved_into_something_fills_it(kb, query, obj):
    p = parse_query(query, "", kb)
    assert p.action == "fill" and p.args["object"].raw == obj and list(p.args) == ["object"]


@pytest.mark.parametrize("query, action", [
    ("Put the milk in the fridge", "place"),        # the milk: an object (a carton), not an amount
    ("Put the mug in the sink", "place"),           # no liquid
    ("Put some sugar in the bowl", "place"),        # a substance, but no liquid
    ("Take the milk in the fridge", "pick"),        # "in" says where it is after a pick verb
])
def test_what_is_no_amount_of_liquid_keeps_its_verb(kb, query, action):
    assert parse_query(query, "", kb).action == action


def test_liquids_are_told_by_wordnet():
    lex = load_lexicon()
    kinds = [["liquid"], ["beverage"]]
    assert all(lex.under_any(w.split(), kinds) for w in ("water", "distilled water", "coffee", "milk", "tea"))
    assert not any(lex.under_any(w.split(), kinds) for w in ("sugar", "glass", "water bottle", "kettle"))


# ------------------------------------------------------------------ "the slab of wax"

@pytest.mark.parametrize("query, ids, expected", [
    ("Could you trim the strip of hide?", ["HideStrip_1", "Awl_1", "Hammer_1"], ["HideStrip_1"]),
    ("Slice the strip of hide in two.", ["Hide_1", "Awl_1"], ["Hide_1"]),
    ("Hand me the can of switch cleaner.", ["SwitchCleaner_1", "Screwdriver_1"], ["SwitchCleaner_1"]),
])
def test_a_piece_or_container_of_something_is_read_as_english_also_says_it(kb, query, ids, expected):
    np = parse_query(query, "", kb).args["object"]
    g = _grounder(kb, ids)
    assert g.ground(np).ids == expected


def test_a_phrase_of_something_absent_still_grounds_nothing(kb):
    if not embedding.warm_up():
        pytest.fail(f"the packaged embedding model does not load: {embedding.unavailable_reason()}")
    np = parse_query("Slice the slab of cheese.", "", kb).args["object"]
    g = _grounder(kb, ["Hammer_1", "Screwdriver_1"])
    assert g.ground(np).status == "none"


# ------------------------------------------------------------------ colours

def test_a_two_word_shade_is_one_colour(kb):
    assert "olive green" in kb.colour_shades and "mustard yellow" in kb.colour_shades
    assert "dark blue" not in kb.colour_shades          # "dark" qualifies many colours: blue counts
    st = parse_query("Can you get me the olive-green thread?", "", kb).args["object"]
    assert st.words == ["thread"] and [(s.key, s.word, s.colour) for s in st.states] == [("colour", "olive green", "green")]


def test_a_two_word_shade_is_compared_with_the_measured_rgb(kb):
    seen = {"ThreadSpool_1": ("red", [0.80, 0.15, 0.12]), "ThreadSpool_2": ("brown", [0.40, 0.45, 0.20])}
    g = _grounder(kb, seen, obs=_Props(seen))
    st = parse_query("Get me the olive green thread", "", kb).args["object"].states[0]
    keep, waiting, why = g._colour_filter(list(seen), st)
    assert not waiting and keep == ["ThreadSpool_2"] and why == ["ThreadSpool_1 is red, not olive green"]


def test_a_close_call_of_perception_counts_for_the_neighbouring_colour(kb):
    # [0.8, 0.3, 0.1] is reported red, but it is about as near orange's reference as red's
    seen = {"FlyBox_1": ("green", [0.25, 0.60, 0.25]), "FlyBox_2": ("red", [0.80, 0.30, 0.10])}
    g = _grounder(kb, seen, obs=_Props(seen))
    st = parse_query("Bring me the orange fly box", "", kb).args["object"].states[0]
    keep, _, _ = g._colour_filter(list(seen), st)
    assert keep == ["FlyBox_2"] and any("FlyBox_2 was reported red" in n for n in g.notes)


def test_a_plain_red_is_not_orange(kb):
    seen = {"FlyBox_1": ("green", [0.25, 0.60, 0.25]), "FlyBox_2": ("red", [0.85, 0.12, 0.12])}
    g = _grounder(kb, seen, obs=_Props(seen))
    st = parse_query("Bring me the orange fly box", "", kb).args["object"].states[0]
    keep, _, why = g._colour_filter(list(seen), st)
    assert keep == [] and "FlyBox_2 is red" in why


# ------------------------------------------------------------------ "..., toss it over here"

def test_a_fronted_object_taken_up_by_it_after_an_unknown_verb(kb):
    p = parse_query("The torch at the far end has been left on - knock it off, will you?", "", kb)
    assert p.action == "turn_off" and p.args["object"].words == ["torch"]
