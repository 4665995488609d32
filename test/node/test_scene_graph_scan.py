"""The scene_graph node hands the base laser scan to the tools: a stool the camera cannot see
blocks the path once a scan of the frame's stamp arrives (late, or with the frame), and a
node without scans answers from the camera only."""
from __future__ import annotations

import contextlib
import json
import time

import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped
from rclpy.node import Node
from sensor_msgs.msg import LaserScan
from std_msgs.msg import Header

from raider_ros.msg import Objects3D, SpatialRelations
from raider_ros.nodes.scene_graph import SceneGraphNode
from raider_ros.perception.pipeline import PerceptionPipeline
from raider_ros.ros import conversions as conv
from raider_ros.ros.perception_msgs import objects_to_msg, relations_to_msg
from raider_ros.sim.scene import parse_scene
from raider_ros.sim.world import SimWorld
from raider_ros.srv import CallTool
from support.ros import call, params, private_context, spinning, wait_until


def _scene():
    def obj(oid, center, size, **kw):
        return dict({"id": oid, "type": oid.split("_")[0], "shape": "box", "center": list(center), "size": list(size),
                     "properties": [], "state": {}}, **kw)
    return parse_scene({"format": "raider-scene/1", "name": "scan_node_test",
                        "robot": {"pose": [0.0, 0.0, 0.0], "reach": 1.1, "holding": None},
                        "objects": [obj("Counter_1", [1.1, 0.0, 0.45], [0.6, 1.6, 0.9], properties=["receptacle"]),
                                    obj("Mug_1", [0.9, 0.0, 0.95], [0.08, 0.08, 0.1], shape="cylinder",
                                        properties=["pickupable"]),
                                    obj("Stool_1", [0.3, 0.0, 0.2], [0.2, 0.2, 0.4])]}, "test")


@pytest.fixture(scope="module")
def world():
    w = SimWorld(_scene())
    frame, scan = w.sensors()
    robot = w.scene.robot
    perceived = PerceptionPipeline("sim").process(frame.rgb, frame.depth, frame.instance, frame.labels, frame.camera,
                                                  robot_xy=(robot.x, robot.y))
    return w, perceived, scan


@contextlib.contextmanager
def _graph(use_scan: bool):
    with private_context() as ctx:
        n = SceneGraphNode(context=ctx, parameter_overrides=params(preload_user_info=False, use_scan=use_scan))
        client = Node("scan_test_client", context=ctx)
        with spinning(ctx, n, client):
            yield n, client


def _publish_frame(client, pubs, world, sec: int, with_scan: bool, version: int | None = None):
    w, perceived, scan = world
    version = w.version if version is None else version
    stamp = Time(sec=sec, nanosec=0)
    h = Header(stamp=stamp, frame_id="map")
    if with_scan:
        msg, pose = conv.scan_to_msgs(scan)
        msg.header = Header(stamp=stamp, frame_id="base_laser")
        pose.header = h
        pubs["scan"].publish(msg)
        pubs["pose"].publish(pose)
    pubs["objects"].publish(objects_to_msg(perceived.objects, h, version))
    pubs["relations"].publish(relations_to_msg(perceived.relations, h, version))


def _free_path(client, target="Mug_1"):
    c = client.create_client(CallTool, "scene_graph/tools/check_free_path")
    res = call(c, CallTool.Request(tool="check_free_path", args=[target]), timeout=20)
    client.destroy_client(c)
    assert res.success, res.error
    return json.loads(res.result)


def _publishers(client):
    from raider_ros.ros.qos import SENSOR
    pubs = {"objects": client.create_publisher(Objects3D, "perception/objects3d", 2),
            "relations": client.create_publisher(SpatialRelations, "perception/relations", 2),
            "scan": client.create_publisher(LaserScan, "scan", SENSOR),
            "pose": client.create_publisher(PoseStamped, "scan/pose", SENSOR)}
    wait_until(lambda: pubs["objects"].get_subscription_count() > 0 and pubs["relations"].get_subscription_count() > 0,
               what="scene_graph subscribed to the perception topics")
    return pubs


def test_scene_graph_uses_a_published_scan(world):
    with _graph(use_scan=True) as (n, client):
        n.provider.update(world[0].truth())          # the robot pose (normally from sim/get_ground_truth)
        pubs = _publishers(client)
        wait_until(lambda: pubs["scan"].get_subscription_count() > 0 and pubs["pose"].get_subscription_count() > 0,
                   what="scene_graph subscribed to scan and scan/pose")
        # a frame with no scan yet: camera only, and the camera does not see the stool
        _publish_frame(client, pubs, world, 10, with_scan=False)
        wait_until(lambda: n.graph.snapshot().frame >= 1, what="the first frame folded in")
        assert n.graph.snapshot().scan is None
        first = _free_path(client)
        assert first["free"] is True and "Stool_1" not in first["blocking"]
        # the scan of that frame's stamp arrives late: the tools use it from then on
        msg, pose = conv.scan_to_msgs(world[2])
        msg.header = Header(stamp=Time(sec=10), frame_id="base_laser")
        pose.header = Header(stamp=Time(sec=10), frame_id="map")
        pubs["scan"].publish(msg)
        pubs["pose"].publish(pose)
        wait_until(lambda: n.graph.snapshot().scan is not None, what="the late scan handed to the tools")
        late = _free_path(client)
        assert late["free"] is False and late["blocking"] == ["an obstacle on the floor 0.20 m ahead"]
        assert late["evidence"]["an obstacle on the floor 0.20 m ahead"]["seen_by"] == "base laser"
        # a frame of a new world version with its own scan
        _publish_frame(client, pubs, world, 11, with_scan=True, version=world[0].version + 1)
        wait_until(lambda: n.graph.snapshot().frame >= 2 and n.graph.snapshot().scan is not None
                   and n.graph.snapshot().scan.stamp == 11.0, what="the second frame with its scan")
        assert _free_path(client)["free"] is False
        # scans come with the camera's stamps now: a frame waits for its own scan
        v = world[0].version + 2
        h12 = Header(stamp=Time(sec=12), frame_id="map")
        pubs["objects"].publish(objects_to_msg(world[1].objects, h12, v))
        pubs["relations"].publish(relations_to_msg(world[1].relations, h12, v))
        time.sleep(0.2)
        assert n.graph.snapshot().frame == 2 and n.frame_version == v - 1      # still waiting for its scan
        msg, pose = conv.scan_to_msgs(world[2])
        msg.header = Header(stamp=Time(sec=12), frame_id="base_laser")
        pose.header = h12
        pubs["scan"].publish(msg)
        pubs["pose"].publish(pose)
        wait_until(lambda: n.frame_version == v and n.graph.snapshot().scan.stamp == 12.0,
                   what="the waiting frame folded in with its own scan")
        # a frame whose scan never comes is folded in after scan_wait_s, with the last scan
        h13 = Header(stamp=Time(sec=13), frame_id="map")
        pubs["objects"].publish(objects_to_msg(world[1].objects, h13, v + 1))
        pubs["relations"].publish(relations_to_msg(world[1].relations, h13, v + 1))
        wait_until(lambda: n.frame_version == v + 1, timeout=5, what="the frame folded in without its scan")
        assert n.graph.snapshot().scan.stamp == 12.0 and _free_path(client)["free"] is False


def test_without_scans_the_node_answers_from_the_camera(world):
    with _graph(use_scan=False) as (n, client):
        n.provider.update(world[0].truth())
        pubs = _publishers(client)
        assert pubs["scan"].get_subscription_count() == 0       # not subscribed at all
        _publish_frame(client, pubs, world, 20, with_scan=True)
        wait_until(lambda: n.graph.snapshot().frame >= 1, what="the frame folded in")
        assert n.graph.snapshot().scan is None
        assert _free_path(client)["free"] is True
