"""Retrieval with the general knowledge the rules reasoner grounds by: each document is embedded
as its label and as its label with its type's description (data/knowledge/object_types.yaml),
scored with the reasoner's meaning score, and a phrase that nothing in sight is surely named by
brings the closest objects in sight. Hashing embedder for the logic; the last tests run the real
MiniLM model on dev cases (ba-06, h2-bakery-007)."""
import pytest

from raider_ros.agent.backends.rules.grounding import MEANING_SCORE, WORD_BONUS, meaning_score
from raider_ros.agent.backends.rules.knowledge import load_knowledge
from raider_ros.common.paths import data_dir
from raider_ros.perception.provider import TruthProvider
from raider_ros.perception.scene_graph import SceneGraph
from raider_ros.retrieval import HashingEmbedder, RetrievalSettings, Retriever
from raider_ros.retrieval.documents import doc_key, label_key, text_key
from scene_graph_fixtures import TRUTH, kitchen_result

IN_SIGHT = {"CounterTop_1", "Apple_1", "Banana_1", "Mug_1", "Mug_2", "CoffeeMachine_1", "CerealBox_1"}
MEMORY = [
    {"id": "Mug_7", "type": "Mug", "center": [9, 9, 0.8], "size": [0.1, 0.1, 0.1], "seen_s_ago": 120, "room": "kitchen_2"},
    {"id": "Book_4", "type": "Book", "center": [20, 9, 0.82], "size": [0.2, 0.3, 0.04], "seen_s_ago": 700,
     "room": "living_room_1"},
    {"id": "Soap_3", "type": "Soap", "center": [30, 9, 0.9], "size": [0.08, 0.05, 0.03], "seen_s_ago": 300,
     "room": "bathroom_1"},
    {"id": "Toothbrush_2", "type": "Toothbrush", "center": [30, 9.3, 0.9], "size": [0.02, 0.18, 0.02],
     "seen_s_ago": 300, "room": "bathroom_1"},
]


@pytest.fixture
def graph():
    g = SceneGraph(forget_after_s=30, clock=lambda: 1000.0)
    g.remember(MEMORY, stamp=1000.0)
    g.update(kitchen_result(), TruthProvider(TRUTH), stamp=1000.0)
    return g


def make(graph, **kw):
    settings = dict(threshold=0.6, sight_threshold=0.6, k_memory=3, k_sight=12, index="exact")
    settings.update(kw)
    return Retriever(graph, RetrievalSettings(**settings), embedder=HashingEmbedder())


def test_the_reasoners_meaning_score_adds_the_bonus_for_a_word_of_the_types_genus():
    kb = load_knowledge()
    assert meaning_score(kb, ["toiletry"], "soap", kb.type_text("Soap"), 0.2, 0.3) == pytest.approx(0.3 + WORD_BONUS)
    # 'bread knife' is a knife, not bread: the modifier of the name earns no bonus
    assert meaning_score(kb, ["bread"], "bread knife", kb.type_text("BreadKnife"), 0.5, 0.4) == pytest.approx(0.5)
    # a use anywhere in the description ("... for cutting bread")
    assert meaning_score(kb, ["something", "to", "cut", "with"], "bread knife", kb.type_text("BreadKnife"),
                         0.1, 0.2) == pytest.approx(0.2 + WORD_BONUS)


def test_documents_carry_their_types_description_and_two_vectors_each(graph):
    kb = load_knowledge()
    r = make(graph)
    r.sync()
    st = r.store
    assert st.docs["Mug_1"].content == "mug"
    assert st.docs["Mug_1"].text == f"mug: {kb.type_descriptions['mug']}" == "mug: a tall cup with a handle for hot drinks"
    assert st.docs["Person_1"].text == st.docs["Person_1"].content == "person Adriana"
    assert len(st.index) == 2 * len(st.docs)
    k = st.docs["Soap_3"].key
    assert doc_key(label_key(k)) == doc_key(text_key(k)) == k and label_key(k) != text_key(k)
    keys, sims = st.index.search(st.text_vector("Soap_3"), 1)
    assert st.by_key[doc_key(keys[0])] == "Soap_3" and int(keys[0]) == text_key(k)
    # incremental: a new object of a known type embeds nothing new; removal takes both vectors
    before = r.embedder.encoded
    graph.remember([{"id": "Soap_9", "type": "Soap", "center": [31, 9, 0.9], "size": [0.08, 0.05, 0.03],
                     "seen_s_ago": 5}], stamp=1000.0)
    assert r.sync().added == 1 and r.embedder.encoded == before and len(st.index) == 2 * len(st.docs)
    graph.clear()
    r.sync()
    assert len(st.docs) == 0 and len(st.index) == 0


def test_a_category_word_of_the_descriptions_retrieves_remembered_members(graph):
    # "toiletry" is no type and no category: only the descriptions ("soap: a toiletry, ...") name it
    r = make(graph, threshold=0.35)
    sub = r.retrieve("Could you pick up the toiletry?")
    assert {"Soap_3", "Toothbrush_2"} <= set(sub.nodes)
    assert "Mug_7" not in sub.nodes and "Book_4" not in sub.nodes
    assert "entity 'toiletry'" in sub.nodes["Soap_3"].reasons


def test_a_phrase_nothing_in_sight_names_brings_the_closest_objects_in_sight(graph):
    r = make(graph, k_sight=3)
    sub = r.retrieve("Pick up the gizmo.")
    closest = [i for i, n in sub.nodes.items() if "closest in sight to 'gizmo'" in n.reasons]
    assert len(closest) == 3 and set(closest) <= IN_SIGHT
    # a phrase a type in sight is named by: its instances only, no closest ones
    sub = r.retrieve("Pick up the mug.")
    assert {"Mug_1", "Mug_2"} <= set(sub.nodes)
    assert not any(reason.startswith("closest") for n in sub.nodes.values() for reason in n.reasons)
    assert not (set(sub.nodes) & IN_SIGHT - {"Mug_1", "Mug_2", "CounterTop_1"})   # the counter carries them


# ---------------------------------------------------------------- the real model on dev cases
@pytest.fixture(scope="module")
def house_pipeline():
    from raider_ros.evaluation.cases import load_benchmark
    from raider_ros.evaluation.local import LocalPipeline
    return load_benchmark(data_dir() / "benchmark" / "dev"), LocalPipeline(scale=1000, retrieval="rag")


def _retrieve(house_pipeline, case_id):
    bench, pipe = house_pipeline
    case = next(c for c in bench.cases if c.id == case_id)
    pipe.prepare(bench.scenes[case.scene], case.setup)
    return pipe.retriever.retrieve(case.query, str(case.extra.get("context") or ""))


def test_the_toiletry_in_a_house_of_1000_objects_by_type_descriptions(house_pipeline):
    sub = _retrieve(house_pipeline, "ba-06")            # "Could you pick up the toiletry?"
    assert {"Soap_1", "Toothbrush_1"} <= set(sub.in_sight())
    assert all(r.startswith("entity") for i in ("Soap_1", "Toothbrush_1") for r in sub.nodes[i].reasons)
    assert len(sub.in_sight()) < 12


def test_a_name_the_knowledge_lacks_gets_the_closest_objects_in_sight(house_pipeline):
    sub = _retrieve(house_pipeline, "h2-bakery-007")    # "Open the sugar for me?": a canister holds it
    assert "Canister_1" in sub.nodes
    assert "closest in sight to 'sugar'" in sub.nodes["Canister_1"].reasons
    assert sub.nodes["Canister_1"].score < MEANING_SCORE
    assert len(sub.in_sight()) <= RetrievalSettings().k_sight + 2
