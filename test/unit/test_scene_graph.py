"""Scene graph: nodes, relation edges, stable ids, the unseen policy, threads, JSON, markers."""
import json
import math
import threading

import numpy as np
import pytest

from raider_ros.perception.provider import TruthProvider
from raider_ros.perception.scene_graph import ROBOT_ID, SceneGraph, jsonable
from raider_ros.perception.types import Relation
from scene_graph_fixtures import KITCHEN, TRUTH, Result, kitchen_result, perceived, result, synthetic_result


@pytest.fixture
def provider():
    return TruthProvider(TRUTH)


def test_nodes_and_edges_from_a_result(provider):
    g = SceneGraph()
    up = g.update(kitchen_result(), provider, stamp=10.0)
    s = g.snapshot()
    assert up.frame == 1 and s.frame == 1 and up.dropped_relations == 0
    assert set(up.added) == {o.name for o in KITCHEN}
    mug = s.node("Mug_1")
    assert mug["kind"] == "object" and mug["type"] == "Mug" and mug["visible"] and not mug["held"]
    assert mug["state"] == {"clean": True} and "pickupable" in mug["properties"]
    assert mug["last_seen"] == 10.0 and mug["pixel_count"] > 0
    assert np.allclose(mug["center"], [0.53, -0.33, 0.95]) and np.allclose(mug["size"], [0.09, 0.09, 0.1])
    adriana = s.node("Person_1")
    assert adriana["kind"] == "person" and adriana["name"] == "Adriana"
    assert adriana["looking_at_robot"] is False and adriana["hands_free"] is True
    assert s.node(ROBOT_ID)["reach"] == 1.1
    assert s.related("CounterTop_1", "on top of") == [("Apple_1", {"gap_m": 0.0}), ("Mug_1", {"gap_m": 0.0})]
    assert s.related("CounterTop_1", "near") == []
    assert s.related("Nothing_1", "near") == []
    assert sorted(s.visible_objects()) == sorted(o.name for o in KITCHEN if not o.is_person)
    assert sorted(s.visible_people()) == ["Person_1", "Person_2"]


def test_update_without_provider_keeps_geometry():
    g = SceneGraph()
    g.update(kitchen_result(), stamp=1.0)
    s = g.snapshot()
    assert s.node("Mug_1")["state"] is None and s.robot is None and ROBOT_ID not in s.graph


def test_unknown_ids_in_provider_leave_state_empty(provider):
    g = SceneGraph()
    g.update(result([perceived("Vase_1", [1, 0, 1], [0.1, 0.1, 0.2])]), provider, stamp=1.0)
    assert g.snapshot().node("Vase_1")["state"] is None


def test_relations_naming_unknown_entities_are_dropped(provider):
    g = SceneGraph()
    up = g.update(result(KITCHEN[:2], [("Apple_1", "on top of", "CounterTop_1", {}),
                                       ("Ghost_1", "near", "Apple_1", {})]), provider, stamp=1.0)
    assert up.dropped_relations == 1
    assert g.snapshot().relation_triples() == [("Apple_1", "on top of", "CounterTop_1")]


def test_unseen_policy_keeps_then_forgets(provider):
    g = SceneGraph(forget_after_s=5.0)
    g.update(kitchen_result(), provider, stamp=0.0)
    without_mug = result([o for o in KITCHEN if o.name != "Mug_1"])
    up = g.update(without_mug, provider, stamp=2.0)
    s = g.snapshot()
    assert up.lost == ("Mug_1",)
    mug = s.node("Mug_1")
    assert mug is not None and mug["visible"] is False and mug["last_seen"] == 0.0
    assert s.seconds_since_seen("Mug_1") == pytest.approx(2.0)
    assert s.related("CounterTop_1", "on top of") == []          # relations are per frame
    assert "Mug_1" not in s.visible_objects()
    up = g.update(without_mug, provider, stamp=5.5)
    assert up.forgotten == ("Mug_1",) and g.snapshot().node("Mug_1") is None
    # seen again: a new node, a new first_seen
    g.update(kitchen_result(), provider, stamp=6.0)
    assert g.snapshot().node("Mug_1")["first_seen"] == 6.0


def test_first_seen_survives_updates(provider):
    g = SceneGraph()
    g.update(kitchen_result(), provider, stamp=1.0)
    g.update(kitchen_result(), provider, stamp=2.0)
    a = g.snapshot().node("Apple_1")
    assert a["first_seen"] == 1.0 and a["last_seen"] == 2.0


def test_held_object_is_kept_and_flagged(provider):
    g = SceneGraph(forget_after_s=1.0)
    g.update(kitchen_result(), provider, stamp=0.0)
    truth = json.loads(json.dumps(TRUTH))
    truth["robot"]["holding"] = "Mug_1"
    provider.update(truth)
    g.update(result([o for o in KITCHEN if o.name != "Mug_1"]), provider, stamp=10.0)
    s = g.snapshot()
    assert s.node("Mug_1")["held"] is True and s.node("Mug_1")["visible"] is False
    assert ("robot", "holding", "Mug_1") in s.relation_triples()
    # held since before the graph existed: a node without geometry, typed by the provider
    truth["robot"]["holding"] = "Knife_1"
    provider.update(truth)
    g.update(kitchen_result(), provider, stamp=11.0)
    s = g.snapshot()
    assert s.node("Knife_1")["held"] and s.node("Knife_1")["type"] == "Knife" and s.node("Knife_1")["center"] is None
    assert s.node("Mug_1")["visible"] and not s.node("Mug_1")["held"]
    assert s.matcher.match("knife").ids == ("Knife_1",)
    assert all(m["id"] != "Knife_1" for m in s.markers())


def test_unnamed_detections_get_stable_minted_ids():
    g = SceneGraph()
    # a detector that only knows labels: name == label
    a = perceived("Mug", [1.0, 0.0, 0.95], [0.09, 0.09, 0.1], label="Mug")
    b = perceived("Cup", [1.5, 0.3, 0.95], [0.09, 0.09, 0.1], label="Cup")
    up = g.update(result([a, b]), stamp=0.0)
    assert up.renamed == {"Mug": "Mug_1", "Cup": "Cup_1"}
    # next frame: the mug moved 5 cm, the cup is gone, a second mug appears far away
    a2 = perceived("Mug", [1.05, 0.0, 0.95], [0.09, 0.09, 0.1], label="Mug")
    c = perceived("mug#2", [2.5, -1.0, 0.95], [0.09, 0.09, 0.1], label="Mug")
    g2 = SceneGraph(trust_names=False)
    g2.update(result([a, b]), stamp=0.0)
    up = g2.update(result([a2, c], [("Mug", "near", "mug#2", {"gap_m": 1.0})]), stamp=1.0)
    assert up.renamed == {"Mug": "Mug_1", "mug#2": "Mug_2"}
    s = g2.snapshot()
    assert s.node("Mug_1")["visible"] and s.node("Cup_1")["visible"] is False
    assert s.related("Mug_2", "near") == [("Mug_1", {"gap_m": 1.0})]
    # ids are never reused: the cup comes back far from where it was -> Cup_2
    far_cup = perceived("Cup", [0.5, 1.5, 0.95], [0.09, 0.09, 0.1], label="Cup")
    up = g2.update(result([far_cup]), stamp=2.0)
    assert up.renamed == {"Cup": "Cup_2"}          # 1.1 m from Cup_1: not the same cup


def test_association_prefers_overlap():
    g = SceneGraph(trust_names=False)
    one = perceived("Bowl", [1.0, 0.0, 0.95], [0.2, 0.2, 0.08], label="Bowl")
    two = perceived("Bowl", [1.0, 0.5, 0.95], [0.2, 0.2, 0.08], label="Bowl")
    g.update(Result({"a": one, "b": two}, []), stamp=0.0)
    s = g.snapshot()
    ids = {tuple(np.round(s.node(n)["center"], 2)): n for n in s.ids("object")}
    # both move a little, reported in the other order
    one_b = perceived("Bowl", [1.02, 0.0, 0.95], [0.2, 0.2, 0.08], label="Bowl")
    two_b = perceived("Bowl", [1.0, 0.52, 0.95], [0.2, 0.2, 0.08], label="Bowl")
    up = g.update(Result({"x": two_b, "y": one_b}, []), stamp=1.0)
    assert up.renamed["y"] == ids[(1.0, 0.0, 0.95)] and up.renamed["x"] == ids[(1.0, 0.5, 0.95)]


def test_nan_and_inf_distances_serialise(provider):
    g = SceneGraph()
    objs = [perceived("Apple_1", [0.45, 0.28, 0.94], [0.08, 0.08, 0.08], distance=float("nan")),
            perceived("Mug_1", [0.53, -0.33, 0.95], [0.09, 0.09, 0.1], distance=float("inf"))]
    g.update(result(objs, [Relation("Apple_1", "near", "Mug_1", {"gap_m": np.float32(0.1), "ok": np.bool_(True)})]),
             provider, stamp=1.0)
    doc = json.loads(g.to_json())
    nodes = {n["id"]: n for n in doc["nodes"]}
    assert nodes["Apple_1"]["distance_m"] is None and nodes["Mug_1"]["distance_m"] is None
    assert doc["edges"][0]["evidence"] == {"gap_m": pytest.approx(0.1, abs=1e-4), "ok": True}
    texts = {m["id"]: m["text"] for m in g.markers()}
    assert texts["Apple_1"] == "Apple_1"


def test_to_json_and_markers(provider):
    g = SceneGraph()
    assert json.loads(g.to_json()) == {"frame": 0, "stamp": 0.0, "nodes": [], "edges": []}
    assert g.markers() == []
    g.update(kitchen_result(), provider, stamp=3.0)
    doc = json.loads(g.to_json())
    assert doc["frame"] == 1 and len(doc["nodes"]) == len(KITCHEN) + 1
    assert {"subject": "Apple_1", "relation": "on top of", "object": "CounterTop_1",
            "evidence": {"gap_m": 0.0}} in doc["edges"]
    markers = g.markers()
    assert len(markers) == len(KITCHEN)
    by_id = {m["id"]: m for m in markers}
    m = by_id["Person_1"]
    assert m["ns"] == "person" and m["text"].startswith("Person_1 (Adriana)") and len(m["color"]) == 4
    assert set(by_id["Mug_1"]) >= {"id", "marker_id", "type", "center", "size", "color", "text"}
    assert len({m["marker_id"] for m in markers}) == len(markers)
    # marker ids are stable, unseen objects turn grey
    g.update(result([o for o in KITCHEN if o.name != "Mug_1"]), provider, stamp=4.0)
    again = {m["id"]: m for m in g.markers()}
    assert again["Mug_1"]["marker_id"] == by_id["Mug_1"]["marker_id"]
    assert again["Mug_1"]["visible"] is False and "unseen" in again["Mug_1"]["text"]


def test_bad_input():
    g = SceneGraph()
    with pytest.raises(TypeError, match="perception result"):
        g.update({"objects": {}}, stamp=0.0)
    with pytest.raises(TypeError, match="not a PerceivedObject"):
        g.update(Result({"Mug_1": "mug"}, []), stamp=0.0)
    with pytest.raises(ValueError, match="forget_after_s"):
        SceneGraph(forget_after_s=0)
    # an empty frame is fine
    up = g.update(result([]), stamp=0.0)
    assert up.frame == 1 and g.snapshot().ids() == []


def test_clear(provider):
    g = SceneGraph()
    g.update(kitchen_result(), provider, stamp=0.0)
    g.clear()
    assert g.snapshot().ids() == [] and g.snapshot().frame == 0


def test_readers_see_whole_snapshots_while_updating(provider):
    g = SceneGraph()
    full, partial = kitchen_result(), result(KITCHEN[:3])
    g.update(full, provider, stamp=0.0)
    errors, stop = [], threading.Event()

    def reader():
        while not stop.is_set():
            s = g.snapshot()
            n_vis = len(s.visible_objects()) + len(s.visible_people())
            if n_vis not in (len(KITCHEN), 3):
                errors.append(n_vis)
            json.loads(s.to_json())

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for i in range(60):
        g.update(partial if i % 2 else full, provider, stamp=float(i))
    stop.set()
    for t in threads:
        t.join()
    assert errors == []


def test_large_update_is_complete():
    g = SceneGraph()
    res = synthetic_result(50, 2500)
    up = g.update(res, stamp=0.0)
    s = g.snapshot()
    assert len(s.ids("object")) == 50
    assert len(s.relation_triples()) == len({(r.subject, r.object, r.relation) for r in res.relations})
    assert up.elapsed_ms > 0


def test_jsonable():
    assert jsonable({"a": np.float64(1.23456), "b": [np.int64(2), float("nan")], "c": (1, 2),
                     "d": np.array([1.0, math.inf])}) == {"a": 1.2346, "b": [2, None], "c": [1, 2], "d": [1.0, None]}
