"""The scene_graph node's retrieval: objects remembered through scene_graph/remember, the
scene_graph/retrieve service (modes, errors), the retrieved topic and markers. No camera runs
here: the graph holds remembered objects only, which is what retrieval works on at house scale."""
from __future__ import annotations

import json

import pytest
from rclpy.node import Node
from std_msgs.msg import String
from visualization_msgs.msg import MarkerArray

from raider_ros.nodes.scene_graph import SceneGraphNode
from raider_ros.sim.house import generate_house, memory_entries
from raider_ros.srv import Retrieve
from support.ros import call, params, private_context, spinning, wait_until


@pytest.fixture(scope="module")
def node():
    with private_context() as ctx:
        n = SceneGraphNode(context=ctx, parameter_overrides=params(preload_user_info=False))
        client = Node("retrieve_test_client", context=ctx)
        with spinning(ctx, n, client):
            yield n, client


def test_remember_then_retrieve(node):
    n, client = node
    got, markers = [], []
    client.create_subscription(String, "scene_graph/retrieved", got.append, 10)
    client.create_subscription(MarkerArray, "scene_graph/retrieved_markers", markers.append, 10)
    pub = client.create_publisher(String, "scene_graph/remember", 10)
    entries = memory_entries(generate_house(600, seed=2))
    wait_until(lambda: pub.get_subscription_count() > 0, what="scene_graph/remember subscriber")
    pub.publish(String(data=json.dumps(entries)))
    wait_until(lambda: len(n.graph.snapshot().ids("object")) == len(entries), timeout=20, what="remembered objects")
    c = client.create_client(Retrieve, "scene_graph/retrieve")
    res = call(c, Retrieve.Request(task="Pick up the mug."), timeout=120)
    assert res.success and res.mode == "rag" and res.total_objects == len(entries)
    types = {i.rsplit("_", 1)[0] for i in res.ids}
    assert "Mug" in types and len(res.ids) <= 10 and len(res.scores) == len(res.ids) == len(res.reasons)
    assert "Remembered objects out of sight: Mug_" in res.scene_text and res.scene_tokens > 0
    sub = json.loads(res.subgraph_json)
    assert {x["id"] for x in sub["nodes"]} == set(res.ids)
    full = call(c, Retrieve.Request(task="Pick up the mug.", mode="full"), timeout=60)
    assert full.success and len(full.ids) == len(entries) and full.scene_tokens > 20 * res.scene_tokens
    strict = call(c, Retrieve.Request(task="Pick up the mug.", mode="rag-strict", full_graph=True))
    assert not strict.success and "rag-strict" in strict.error
    bad = call(c, Retrieve.Request(task="x", mode="everything"))
    assert not bad.success and "unknown retrieval mode" in bad.error
    wait_until(lambda: got and markers, what="retrieved topic and markers")
    assert json.loads(got[0].data)["ids"] == list(res.ids)
