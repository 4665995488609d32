"""Scene-graph retrieval core (raider_ros/retrieval): documents, indexes, pre-retrieval,
subgraphs, modes, self-query, the prompt representation. The retrieval logic runs on a
deterministic hashing embedder here; test_retrieval_agent.py runs the real MiniLM model."""
import numpy as np
import pytest

from raider_ros.agent.backends.rules.transcript import read_conversation
from raider_ros.agent.llm import LLMReply
from raider_ros.perception.provider import TruthProvider
from raider_ros.perception.scene_graph import SceneGraph
from raider_ros.retrieval import (HashingEmbedder, LLMAbstractor, RetrievalError, RetrievalSettings, Retriever,
                                  RulesAbstractor, scene_text, update_text)
from raider_ros.retrieval.abstraction import split_list
from raider_ros.retrieval.index import KINDS, available, make_index
from scene_graph_fixtures import TRUTH, kitchen_result

MEMORY = [
    {"id": "Mug_7", "type": "Mug", "center": [9, 9, 0.8], "size": [0.1, 0.1, 0.1], "seen_s_ago": 120,
     "state": {"clean": False}, "properties": ["pickupable"], "room": "kitchen_2", "last_relation": ["on top of", "Table_3"]},
    {"id": "Table_3", "type": "Table", "center": [9, 9, 0.4], "size": [1, 1, 0.8], "seen_s_ago": 120, "room": "kitchen_2"},
    {"id": "Sofa_2", "type": "Sofa", "center": [20, 9, 0.4], "size": [2, 1, 0.8], "seen_s_ago": 600, "room": "living_room_1"},
    {"id": "Book_4", "type": "Book", "center": [20, 9, 0.82], "size": [0.2, 0.3, 0.04], "seen_s_ago": 700,
     "room": "living_room_1", "last_relation": ["on top of", "Sofa_2"]},
]


@pytest.fixture
def graph():
    g = SceneGraph(forget_after_s=30, clock=lambda: 1000.0)
    g.remember(MEMORY, stamp=1000.0)
    g.update(kitchen_result(), TruthProvider(TRUTH), stamp=1000.0)
    return g


@pytest.fixture
def retriever(graph):
    return Retriever(graph, RetrievalSettings(threshold=0.6, sight_threshold=0.6, k_memory=2, index="exact"),
                     embedder=HashingEmbedder())


def test_documents_sync_incrementally(graph):
    emb = HashingEmbedder()
    r = Retriever(graph, RetrievalSettings(index="exact"), embedder=emb)
    st = r.sync()
    assert st.documents == len(graph.snapshot().graph) - 1 == 13 and st.embedded == 13
    assert r.store.docs["CoffeeMachine_1"].content == "coffee machine"
    assert r.store.docs["Person_1"].content == "person Adriana"
    assert {"Mug_7", "Book_4"} <= set(r.store.docs) and "Mug_7" not in r.store.present
    # the same frame again: unseen nodes keep their attribute dicts, nothing is re-embedded
    graph.update(kitchen_result(), TruthProvider(TRUTH), stamp=1001.0)
    before = emb.encoded
    st = r.sync()
    assert st.embedded == 0 and st.changed == 9 and emb.encoded == before    # the 9 in view, not the 4 remembered
    # a new object with a known label: indexed without embedding anything new
    graph.remember([{"id": "Mug_9", "type": "Mug", "center": [5, 5, 1], "size": [0.1, 0.1, 0.1], "seen_s_ago": 5}])
    st = r.sync()
    assert st.added == 1 and st.embedded == 1 and emb.encoded == before
    graph.clear()
    assert r.sync().removed == 14 and len(r.store) == 0


@pytest.mark.parametrize("kind", [k for k in KINDS if available(k)])
def test_every_index_finds_what_exact_search_finds(kind):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(500, 32)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    exact, idx = make_index("exact", 32), make_index(kind, 32)
    for i in (exact, idx):
        i.upsert(list(range(500)), x)
        i.remove([3, 4])
        i.upsert([7], x[3:4])                 # 7 now holds 3's vector
    assert len(idx) == 498
    keys, sims = idx.search(x[3], 5)
    ek, es = exact.search(x[3], 5)
    assert keys[0] == ek[0] == 7 and sims[0] == pytest.approx(1.0, abs=1e-4)
    assert 3 not in keys and 4 not in keys
    with pytest.raises(ValueError, match="unknown vector index"):
        make_index("lucene", 8)


def test_rules_pre_retrieval_reads_entities_attributes_and_relations():
    ab = RulesAbstractor().abstract("Pick up the clean mug to the right of the bowl.")
    mug, bowl = ab.entities[0], ab.entities[1]
    assert (mug.phrase, mug.role, bowl.phrase, bowl.role) == ("mug", "object", "bowl", "reference")
    assert {"properties", "distance_m", "clean"} <= set(mug.attributes)
    assert {"blocking", "on top of"} <= set(mug.relations)
    fruit = RulesAbstractor().abstract("Could you pick up the fruit?").entities[0]
    assert {"apple", "banana"} <= set(fruit.types)
    hand = RulesAbstractor().abstract("Give the medicine to Adriana.")
    assert hand.people and any(e.person for e in hand.entities)
    sl = RulesAbstractor().abstract("slice(Apple)")
    assert any(e.role == "tool" and "knife" in e.types for e in sl.entities)
    assert RulesAbstractor().abstract("pick(Mug_2)").entities[0].id_hint == "Mug_2"


class FakeLLM:
    name = "fake"

    def __init__(self, replies):
        self.replies, self.seen = list(replies), []

    def complete(self, messages, *, deadline):
        self.seen.append(messages[-1]["content"])
        return LLMReply(text=self.replies.pop(0))


def test_llm_pre_retrieval_parses_its_answers_as_data():
    llm = FakeLLM(["Egg, a frying pan and the stove.", "temperature, cooked", "- properties\n- distance", "switched on"])
    ab = LLMAbstractor(llm).abstract("Cook an egg")
    assert [e.phrase for e in ab.entities] == ["egg", "frying pan", "stove"]
    assert ab.entities[0].attributes == ("cooked",) and ab.entities[2].attributes == ("switched_on",)
    assert "Cook an egg" in llm.seen[0] and "egg" in llm.seen[1] and "properties" in llm.seen[1]
    assert split_list("Answer: mug, the counter top; knife") == ["mug", "counter top", "knife"]


def test_rag_subgraph_entry_points_neighbours_and_filtered_attributes(retriever):
    sub = retriever.retrieve("Pick up the clean mug.")
    assert {"Mug_1", "Mug_2"} <= set(sub.in_sight())
    assert "CounterTop_1" in sub.nodes and "carries Mug_1" in sub.nodes["CounterTop_1"].reasons
    assert sub.remembered() == ["Mug_7"] and "Table_3" not in sub.nodes     # its support is in its description
    mug = sub.nodes["Mug_1"].attributes
    assert mug["state"] == {"clean": True} and mug["visible"] and "properties" in mug
    assert "state" not in sub.nodes["CounterTop_1"].attributes                # not asked for
    assert sub.nodes["Mug_7"].attributes["room"] == "kitchen_2"
    assert ("Mug_1", "on top of", "CounterTop_1") in sub.edges
    assert "Sofa_2" not in sub.nodes and "Person_1" not in sub.nodes
    assert sub.total_objects == 11


def test_modes(retriever):
    full = retriever.retrieve("Pick up the mug.", mode="full")
    assert full.full and len(full.nodes) == 13 and full.nodes["Sofa_2"].attributes["room"] == "living_room_1"
    assert retriever.retrieve("Pick up the mug.", full=True).full          # rag: the whole graph on request
    with pytest.raises(RetrievalError, match="rag-strict"):
        retriever.retrieve("Pick up the mug.", mode="rag-strict", full=True)
    with pytest.raises(RetrievalError, match="unknown retrieval mode"):
        retriever.retrieve("x", mode="everything")


def test_people_take_part_in_a_handover(retriever):
    sub = retriever.retrieve("Hand the mug to Adriana.")
    assert {"Person_1", "Person_2"} <= set(sub.people())
    assert "Person_1" not in retriever.retrieve("Pick up the mug.").nodes


def test_self_query_adds_what_tool_arguments_and_thoughts_mention(retriever):
    sub = retriever.retrieve("Pick up the apple.")
    assert "Book_4" not in sub.nodes and "CerealBox_1" not in sub.nodes
    new = retriever.self_query(sub, ["Book_4", "I should check the cereal box behind it."])
    assert "Book_4" in new and "CerealBox_1" in new
    assert "Book_4" in update_text(sub, ["Book_4"]) and "Sofa_2" in update_text(sub, ["Book_4"])


def test_the_representation_lists_objects_in_sight_and_remembered_ones(retriever):
    st = scene_text(retriever.retrieve("Pick up the clean mug."))
    lines = st.text.splitlines()
    assert lines[0].startswith("Objects in sight: ") and "Mug_1" in lines[0] and "Mug_7" not in lines[0]
    assert lines[1] == "Remembered objects out of sight: Mug_7 (kitchen_2, seen 2 min ago, on Table_3, not clean)"
    full = scene_text(retriever.retrieve("Pick up the clean mug.", mode="full"))
    assert full.tokens > st.tokens and "Book_4" in full.text
    # the rules reasoner takes the objects in sight from the line, and nothing else from it
    conv = read_conversation([{"role": "system", "content": "tools"},
                              {"role": "user", "content": "Query: pick(Mug)\n" + st.text},
                              {"role": "user", "content": update_text(retriever.retrieve("x", mode="full"), ["Book_4"])}])
    assert conv.query == "pick(Mug)" and conv.context == [] and "Mug_7" not in conv.objects_hint
    assert set(conv.objects_hint) == set(st.in_sight)
