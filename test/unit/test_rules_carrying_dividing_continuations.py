"""Change 15 of the rules reasoner: carrying a thing somewhere is picking it up (verbs of carrying
by WordNet, verb_kinds.carrying), a thing divided "into two ..." is cut whatever the verb, a cut
said by its instrument ("use the knife to ...", "with the knife, ...", "put the knife through
..."), a thing made from an object cuts it (verb_kinds.making), and a request with no verb ("And
the case to the right of the tape too") asks for the object. Negative cases keep the readings
these rules must not take over."""
from __future__ import annotations

import pytest

from raider_ros.agent.backends.rules.knowledge import KnowledgeError, load_knowledge
from raider_ros.agent.backends.rules.query import parse_query
from support.rules_fakes import assert_dev_case_right, edited_knowledge


def _read(kb, query):
    p = parse_query(query, "", kb)
    return p.action, {k: v.raw for k, v in p.args.items()}, p.result, p.purpose


@pytest.mark.parametrize("query, obj, where", [
    ("Lug the perch scale out to the weathering ground.", "perch scale", "to the weathering ground"),
    ("Could you carry the marine radio down to the water's edge?", "radio", "to the water's edge"),
    ("Move the ticket printer over to the box office.", "ticket printer", "the box office"),
    ("Haul the preamp rack into the live room.", "preamp rack", "the live room"),
    ("Tote the crate to the van", "crate", "the van"),
])
def test_a_thing_carried_somewhere_is_picked_up(kb, query, obj, where):
    action, args, _, purpose = _read(kb, query)
    assert action == "pick" and args["object"] == obj and purpose == where


def test_carrying_keeps_relations_people_and_other_readings(kb):
    action, args, _, purpose = _read(kb, "Drag the chair to the left of the table.")
    assert action == "pick" and args["object"] == "chair" and purpose == ""      # a relation, not a place
    assert parse_query("Drag the chair to the left of the table.", "", kb).args["object"].quals
    assert _read(kb, "Carry this scarf over to Kwame.")[:2] == ("handover", {"object": "scarf", "recipient": "Kwame"})
    assert _read(kb, "Move to the table.")[0] == "approach"          # no object: the robot moves
    assert _read(kb, "Pass the salt.")[0] == "handover"              # the knowledge's own verb
    assert _read(kb, "Follow the man.")[0] != "pick"                 # travelling is not carrying
    assert _read(kb, "Walk the dog to the park.")[0] != "pick"
    assert _read(kb, "Run the dishwasher.")[0] != "pick"
    assert _read(kb, "Pull the door shut.")[0] == "close"            # a result state comes first


@pytest.mark.parametrize("query, obj", [
    ("Separate the rope coil into two lengths.", "rope coil"),
    ("Separate the ticket strip into single stubs.", "ticket strip"),
    ("Score the polishing cloth into two pieces with the knife.", "polishing cloth"),
    ("Break the chocolate bar in half.", "chocolate bar"),
])
def test_a_thing_divided_into_pieces_is_cut(kb, query, obj):
    action, args, result, _ = _read(kb, query)
    assert action == "slice" and args["object"] == obj and result.startswith(("into", "in"))


def test_a_place_verb_still_places_into_several_things(kb):
    action, args, _, _ = _read(kb, "Put the eggs into two bowls.")
    assert action == "place" and args["object"] == "eggs"


@pytest.mark.parametrize("query, obj", [
    ("Use the knife to divide the multimeter.", "multimeter"),
    ("Could you use the knife to slice the bread?", "bread"),
    ("With the knife, saw the silver microphone in two.", "microphone"),
    ("Part the ticket strip with the knife.", "ticket strip"),
    ("Put the knife through the rope coil.", "rope coil"),
])
def test_a_cut_said_by_its_instrument(kb, query, obj):
    action, args, _, _ = _read(kb, query)
    assert action == "slice" and args["object"] == obj


def test_an_instrument_phrase_that_is_no_cutting_tool_cuts_nothing(kb):
    assert _read(kb, "Use the cloth to wipe the table.")[0] != "slice"
    assert _read(kb, "Use the tongs to the left of the pan to grab the toast.")[1].get("object") != "pan"
    assert _read(kb, "Stir the soup with the spoon.")[0] != "slice"


@pytest.mark.parametrize("query, obj, made", [
    ("Make two short lengths of the splicing tape.", "splicing tape", "two short lengths"),
    ("Make two short lengths out of the splicing tape with that knife.", "splicing tape", "two short lengths"),
    ("Fashion a new jess from the jess leather for the tiercel.", "jess leather", "a new jess"),
    ("Slit another jess from the jess leather.", "jess leather", "another jess"),
])
def test_a_thing_made_from_an_object_cuts_it(kb, query, obj, made):
    action, args, result, _ = _read(kb, query)
    assert action == "slice" and args["object"] == obj and result == made


def test_what_a_thing_is_of_is_not_what_it_is_made_from(kb):
    assert _read(kb, "Make a cup of tea.")[0] != "slice"
    assert _read(kb, "Make a sandwich with the bread.")[0] != "slice"


@pytest.mark.parametrize("query, obj", [
    ("And the case to the right of the splicing tape too, if you would.", "case"),
    ("Now the hood to the left of the jess leather.", "hood"),
    ("Also the sunscreen to the left of the rope coil, please.", "sunscreen"),
    ("The red cup, please.", "cup"),
])
def test_a_request_without_a_verb_asks_for_the_object(kb, query, obj):
    action, args, _, _ = _read(kb, query)
    assert action == "pick" and args["object"] == obj


def test_a_statement_without_a_request_verb_is_not_a_request(kb):
    assert _read(kb, "The mug is dirty.")[0] is None
    assert _read(kb, "And the kettle isn't working.")[0] is None


def test_verb_kinds_must_name_a_known_reading(tmp_path):
    path = edited_knowledge(tmp_path, "language.yaml", "  carrying: [", "  juggling: [")
    with pytest.raises(KnowledgeError, match="verb_kinds.juggling"):
        load_knowledge(path)
    assert set(load_knowledge().verb_kinds) == {"carrying", "making"}


@pytest.mark.parametrize("query, recipient", [
    ("Tomasz wants this sunscreen; would you get it to him?", "Tomasz"),
    ("Mr Pemberton is collecting this scarf; could you get it to him?", "Mr Pemberton"),
    ("Samir asked for the stamp; bring it to him.", "Samir"),
])
def test_a_pronoun_recipient_is_the_person_named_earlier(kb, query, recipient):
    p = parse_query(query, "", kb)
    assert p.action == "handover" and p.args["recipient"].raw == recipient


def test_a_pronoun_recipient_stays_when_no_one_or_several_are_named(kb):
    assert parse_query("Give it to him.", "", kb).args["recipient"].raw == "him"
    p = parse_query("Kwame told Ingrid about the winch; take it to her.", "", kb)
    assert p.args["recipient"].raw == "her"


@pytest.mark.parametrize("query, obj, recipient", [
    ("Could you make sure Oluwaseun gets his scarf?", "scarf", "Oluwaseun"),
    ("Make sure the nurse has the chart.", "chart", "nurse"),
])
def test_making_sure_someone_gets_something_is_a_handover(kb, query, obj, recipient):
    p = parse_query(query, "", kb)
    assert p.action == "handover" and p.args["object"].raw == obj and p.args["recipient"].raw == recipient
    assert parse_query("Make sure you have the keys.", "", kb).action != "handover"


@pytest.mark.parametrize("query, obj", [
    ("Get the metronome ticking, please.", "metronome"),
    ("Could you get the ticket machine printing?", "ticket machine"),
    ("Have the fan spinning.", "fan"),
])
def test_getting_a_device_doing_something_switches_it_on(kb, query, obj):
    p = parse_query(query, "", kb)
    assert p.action == "turn_on" and p.args["object"].raw == obj


def test_a_thing_named_in_ing_is_no_activity(kb):
    for query in ("Get the turkey stuffing.", "Get the cake icing", "Get the cup sitting on the table."):
        assert parse_query(query, "", kb).action == "pick", query


@pytest.mark.parametrize("query, action, obj", [
    ("Unhook the catch on the green body cord.", "open", "body cord"),
    ("Flip the latches on the silver mic case.", "open", "mic case"),
    ("Undo the zip on the pencil case.", "open", "pencil case"),
    ("Do up the buckle on the bag.", "close", "bag"),
    ("Fasten the clasp on the purse.", "close", "purse"),
])
def test_a_fastening_on_a_thing_opens_or_closes_the_thing(kb, query, action, obj):
    p = parse_query(query, "", kb)
    assert p.action == action and p.args["object"].raw == obj


def test_a_fastening_put_somewhere_is_placed(kb):
    p = parse_query("Put the screw on the table.", "", kb)
    assert p.action == "place" and p.args["object"].raw == "screw"


@pytest.mark.parametrize("query, action, obj", [
    ("Loosen the cap of the glue tube so I can dab some on.", "open", "glue tube"),
    ("Could you fold back the cover of the green register?", "open", "register"),
    ("Could you undo the lid on the sealed container?", "open", "sealed container"),
    ("Flip up the cap on whichever sunscreen hasn't been opened.", "open", "sunscreen"),
    ("Tighten the cap on the bottle.", "close", "bottle"),
    ("Pop the lid back on the tin.", "close", "tin"),          # the lid put back: closed, as before
    ("Put the lid back on the jar.", "close", "jar"),
])
def test_a_lid_handled_on_a_thing_opens_or_closes_it_by_the_verb(kb, query, action, obj):
    p = parse_query(query, "", kb)
    assert p.action == action and p.args["object"].raw == obj


def test_a_lid_touched_otherwise_says_nothing_about_opening(kb):
    assert parse_query("Wipe the cover of the book.", "", kb).action not in ("open", "close")
    assert parse_query("Pick up the lid of the pot.", "", kb).action == "pick"


def test_whichever_with_a_negated_verb_is_a_relative_clause(kb):
    np = parse_query("Grab whichever mug isn't dirty.", "", kb).args["object"]
    assert np.words == ["mug"] and [(s.key, s.value) for s in np.states] == [("clean", True)]


# ------------------------------------------------------------------ dev cases end to end
# cases of held-out set 15 (dev since change 15) that the rules above mend, run through the real
# program flow manager with tools answering from the scene's true geometry

@pytest.mark.parametrize("case_id", [
    "h15-falconry_mews_bench-023",     # lug the perch scale out to ...: not pickupable
    "h15-lifeguard_station_desk-019",  # carry the marine radio down to the water's edge
    "h15-theatre_cloakroom_counter-019",   # move the ticket printer over to the box office
    "h15-lifeguard_station_desk-023",  # separate the rope coil into two lengths: no knife
    "h15-jewellery_bench-007",         # score the polishing cloth into two pieces with the knife
    "h15-fencing_club_armoury-025",    # use the knife to divide the multimeter
    "h15-recording_studio_desk-025",   # with the knife, saw the silver microphone in two
    "h15-lifeguard_station_desk-018",  # put the knife through the rope coil
    "h15-recording_studio_desk-008",   # make two short lengths out of the splicing tape with that knife
    "h15-recording_studio_desk-028",   # and the case to the right of the splicing tape too
    "h15-falconry_mews_bench-028",     # now the hood to the left of the jess leather
    "h15-lifeguard_station_desk-027",  # Tomasz wants this sunscreen; would you get it to him?
    "h15-theatre_cloakroom_counter-027",   # could you make sure Oluwaseun gets his scarf?
    "h15-recording_studio_desk-020",   # get the metronome ticking
    "h15-fencing_club_armoury-024",    # unhook the catch on the green body cord
])
def test_dev_cases_mended_by_change_15(reasoner, case_id):
    assert_dev_case_right(reasoner, case_id)
