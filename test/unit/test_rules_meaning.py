"""Grounding by meaning: a phrase that names no type and no category is compared with the
visible types' names and one-line descriptions (data/knowledge/object_types.yaml) by sentence
embedding, helped by the words the two share. Needs the packaged MiniLM model."""

import pytest

from raider_ros.agent.backends.rules import embedding
from raider_ros.agent.backends.rules.knowledge import KnowledgeError, load_knowledge
from raider_ros.agent.backends.rules.query import parse_query
from support.rules_fakes import grounder as _grounder

BATHROOM = ["Bathtub_1", "Cup_1", "Faucet_1", "HairDryer_1", "Sink_1", "Soap_1", "Toothbrush_1", "Towel_1"]
OFFICE = ["Book_1", "Chair_1", "Desk_1", "DeskLamp_1", "Laptop_1", "Monitor_1", "Mug_1", "Pencil_1", "Printer_1"]
LIVING = ["Sofa_1", "CoffeeTable_1", "Television_1", "RemoteControl_1", "Vase_1", "Rug_1", "TeddyBear_1"]


@pytest.fixture(scope="module")
def kb():
    if not embedding.warm_up():
        pytest.fail(f"the packaged embedding model does not load: {embedding.unavailable_reason()}")
    return load_knowledge()


def ground(kb, query, ids):
    g = _grounder(kb, ids)
    np = parse_query(query, "", kb).args["object"]
    return g.match_name(np, list(ids))


@pytest.mark.parametrize("query, ids, expected", [
    ("Pick up the thing for drying hair.", BATHROOM, ["HairDryer_1"]),
    ("Could you pick up the toiletry?", BATHROOM, ["Soap_1", "Toothbrush_1"]),
    ("Grab a writing instrument.", OFFICE, ["Pencil_1"]),
    ("Bring me something to write with.", OFFICE, ["Pencil_1"]),
    ("Pick up the stuffed toy.", LIVING, ["TeddyBear_1"]),
    ("Take the device for boiling water.", ["Kettle_1", "Toaster_1", "Mug_1", "Sink_1"], ["Kettle_1"]),
])
def test_a_phrase_grounds_by_what_the_type_is(kb, query, ids, expected):
    hits, how = ground(kb, query, ids)
    assert sorted(hits) == expected and how in ("embedding", "category", "kind")   # kind: WordNet, by use too


@pytest.mark.parametrize("query, ids", [
    ("Open the oven.", ["Microwave_1", "Pan_1", "StoveBurner_1", "Fridge_1"]),
    ("Pick up the keyboard.", OFFICE),
    ("Pick up the razor.", BATHROOM),
    ("Pick up the pear.", ["Apple_1", "Banana_1", "Bowl_1"]),
])
def test_something_absent_grounds_to_nothing(kb, query, ids):
    assert ground(kb, query, ids)[0] == []


def test_the_description_file_is_checked(tmp_path):
    for name in ("language.yaml", "categories.yaml", "preconditions.yaml"):
        (tmp_path / name).write_text((load_knowledge.__wrapped__.__globals__["knowledge_dir"]() / name).read_text())
    (tmp_path / "object_types.yaml").write_text("types:\n  Mug: ''\n")
    with pytest.raises(KnowledgeError, match=r"types.Mug: expected a one-line description"):
        load_knowledge(str(tmp_path))


# ---- other names, kinds from descriptions, plurals and clear winners (made-up rooms)
WORKSHOP = ["Flashlight_1", "Hammer_1", "Workbench_1", "Chisel_1", "PaintCan_1"]
CAFE = ["Croissant_1", "Muffin_1", "Cup_1", "Saucer_1", "Napkin_1", "CashRegister_1"]


@pytest.mark.parametrize("query, ids, expected", [
    ("Hand me the torch.", WORKSHOP, ["Flashlight_1"]),                  # "also called a torch"
    ("Open the till.", CAFE, ["CashRegister_1"]),
    # a plural may name several kinds; "baked" is read as part of the name when the rest names nothing
    ("Pick up one of the baked goods.", ["Scone_1", "Cake_1", "Muffin_1", "Cup_1", "Teapot_1"],
     ["Cake_1", "Muffin_1", "Scone_1"]),
])
def test_other_names_and_plurals(kb, query, ids, expected):
    g = _grounder(kb, ids)
    assert sorted(g.ground(parse_query(query, "", kb).args["object"]).ids) == expected


def test_a_category_takes_types_whose_description_says_they_are_of_it(kb):
    # Chisel is listed in no category; its description calls it a tool
    hits, _ = ground(kb, "Grab a tool.", WORKSHOP)
    assert "Chisel_1" in hits and "Hammer_1" in hits and "PaintCan_1" not in hits


def test_a_clause_reads_as_a_state(kb):
    g = _grounder(kb, ["Mug_1", "Mug_2"])
    st = g._clause_state(parse_query("Grab the mug that got dirty at lunch.", "", kb).args["object"])
    assert st is not None and (st.key, st.value) == ("clean", False)
    np = parse_query("Grab the mug that needs washing.", "", kb).args["object"]
    assert [(s.key, s.value) for s in np.states] == [("clean", False)]     # the parser reads "needs V-ing" now
    np = parse_query("Fetch the jug that already has water in it.", "", kb).args["object"]
    assert [(s.key, s.value) for s in np.states] == [("filled", True)]     # read by the parser now, no clause left
    np = parse_query("Grab the mug that Anna bought last year.", "", kb).args["object"]
    assert g._clause_state(np) is None
