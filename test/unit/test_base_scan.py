"""Floor obstacles from the base laser (perception/base_scan.py): the obstacle function on
synthetic points (the corridor, the target and its support, walls behind, clustering,
attribution), and end to end on simulated scenes through the scene graph, the tools and the
rules reasoner (check_free_path, check_obj_relationship blocking, no scan = camera only)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from raider_ros.evaluation.local import base_scan, make_pipeline
from raider_ros.perception.base_scan import BaseScan, ScanObstacleParams, floor_obstacles
from raider_ros.perception.oracle import OracleGeometry
from raider_ros.sim.scene import parse_scene

CORRIDOR = 0.3


def box(lo, hi):
    return np.asarray(lo, float), np.asarray(hi, float)


def segment(p0, p1, step=0.005):
    """Points every ``step`` along a wall face from p0 to p1 (what a scan of it gives)."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    n = max(int(np.linalg.norm(p1 - p0) / step), 1) + 1
    return p0 + np.linspace(0.0, 1.0, n)[:, None] * (p1 - p0)


MUG = box([0.86, -0.04, 0.90], [0.94, 0.04, 1.00])          # on the counter, straight ahead
COUNTER = box([0.80, -0.80, 0.0], [1.40, 0.80, 0.90])


# --------------------------------------------------------------------------- the function
def test_a_stool_on_the_path_is_an_unidentified_obstacle_ahead():
    stool_face = segment([0.30, -0.1], [0.30, 0.1])
    obs = floor_obstacles(stool_face, (0.0, 0.0), MUG, {"Counter_1": COUNTER}, CORRIDOR, base_yaw_deg=0.0)
    assert len(obs) == 1
    o = obs[0]
    assert o.object_id is None and o.name == "an obstacle on the floor 0.30 m ahead"
    assert o.distance_m == pytest.approx(0.30) and o.path_distance_m == pytest.approx(0.0, abs=1e-9)
    ev = o.evidence()
    assert ev["seen_by"] == "base laser" and ev["unidentified"] is True and ev["position"] == [0.3, 0.0]


def test_the_targets_support_and_the_target_are_not_obstacles():
    counter_face = segment([0.80, -0.8], [0.80, 0.8])       # the counter the mug stands on, straight ahead
    assert floor_obstacles(counter_face, (0.0, 0.0), MUG, {"Counter_1": COUNTER}, CORRIDOR) == []
    # a bucket on the floor as the target: its own face is the end of the path
    bucket = box([0.85, -0.15, 0.0], [1.15, 0.15, 0.3])
    assert floor_obstacles(segment([0.85, -0.15], [0.85, 0.15]), (0.0, 0.0), bucket, {}, CORRIDOR) == []
    # without the counter perceived, its face is an obstacle: the exclusion comes from the support
    assert len(floor_obstacles(counter_face, (0.0, 0.0), MUG, {}, CORRIDOR)) == 1


def test_a_wall_behind_the_target_and_things_behind_the_robot_do_not_block():
    bucket = box([0.85, -0.15, 0.0], [1.15, 0.15, 0.3])
    wall = segment([1.20, -2.0], [1.20, 2.0])                # 5 cm behind the bucket, along the whole width
    assert floor_obstacles(wall, (0.0, 0.0), bucket, {}, CORRIDOR) == []
    behind = segment([-0.25, -0.1], [-0.25, 0.1])
    assert floor_obstacles(behind, (0.0, 0.0), bucket, {}, CORRIDOR) == []


def test_an_obstacle_beside_the_corridor_does_not_block_one_inside_does():
    beside = segment([0.3, 0.35], [0.6, 0.35])              # 0.35 m from the path line
    assert floor_obstacles(beside, (0.0, 0.0), MUG, {"Counter_1": COUNTER}, CORRIDOR) == []
    inside = segment([0.3, 0.25], [0.6, 0.25])
    obs = floor_obstacles(inside, (0.0, 0.0), MUG, {"Counter_1": COUNTER}, CORRIDOR, base_yaw_deg=0.0)
    assert len(obs) == 1 and obs[0].path_distance_m == pytest.approx(0.25)
    assert obs[0].name.endswith("m ahead")
    # a wider corridor takes the first one in as well
    assert len(floor_obstacles(beside, (0.0, 0.0), MUG, {"Counter_1": COUNTER}, 0.4)) == 1


def test_clusters_noise_and_names():
    left = segment([0.3, 0.05], [0.3, 0.15])
    right = segment([0.5, -0.15], [0.5, -0.05])
    speck = np.array([[0.7, 0.0]])                           # one stray return: noise
    obs = floor_obstacles(np.vstack([left, right, speck]), (0.0, 0.0), MUG, {"Counter_1": COUNTER}, CORRIDOR,
                          base_yaw_deg=0.0)
    assert [o.object_id for o in obs] == [None, None]
    assert obs[0].distance_m < obs[1].distance_m                # nearest first
    assert len({o.name for o in obs}) == 2
    # seen from a robot turned left (yaw 90), the same obstacle is to its right
    turned = floor_obstacles(left, (0.0, 0.0), MUG, {"Counter_1": COUNTER}, CORRIDOR, base_yaw_deg=90.0)
    assert turned[0].name.endswith("m to the right")
    assert floor_obstacles(speck, (0.0, 0.0), MUG, {}, CORRIDOR, params=ScanObstacleParams(min_points=1))


def test_a_cluster_under_a_perceived_objects_footprint_takes_its_id():
    chair_top = box([0.25, -0.2, 0.45], [0.60, 0.2, 0.95])   # seat and back seen, legs not
    legs = np.vstack([segment([0.27, -0.18], [0.27, -0.16]), segment([0.27, 0.16], [0.27, 0.18])])
    obs = floor_obstacles(legs, (0.0, 0.0), MUG, {"Counter_1": COUNTER, "Chair_1": chair_top}, CORRIDOR)
    assert [(o.name, o.object_id) for o in obs] == [("Chair_1", "Chair_1")]     # both legs, one object
    assert "unidentified" not in obs[0].evidence()


def test_a_cluster_just_in_front_of_an_object_whose_bottom_is_unseen_takes_its_id():
    stool_top = box([0.40, -0.12, 0.38], [0.46, 0.12, 0.45])   # only the far edge of the top in view
    face = segment([0.20, -0.12], [0.20, 0.12])
    obs = floor_obstacles(face, (0.0, 0.0), MUG, {"Counter_1": COUNTER, "Stool_1": stool_top}, CORRIDOR)
    assert [o.object_id for o in obs] == ["Stool_1"]
    # an object seen down to the floor is not continued towards the robot
    crate = box([0.40, -0.12, 0.0], [0.46, 0.12, 0.45])
    obs = floor_obstacles(face, (0.0, 0.0), MUG, {"Counter_1": COUNTER, "Crate_1": crate}, CORRIDOR)
    assert [o.object_id for o in obs] == [None]
    # nor is a small thing standing on the counter
    knife = box([0.82, -0.3, 0.90], [0.84, 0.0, 0.92])
    obs = floor_obstacles(segment([0.6, -0.2], [0.6, 0.0]), (0.0, 0.0), MUG,
                          {"Counter_1": COUNTER, "Knife_1": knife}, CORRIDOR)
    assert [o.object_id for o in obs] == [None]


def test_no_points_and_degenerate_paths():
    assert floor_obstacles(np.zeros((0, 2)), (0.0, 0.0), MUG, {}, CORRIDOR) == []
    inside_target = box([-0.5, -0.5, 0.0], [0.5, 0.5, 0.5])   # the base stands in the target's footprint
    assert floor_obstacles(segment([0.3, -0.1], [0.3, 0.1]), (0.0, 0.0), inside_target, {}, CORRIDOR) == []


def test_base_scan_world_points():
    s = BaseScan(ranges=[1.0, np.inf, 2.0, np.nan, 0.01], angle_min=-math.pi / 2, angle_increment=math.pi / 2,
                 range_min=0.05, range_max=10.0, pose=(1.0, 2.0, 90.0))
    pts = s.world_points()
    # beam 0: yaw 90 - 90 = 0 deg -> +x; beam 2: 180 deg -> -x; inf, NaN and below range_min dropped
    assert pts == pytest.approx(np.array([[2.0, 2.0], [-1.0, 2.0]]))
    with pytest.raises(ValueError, match="pose"):
        BaseScan(ranges=[1.0], angle_min=0.0, angle_increment=0.1, range_min=0.05, range_max=1.0, pose=(0, 0))


# --------------------------------------------------------------------------- end to end
def scene(objects):
    return parse_scene({"format": "raider-scene/1", "name": "scan_test",
                        "robot": {"pose": [0.0, 0.0, 0.0], "reach": 1.1, "holding": None},
                        "objects": [dict({"shape": "box", "properties": [], "state": {}}, **o) for o in objects]},
                       "test")


def obj(oid, center, size, **kw):
    return dict({"id": oid, "type": oid.split("_")[0], "center": list(center), "size": list(size)}, **kw)


COUNTER_OBJ = obj("Counter_1", [1.1, 0.0, 0.45], [0.6, 1.6, 0.9], properties=["receptacle"])
MUG_OBJ = obj("Mug_1", [0.9, 0.0, 0.95], [0.08, 0.08, 0.1], shape="cylinder", properties=["pickupable"])
STOOL_OBJ = obj("Stool_1", [0.3, 0.0, 0.2], [0.2, 0.2, 0.4])          # under the camera's view
CHAIR_OBJ = obj("Chair_1", [0.35, 0.0, 0.45], [0.4, 0.4, 0.9])        # close: only its top in view


@pytest.fixture(scope="module")
def pipe():
    return make_pipeline("rules", extra={"use_embeddings": False})


def tool(pipe, name, *args):
    r = pipe.tools.call(name, list(args), deadline=None)
    assert r.success, r.error
    return r.data


def test_a_stool_the_camera_cannot_see_blocks_the_path(pipe):
    s = scene([COUNTER_OBJ, MUG_OBJ, STOOL_OBJ])
    assert OracleGeometry(s).answer("Stool_1", "blocking", "Mug_1").holds          # the truth
    pipe.prepare(s, None)
    assert "Stool_1" not in tool(pipe, "object_detection")                         # 0 pixels
    path = tool(pipe, "check_free_path", "Mug_1")
    assert path["free"] is False and path["blocking"] == ["an obstacle on the floor 0.20 m ahead"]
    ev = path["evidence"]["an obstacle on the floor 0.20 m ahead"]
    assert ev["seen_by"] == "base laser" and ev["distance_to_path_m"] == pytest.approx(0.0, abs=1e-3)
    assert ev["distance_from_robot_m"] == pytest.approx(0.2, abs=1e-3)
    rel = tool(pipe, "check_obj_relationship", "blocking", "Mug_1")
    assert rel["related"] == ["an obstacle on the floor 0.20 m ahead"]
    assert rel["evidence"]["an obstacle on the floor 0.20 m ahead"]["path_distance_m"] == pytest.approx(0.0, abs=1e-3)
    # the rules reasoner says the way is blocked, what and where, and which sensor saw it
    out = pipe.detect("pick(Mug)")
    assert out.issue == "unfeasibility"
    assert "blocked" in out.explanation and "an obstacle on the floor 0.20 m ahead" in out.explanation
    assert "seen by the base laser" in out.explanation
    # the assistive toolset has check_free_path and no check_obj_relationship
    assisted = pipe.detect("pick(Mug)", toolset="assistive")
    assert assisted.issue == "unfeasibility" and "check_obj_relationship" not in assisted.tools_used
    assert "an obstacle on the floor 0.20 m ahead" in assisted.explanation
    assert "seen by the base laser" in assisted.explanation


def test_without_a_scan_the_tools_answer_from_the_camera_only(pipe):
    s = scene([COUNTER_OBJ, MUG_OBJ, STOOL_OBJ])
    pipe.prepare(s, None)
    pipe.graph.set_scan(None)
    path = tool(pipe, "check_free_path", "Mug_1")
    assert path["free"] is True and path["evidence"] == {}
    assert tool(pipe, "check_obj_relationship", "blocking", "Mug_1")["related"] == []
    assert pipe.detect("pick(Mug)").issue == "none"


def test_a_target_on_a_counter_straight_ahead_with_nothing_on_the_floor_is_free(pipe):
    s = scene([COUNTER_OBJ, MUG_OBJ])
    pipe.prepare(s, None)
    assert np.isfinite(pipe.world.scan().ranges).any()          # the laser sees the counter's front
    assert tool(pipe, "check_free_path", "Mug_1")["free"] is True
    assert tool(pipe, "check_obj_relationship", "blocking", "Mug_1")["related"] == []
    assert pipe.detect("pick(Mug)").issue == "none"


def test_a_close_chair_seen_only_at_its_top_is_named(pipe):
    s = scene([COUNTER_OBJ, MUG_OBJ, CHAIR_OBJ])
    assert OracleGeometry(s).answer("Chair_1", "blocking", "Mug_1").holds
    pipe.prepare(s, None)
    assert pipe.graph.snapshot().perceived["Chair_1"].aabb_min[2] > 0.3        # its bottom unseen
    path = tool(pipe, "check_free_path", "Mug_1")
    assert path["blocking"] == ["Chair_1"] and "base laser" in path["evidence"]["Chair_1"]["seen_by"]
    assert "Chair_1" in tool(pipe, "check_obj_relationship", "blocking", "Mug_1")["related"]


def test_local_scan_is_the_published_scan(pipe):
    """base_scan() keeps what sim_world publishes: the model's angles, limits and the pose."""
    s = scene([COUNTER_OBJ, MUG_OBJ, STOOL_OBJ])
    pipe.prepare(s, None)
    sim = pipe.world.scan()
    got = pipe.graph.snapshot().scan
    assert got is not None and got.pose == sim.pose and got.height_m == sim.model.height_m
    assert got.ranges == pytest.approx(base_scan(sim).ranges)
    assert got.angle_min == pytest.approx(-math.radians(135.0)) and len(got.ranges) == 541


def test_an_object_on_a_rug_still_takes_the_cluster_under_it():
    rug = box([-0.5, -1.0, 0.0], [1.5, 1.0, 0.01])
    chair_top = box([0.25, -0.2, 0.45], [0.60, 0.2, 0.95])
    legs = segment([0.27, -0.18], [0.27, -0.16])
    obs = floor_obstacles(legs, (0.0, 0.0), MUG, {"Counter_1": COUNTER, "Rug_1": rug, "Chair_1": chair_top}, CORRIDOR)
    assert [o.object_id for o in obs] == ["Chair_1"]


def test_a_chair_seen_only_at_its_seat_beside_a_sideboard_is_not_taken_for_a_thing_on_it():
    sideboard = box([0.40, 0.2, 0.0], [2.5, 1.4, 0.9])
    glass = box([0.48, 0.24, 0.90], [0.55, 0.31, 1.02])      # on the sideboard
    seat = box([0.21, -0.02, 0.90], [0.37, 0.42, 0.90])      # the chair's top only: level with the sideboard
    face = segment([0.05, 0.0], [0.05, 0.2])
    obs = floor_obstacles(face, (0.0, 0.0), glass, {"Sideboard_1": sideboard, "Chair_1": seat}, CORRIDOR)
    assert [o.object_id for o in obs] == ["Chair_1"]


def test_with_no_support_seen_a_surface_level_with_the_targets_bottom_is_its_support():
    tin = box([0.57, 0.66, 0.907], [0.62, 0.74, 1.01])        # at the far end of a counter the camera saw in part
    counter_seen = box([1.01, 0.40, 0.55], [2.60, 1.59, 0.90])
    end_face = segment([2.60, 0.6], [2.60, 1.2])               # what the laser sees: the counter's near end
    base = (3.0, 1.0)
    obs = floor_obstacles(end_face, base, tin, {"GalleyCounter_1": counter_seen}, CORRIDOR, base_yaw_deg=180.0)
    assert obs == []
    # a stool in front of that counter is still in the way
    stool = segment([2.75, 0.9], [2.75, 1.0])
    obs = floor_obstacles(np.vstack([end_face, stool]), base, tin, {"GalleyCounter_1": counter_seen}, CORRIDOR,
                          base_yaw_deg=180.0)
    assert [o.name for o in obs] == ["an obstacle on the floor 0.25 m ahead"]


def test_what_carries_the_targets_support_is_support_too():
    knife = box([0.85, 0.53, 0.92], [0.87, 0.77, 0.94])
    board = box([0.70, 0.53, 0.90], [1.02, 0.77, 0.92])        # the knife lies on it
    counter_seen = box([1.01, 0.40, 0.55], [2.60, 1.59, 0.90])  # the board rests on its (partly seen) top
    end_face = segment([2.60, 0.5], [2.60, 0.8])
    obs = floor_obstacles(end_face, (3.0, 1.0), knife, {"ChoppingBoard_1": board, "GalleyCounter_1": counter_seen},
                          CORRIDOR)
    assert obs == []
