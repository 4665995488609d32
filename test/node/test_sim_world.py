"""sim_world as a node: topics, services and the skill action, in a private rclpy Context."""
from __future__ import annotations

import json

import numpy as np
import pytest
from geometry_msgs.msg import PoseStamped
from raider_ros.ros.actions import ActionClient
from sensor_msgs.msg import CameraInfo, Image, LaserScan

from raider_ros.action import ExecuteSkill
from raider_ros.common.paths import scenes_dir
from raider_ros.sim.scene import load_scene
from raider_ros.ros.stamp_sync import StampSync
from raider_ros.msg import InstanceLabels, RobotState
from raider_ros.nodes.sim_world import SimWorldNode
from raider_ros.ros import conversions as conv
from raider_ros.srv import ApplySetup, GetGroundTruth, LoadScene
from support.ros import call, params, private_context, spinning, wait_future, wait_until

EXAMPLE = scenes_dir() / "kitchen.scene.yaml"


@pytest.fixture(scope="module")
def sim():
    with private_context() as ctx:
        node = SimWorldNode(context=ctx, parameter_overrides=params(scene=str(EXAMPLE), rate_hz=20.0,
                                                                     skill_duration_s=0.3))
        from rclpy.node import Node
        client = Node("sim_world_test_client", context=ctx)
        with spinning(ctx, node, client):
            yield node, client


def _truth(client):
    c = client.create_client(GetGroundTruth, "sim/get_ground_truth")
    res = call(c, GetGroundTruth.Request())
    client.destroy_client(c)
    return res


def first_synced(client, topics: dict, what: str) -> dict:
    """The first set of messages, one per topic of ``topics`` ({key: (name, type)}), that share a stamp."""
    got: list[dict] = []
    sync = StampSync(list(topics), got.append)
    subs = [client.create_subscription(t, name, lambda m, k=k: sync.add(k, (m.header.stamp.sec, m.header.stamp.nanosec), m), 5)
            for k, (name, t) in topics.items()]
    wait_until(lambda: got, timeout=10, what=what)
    for s in subs:
        client.destroy_subscription(s)
    return got[0]


def test_publishes_complete_frames(sim):
    node, client = sim
    g = first_synced(client, {"rgb": ("camera/color/image_raw", Image), "depth": ("camera/depth/image_raw", Image),
                              "ids": ("camera/instance_ids", Image), "info": ("camera/camera_info", CameraInfo),
                              "pose": ("camera/pose", PoseStamped), "labels": ("camera/instance_labels", InstanceLabels)},
                     what="a complete camera frame")
    scene = load_scene(EXAMPLE)
    assert (g["rgb"].width, g["rgb"].height, g["rgb"].encoding) == (scene.camera.width, scene.camera.height_px, "rgb8")
    depth = conv.msg_to_image(g["depth"])
    assert g["depth"].encoding == "32FC1" and depth.dtype == np.float32
    ids = conv.msg_to_image(g["ids"])
    assert g["ids"].encoding == "32SC1"
    labels = dict(zip(g["labels"].instance_ids, g["labels"].object_ids))
    visible = set(np.unique(ids)) - {0}
    assert visible and visible <= set(labels)
    assert set(labels.values()) <= {e.id for e in scene.entities}
    info = g["info"]
    assert info.k[0] > 0 and info.k[2] == pytest.approx((info.width - 1) / 2)
    assert g["pose"].header.frame_id == "map"
    assert g["pose"].pose.position.z == pytest.approx(scene.camera.height)


def test_publishes_the_base_laser_scan_with_the_camera_stamp(sim):
    node, client = sim
    g = first_synced(client, {"scan": ("scan", LaserScan), "scan_pose": ("scan/pose", PoseStamped),
                              "camera_pose": ("camera/pose", PoseStamped)},
                     what="a scan with the camera frame's stamp")
    scan, pose = g["scan"], g["scan_pose"]
    assert scan.header.frame_id == "base_laser" and pose.header.frame_id == "map"
    assert len(scan.ranges) == 541 and scan.range_min == pytest.approx(0.05) and scan.range_max == pytest.approx(10.0)
    assert scan.angle_min == pytest.approx(-np.radians(135.0)) and scan.angle_max == pytest.approx(np.radians(135.0))
    scene = load_scene(EXAMPLE)
    assert pose.pose.position.z == pytest.approx(0.15)
    assert (pose.pose.position.x, pose.pose.position.y) == pytest.approx((scene.robot.x, scene.robot.y))
    # what the scene graph rebuilds from the messages is what the local pipeline hands it
    from raider_ros.evaluation.local import base_scan
    ros = conv.msgs_to_base_scan(scan, pose)
    local = base_scan(node.world.scan())
    assert ros.pose == pytest.approx(local.pose) and ros.height_m == pytest.approx(local.height_m)
    assert np.isfinite(ros.ranges).any()
    assert ros.world_points() == pytest.approx(local.world_points(), abs=1e-6)


def test_ground_truth(sim):
    _node, client = sim
    res = _truth(client)
    scene = load_scene(EXAMPLE)
    assert res.success and res.scene_name == scene.name
    assert {o.id for o in res.objects} == {o.id for o in scene.objects}
    truth = json.loads(res.truth_json)
    assert truth["robot"]["reach"] == pytest.approx(scene.robot.reach)
    assert len(res.people) == len(scene.people)


def test_load_scene_atomic_and_errors_name_the_problem(sim):
    node, client = sim
    c = client.create_client(LoadScene, "sim/load_scene")
    before = node.world.version
    bad = call(c, LoadScene.Request(yaml_text="format: raider-scene/1\nname: x\nrobot: {pose: [0, 0]}\n"))
    assert not bad.success and "robot.pose" in bad.message
    missing = call(c, LoadScene.Request(path="/nonexistent/nothing.scene.yaml"))
    assert not missing.success and "nothing.scene.yaml" in missing.message
    empty = call(c, LoadScene.Request())
    assert not empty.success and "path or yaml_text" in empty.message
    assert node.world.version == before
    ok = call(c, LoadScene.Request(path=str(EXAMPLE)))
    assert ok.success and ok.scene_name == load_scene(EXAMPLE).name and ok.world_version > before
    client.destroy_client(c)


def test_apply_setup(sim):
    node, client = sim
    scene = load_scene(EXAMPLE)
    victim = scene.objects[-1].id
    c = client.create_client(ApplySetup, "sim/apply_setup")
    res = call(c, ApplySetup.Request(setup_yaml=f"remove: [{victim}]", reset=True))
    assert res.success, res.message
    assert victim not in {o.id for o in _truth(client).objects}
    version = node.world.version
    bad = call(c, ApplySetup.Request(setup_yaml="remove: [NoSuchThing_9]", reset=True))
    assert not bad.success and "NoSuchThing_9" in bad.message
    garbage = call(c, ApplySetup.Request(setup_yaml="{unclosed: [", reset=True))
    assert not garbage.success and "YAML" in garbage.message
    assert node.world.version == version
    assert call(c, ApplySetup.Request(setup_yaml="", reset=True)).success  # back to the loaded scene
    assert victim in {o.id for o in _truth(client).objects}
    client.destroy_client(c)


def _skill(client, skill, args, timeout=10.0):
    ac = ActionClient(client, ExecuteSkill, "execute_skill")
    assert ac.wait_for_server(timeout_sec=30)
    feedback: list = []
    handle = wait_future(ac.send_goal_async(ExecuteSkill.Goal(skill=skill, args=args),
                                            feedback_callback=lambda f: feedback.append(f.feedback)), timeout)
    return ac, handle, feedback


def test_skill_failure_names_the_reason(sim):
    _node, client = sim
    ac, handle, feedback = _skill(client, "pick", ["NoSuchThing_9"])
    assert handle.accepted
    res = wait_future(handle.get_result_async()).result
    assert not res.success and "NoSuchThing_9" in res.message
    ac.destroy()


def test_skill_success_changes_the_world_and_sends_feedback(sim):
    node, client = sim
    call(client.create_client(ApplySetup, "sim/apply_setup"), ApplySetup.Request(setup_yaml="", reset=True))
    scene = node.world.scene
    from raider_ros.sim.world import SimWorld  # the truth decides which object is pickable now
    probe = SimWorld()
    probe.load(scene)
    target = next(o.id for o in scene.objects if o.has("pickupable") and probe.execute("pick", [o.id]).success)
    ac, handle, feedback = _skill(client, "pick", [target])
    res = wait_future(handle.get_result_async()).result
    assert res.success, res.message
    assert res.robot.holding == target
    assert feedback and feedback[-1].progress <= 1.0
    robot_msgs: list = []
    sub = client.create_subscription(RobotState, "robot_state", robot_msgs.append,
                                     __import__("raider_ros.nodes.sim_world", fromlist=["LATCHED"]).LATCHED)
    wait_until(lambda: any(m.holding == target for m in robot_msgs), what="robot_state with the held object")
    client.destroy_subscription(sub)
    ac.destroy()


def test_second_goal_rejected_while_a_skill_runs_and_cancel(sim):
    node, client = sim
    call(client.create_client(ApplySetup, "sim/apply_setup"), ApplySetup.Request(setup_yaml="", reset=True))
    version = node.world.version
    target = node.world.scene.objects[0].id
    ac, first, _ = _skill(client, "move_to", [target])
    assert first.accepted
    wait_until(lambda: node._skill_lock.locked(), what="skill running")
    ac2, second, _ = _skill(client, "move_to", [target])
    assert not second.accepted
    wait_future(first.cancel_goal_async())
    res = wait_future(first.get_result_async())
    assert not res.result.success and "cancel" in res.result.message.lower()
    assert node.world.version == version  # a cancelled skill leaves the world unchanged
    ac.destroy()
    ac2.destroy()
