"""The rules reasoner's query reading: structured, PDDL-like and natural-language queries,
qualifiers, person clarifications, and the knowledge files behind them."""
import pytest

from raider_ros.agent.backends.rules.knowledge import KnowledgeError, load_knowledge, type_key, type_words
from raider_ros.agent.backends.rules.query import parse_query


def args(pq):
    return {role: np.words for role, np in pq.args.items()}


def quals(np):
    return [(q.relations, q.ref.words if q.ref else None, q.inverse, q.superlative) for q in np.quals]


def states(np):
    return [(s.key, s.value) for s in np.states]


@pytest.mark.parametrize("query, action, expected", [
    ("pick(Apple)", "pick", {"object": ["apple"]}),
    ("place(Mug, CoffeeMachine)", "place", {"object": ["mug"], "location": ["coffee", "machine"]}),
    ("slice(Apple)", "slice", {"object": ["apple"]}),
    ("open(Fridge)", "open", {"object": ["fridge"]}),
    ("turn_off(Microwave)", "turn_off", {"object": ["microwave"]}),
    ("TurnOn(Lamp)", "turn_on", {"object": ["lamp"]}),
    ("ToggleObjectOff(Television)", "turn_off", {"object": ["television"]}),
    ("handover(Medicine, Adriana)", "handover", {"object": ["medicine"], "recipient": ["adriana"]}),
    ("approach(medicine_counter)", "approach", {"target": ["medicine", "counter"]}),
    ("pick adrianas_medicine medicine_counter", "pick",
     {"object": ["adriana", "medicine"], "source": ["medicine", "counter"]}),
    ("handover adrianas_medicine adriana_user", "handover",
     {"object": ["adriana", "medicine"], "recipient": ["adriana", "user"]}),
    ("(approach Person_1)", "approach", {"target": ["person"]}),
])
def test_structured_and_pddl_like(kb, query, action, expected):
    pq = parse_query(query, "", kb)
    assert pq.structured
    assert pq.action == action
    assert args(pq) == expected


def test_structured_pick_location_filters_the_object(kb):
    pq = parse_query("pick(Apple, CounterTop)", "", kb)
    assert quals(pq.args["object"]) == [(("on top of", "inside"), ["counter", "top"], False, None)]
    assert pq.args["source"].raw == "CounterTop"


def test_ids_keep_their_number_for_matching(kb):
    np = parse_query("pick(Mug_2)", "", kb).args["object"]
    assert np.raw == "Mug_2" and np.words == ["mug"]


@pytest.mark.parametrize("query, action, obj, q, st", [
    ("Can you pick the fruit to the left of the bowl?", "pick", ["fruit"],
     [(("on the left of",), ["bowl"], False, None)], []),
    ("Please grab the clean mug", "pick", ["mug"], [], [("clean", True)]),
    ("Could you turn off the electronic device on the shelf?", "turn_off", ["electronic", "device"],
     [(("on top of",), ["shelf"], False, None)], []),
    ("Please slice the apple.", "slice", ["apple"], [], []),
    ("Please pick up the mug to the right of the coffee machine.", "pick", ["mug"],
     [(("on the right of",), ["coffee", "machine"], False, None)], []),
    ("turn the microwave off", "turn_off", ["microwave"], [], []),
    ("Robot, please switch on the lamp that is off", "turn_on", ["lamp"], [], [("switched_on", False)]),
    ("turn off the light that is on", "turn_off", ["light"], [], [("switched_on", True)]),
    ("pick the electronic device that is on the shelf", "pick", ["electronic", "device"],
     [(("on top of",), ["shelf"], False, None)], []),
    ("pick the bowl if it doesn't contain anything", "pick", ["bowl"], [], [("filled", False)]),
    ("pick up the apple that is not sliced", "pick", ["apple"], [], [("sliced", False)]),
    ("grab the nearest mug", "pick", ["mug"], [((), None, False, "min")], []),
    ("pick the switched off lamp", "pick", ["lamp"], [], [("switched_on", False)]),
    ("pick the box behind the chair", "pick", ["box"], [(("blocking",), ["chair"], True, None)], []),
    ("pick the mug up", "pick", ["mug"], [], []),
    ("I would like you to open the fridge now", "open", ["fridge"], [], []),
])
def test_natural_language(kb, query, action, obj, q, st):
    pq = parse_query(query, "", kb)
    assert not pq.structured
    assert pq.action == action
    np = pq.args["object"]
    assert np.words == obj
    assert quals(np) == q
    assert states(np) == st


@pytest.mark.parametrize("query, words", [
    # a head named by its use stays as written: grounding compares it with type descriptions
    ("Could you pick up the thing for drying hair?", ["thing", "for", "drying", "hair"]),
    ("grab the thing for opening cans", ["thing", "for", "opening", "can"]),
    ("Open the jar of honey.", ["honey", "jar"]),
    ("Give me a glass of water", ["water", "glass"]),
    ("Can you get me the stuffed toy from the bed?", ["stuffed", "toy"]),
    ("Grab something to write with.", ["something", "to", "write"]),
])
def test_heads_named_by_use_content_or_for_someone(kb, query, words):
    assert parse_query(query, "", kb).args["object"].words == words


def test_pick_from_a_place_names_the_source(kb):
    pq = parse_query("Pick the banana from the fridge.", "", kb)
    assert pq.args["object"].words == ["banana"]
    assert pq.args["source"].words == ["fridge"]
    assert quals(pq.args["object"]) == [(("on top of", "inside"), ["fridge"], False, None)]


@pytest.mark.parametrize("query, obj, loc, rel", [
    ("Put the mug in the coffee machine", ["mug"], ["coffee", "machine"], "inside"),
    ("Please place the apple on the plate.", ["apple"], ["plate"], "on top of"),
    ("put the clean mug that is on the table into the sink", ["mug"], ["sink"], "inside"),
    ("set the cup next to the kettle", ["cup"], ["kettle"], "near"),
])
def test_place_splits_object_and_location(kb, query, obj, loc, rel):
    pq = parse_query(query, "", kb)
    assert pq.action == "place"
    assert pq.args["object"].words == obj
    assert pq.args["location"].words == loc
    assert pq.place_relation == rel


@pytest.mark.parametrize("query, obj, person", [
    ("Give the medicine to Adriana", ["medicine"], ["adriana"]),
    ("give me the apple please", ["apple"], ["me"]),
    ("Could you hand Adriana the medicine?", ["medicine"], ["adriana"]),
    ("Please hand over the pills to the patient", ["pill"], ["patient"]),
])
def test_handover_finds_object_and_recipient(kb, query, obj, person):
    pq = parse_query(query, "", kb)
    assert pq.action == "handover"
    assert pq.args["object"].words == obj
    assert pq.args["recipient"].words == person


def test_clarification_adds_qualifiers_to_the_matching_argument(kb):
    pq = parse_query("pick adrianas_medicine medicine_counter", "It's the medicine that is closest to the plant.", kb)
    np = pq.args["object"]
    assert np.words == ["adriana", "medicine"]                     # the query's words are kept
    assert ((), ["plant"], False, "min") in quals(np)


def test_clarification_by_id_replaces_a_generic_head(kb):
    pq = parse_query("pick up the mug", "I meant Mug_2", kb)
    assert pq.args["object"].raw == "Mug_2"
    pq = parse_query("pick up the fruit", "the one on the left of the bowl", kb)
    assert pq.args["object"].words == ["fruit"]
    assert quals(pq.args["object"]) == [(("on the left of",), ["bowl"], False, None)]


def test_identity_clarification_names_the_person(kb):
    assert parse_query("approach adriana_user", "I am Adriana.", kb).person_hint == "adriana"
    assert parse_query("approach adriana_user", "It's the medicine near the plant.", kb).person_hint is None


def test_unknown_verb_keeps_the_object(kb):
    pq = parse_query("polish the mug", "", kb)
    assert pq.action is None and pq.verb == "polish"
    assert pq.args["object"].words == ["mug"]


def test_garbage_and_empty_queries_do_not_crash(kb):
    for q in ["", "   ", "???", "pick(", "()", "pick()", "the", "\u2019\u2019"]:
        pq = parse_query(q, "", kb)
        assert all(isinstance(np.words, list) for np in pq.args.values())


def test_type_words():
    assert type_words("CoffeeMachine_1") == ["coffee", "machine"]
    assert type_words("medicine2") == ["medicine"]
    assert type_words("TVStand_3") == ["tv", "stand"]
    assert type_key("Knives") == "knife"


def test_knowledge_errors_name_file_and_field(tmp_path):
    src = load_knowledge.__wrapped__  # uncached loader
    for f in ("language.yaml", "categories.yaml", "preconditions.yaml"):
        (tmp_path / f).write_text((__import__("raider_ros.agent.backends.rules.knowledge", fromlist=["x"]).knowledge_dir() / f)
                                  .read_text(encoding="utf-8"), encoding="utf-8")
    assert src(str(tmp_path)).actions["pick"].say == "pick up"

    (tmp_path / "language.yaml").write_text("actions: {pick: {verbs: [on]}}\n", encoding="utf-8")
    with pytest.raises(KnowledgeError, match=r"language.yaml: actions.pick.verbs\[0\]"):
        src(str(tmp_path))
    (tmp_path / "language.yaml").write_text("relations: [\n", encoding="utf-8")
    with pytest.raises(KnowledgeError, match="language.yaml: not valid YAML"):
        src(str(tmp_path))
    (tmp_path / "language.yaml").unlink()
    with pytest.raises(KnowledgeError, match="language.yaml: knowledge file is missing"):
        src(str(tmp_path))


# ---- general readings added for held-out set 3's failure causes (phrasal/result verbs,
# contractions, clauses, indirect requests); the phrasings here are made up, not the set's
@pytest.mark.parametrize("query, action, obj", [
    ("Flip the notebook shut.", "close", ["notebook"]),                  # verb + object + result state
    ("Get the radio on, please.", "turn_on", ["radio"]),
    ("Put the fan on, would you?", "turn_on", ["fan"]),
    ("Get the blender running.", "turn_on", ["blender"]),
    ("Turn the heater off for the weekend.", "turn_off", ["heater"]),   # split verb before a purpose
    ("Would you mind opening up the drawer?", "open", ["drawer"]),      # gerund, particle after the verb
    ("Take the cap off the bottle.", "open", ["bottle"]),               # removing a lid opens
    ("Hand the ruler over to Sam.", "handover", ["ruler"]),             # particle before the recipient
])
def test_result_states_particles_and_gerunds(kb, query, action, obj):
    pq = parse_query(query, "", kb)
    assert pq.action == action
    assert pq.args["object"].words == obj


def test_result_state_is_not_read_in_a_state_clause(kb):
    pq = parse_query("Grab whatever's switched on.", "", kb)
    assert pq.action == "pick"
    assert states(pq.args["object"]) == [("switched_on", True)]


def test_adverb_between_marker_and_state(kb):
    pq = parse_query("Turn off the radio that's still on.", "", kb)
    assert pq.args["object"].words == ["radio"]
    assert states(pq.args["object"]) == [("switched_on", True)]


def test_time_possessive_names_no_owner(kb):
    np = parse_query("Open yesterday's newspaper.", "", kb).args["object"]
    assert np.words == ["newspaper"] and np.owner is None
    np = parse_query("Bring Anna's cup.", "", kb).args["object"]
    assert np.owner == "Anna"


def test_two_relations_in_a_row_keep_the_second(kb):
    np = parse_query("Fetch the pen over by the lamp.", "", kb).args["object"]
    assert np.words == ["pen"]
    assert quals(np) == [(("near",), ["lamp"], False, None)]


def test_unread_clause_is_set_apart_and_it_is_the_object_itself(kb):
    np = parse_query("Grab the bowl that Anna bought last spring.", "", kb).args["object"]
    assert np.words == ["bowl"] and not np.quals
    assert "Anna" in np.clause
    np = parse_query("Grab the bowl that still has soup in it.", "", kb).args["object"]
    assert np.words == ["bowl"] and [(s.key, s.value) for s in np.states] == [("filled", True)]   # read, not left
    np = parse_query("Switch off whatever is buzzing.", "", kb).args["object"]
    # change 22: a thing doing something is a thing that is switched on (was: named "buzzing")
    assert np.words == ["whatever"] and [(s.key, s.value) for s in np.states] == [("switched_on", True)]


def test_indirect_request_takes_the_object_from_the_first_part(kb):
    pq = parse_query("I want the green towel, could you bring it?", "", kb)
    assert pq.args["object"].words == ["towel"]
    assert pq.args["object"].states[0].colour == "green"


def test_thing_i_do_something_with(kb):
    np = parse_query("Pick up the thing I sweep the floor with.", "", kb).args["object"]
    assert np.words[:2] == ["thing", "to"]


def test_other_names_from_descriptions(kb):
    assert ["torch"] in kb.other_names("Flashlight_1")
    assert kb.other_names("Apple") == []
