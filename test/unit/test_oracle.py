"""The oracle on hand-built scenes: each relation of the spec, distances and reach."""
import math

import pytest

from raider_ros.sim.scene import parse_scene
from raider_ros.common.geometry import true_box
from raider_ros.perception.oracle import (OracleGeometry, oracle_distance, oracle_relation,
                                          oracle_relations, within_reach)

TABLE = {"id": "Table_1", "type": "Table", "shape": "box", "center": [1.5, 0.0, 0.4], "size": [0.8, 1.2, 0.8]}


def scene(*objects, people=(), robot=None):
    return parse_scene({"format": "raider-scene/1", "name": "t",
                        "robot": robot or {"pose": [0, 0, 0], "reach": 1.1},
                        "objects": [dict(o) for o in objects], "people": list(people)})


def obj(oid, center, size=(0.08, 0.08, 0.08), shape="box", **kw):
    return {"id": oid, "type": oid.split("_")[0], "shape": shape, "center": list(center), "size": list(size), **kw}


def test_rotated_box_uses_the_aabb_of_its_corners():
    s = scene(obj("Book_1", [1, 0, 0.5], [0.2, 0.1, 0.1], yaw_deg=90))
    lo, hi = true_box(s.object("Book_1"))
    assert hi[0] - lo[0] == pytest.approx(0.1) and hi[1] - lo[1] == pytest.approx(0.2)


def test_inside_needs_an_open_top_or_a_door():
    bowl = obj("Bowl_1", [1.3, 0, 0.85], [0.2, 0.2, 0.1], shape="cylinder", open_top=True)
    apple = obj("Apple_1", [1.3, 0, 0.84], shape="sphere")
    s = scene(TABLE, bowl, apple)
    assert oracle_relation(s, "Apple_1", "inside", "Bowl_1")
    assert not oracle_relation(s, "Bowl_1", "inside", "Apple_1")
    closed = dict(bowl, open_top=False)
    assert not oracle_relation(scene(TABLE, closed, apple), "Apple_1", "inside", "Bowl_1")
    cabinet = obj("Cabinet_1", [1.5, 0, 0.3], [0.5, 0.6, 0.6], door="-x", state={"open": False},
                  properties=["openable"])
    box = obj("Box_1", [1.5, 0, 0.1])
    assert oracle_relation(scene(cabinet, box), "Box_1", "inside", "Cabinet_1")


def test_on_top_of_above_and_below():
    apple = obj("Apple_1", [1.3, 0, 0.84], shape="sphere")
    s = scene(TABLE, apple)
    assert oracle_relation(s, "Apple_1", "on top of", "Table_1")
    assert not oracle_relation(s, "Apple_1", "above", "Table_1")
    lifted = scene(TABLE, dict(apple, center=[1.3, 0, 1.0]))
    assert not oracle_relation(lifted, "Apple_1", "on top of", "Table_1")
    assert oracle_relation(lifted, "Apple_1", "above", "Table_1")
    assert oracle_relation(lifted, "Table_1", "below", "Apple_1")
    # off the footprint: neither on top of nor above
    aside = scene(TABLE, dict(apple, center=[2.5, 0, 0.84]))
    assert not oracle_relation(aside, "Apple_1", "on top of", "Table_1")
    assert not oracle_relation(aside, "Apple_1", "above", "Table_1")


def test_left_and_right_are_seen_from_the_camera():
    left = obj("Apple_1", [1.3, 0.3, 0.84], shape="sphere")      # +y is the camera's left
    right = obj("Mug_1", [1.3, -0.3, 0.85], [0.08, 0.08, 0.1], shape="cylinder")
    s = scene(TABLE, left, right)
    assert oracle_relation(s, "Apple_1", "on the left of", "Mug_1")
    assert oracle_relation(s, "Mug_1", "on the right of", "Apple_1")
    assert not oracle_relation(s, "Apple_1", "on the right of", "Mug_1")
    # the robot turned round: left and right swap
    turned = scene(dict(TABLE, center=[-1.5, 0, 0.4]), dict(left, center=[-1.3, 0.3, 0.84]),
                   dict(right, center=[-1.3, -0.3, 0.85]), robot={"pose": [0, 0, 180]})
    assert oracle_relation(turned, "Apple_1", "on the right of", "Mug_1")


def test_near_is_a_box_gap_under_15_cm():
    a = obj("Apple_1", [1.3, 0.0, 0.84], shape="sphere")
    assert oracle_relation(scene(TABLE, a, obj("Mug_1", [1.3, 0.16, 0.84])), "Apple_1", "near", "Mug_1")
    assert not oracle_relation(scene(TABLE, a, obj("Mug_1", [1.3, 0.35, 0.84])), "Apple_1", "near", "Mug_1")


def test_blocking_by_occlusion_and_by_the_floor_path():
    mug = obj("Mug_1", [1.5, 0, 0.85], [0.08, 0.08, 0.1], shape="cylinder")
    cereal = obj("CerealBox_1", [1.3, 0, 0.95], [0.07, 0.25, 0.3])
    s = scene(TABLE, mug, cereal)
    g = OracleGeometry(s)
    assert g.hidden_fraction("CerealBox_1", "Mug_1") > 0.5
    assert g.answer("CerealBox_1", "blocking", "Mug_1").holds
    assert not g.answer("Mug_1", "blocking", "CerealBox_1").holds
    # the table carries the mug: not an obstacle on the way to it
    assert not g.answer("Table_1", "blocking", "Mug_1").holds
    # a chair on the floor between the robot and the table blocks the floor path
    chair = obj("Chair_1", [0.7, 0.1, 0.25], [0.4, 0.4, 0.5])
    s2 = scene(TABLE, mug, chair)
    assert oracle_relation(s2, "Chair_1", "blocking", "Mug_1")
    assert not oracle_relation(scene(TABLE, mug, dict(chair, center=[0.7, 1.2, 0.25])), "Chair_1", "blocking", "Mug_1")


def test_oracle_relations_lists_every_holding_triple_and_skips_the_held_object():
    apple = obj("Apple_1", [1.3, 0, 0.84], shape="sphere")
    knife = obj("Knife_1", [1.3, 0.3, 0.81], [0.2, 0.03, 0.02])
    rels = oracle_relations(scene(TABLE, apple, knife))
    assert ("Apple_1", "on top of", "Table_1") in rels and ("Knife_1", "on top of", "Table_1") in rels
    assert all(r in {"inside", "on top of", "above", "below", "on the left of", "on the right of", "blocking", "near"}
               for _, r, _ in rels)
    held = scene(TABLE, apple, knife, robot={"pose": [0, 0, 0], "holding": "Knife_1"})
    assert not any("Knife_1" in (a, b) for a, _, b in oracle_relations(held))


def test_distance_is_to_the_nearest_visible_point():
    wall = obj("Cabinet_1", [1.2, 0, 0.9], [0.4, 0.6, 1.8])     # front face at x = 1.0
    s = scene(wall)
    d = oracle_distance(s, "Cabinet_1")
    assert d == pytest.approx(1.0, abs=0.01)      # (1.0, 0, 1.3) is on the face, straight ahead
    assert within_reach(s.with_robot(reach=1.05), "Cabinet_1")
    assert not within_reach(s.with_robot(reach=0.9), "Cabinet_1")
    # hidden behind the cabinet: the distance falls back to the true box
    hidden = scene(wall, obj("Box_1", [1.8, 0, 0.1], [0.1, 0.1, 0.1]))
    assert oracle_distance(hidden, "Box_1") == pytest.approx(math.dist((1.75, 0, 0.15), (0, 0, 1.3)), abs=1e-6)


def test_borderline_answers_are_flagged():
    a = obj("Apple_1", [1.3, 0.0, 0.84], shape="sphere")
    g = OracleGeometry(scene(TABLE, a, obj("Mug_1", [1.3, 0.22, 0.84])))   # gap 0.14: near, barely
    ans = g.answer("Apple_1", "near", "Mug_1")
    assert ans.holds and ans.borderline and ans.evidence["gap_m"] == pytest.approx(0.14)
    assert not g.answer("Apple_1", "on top of", "Table_1").borderline


def test_bad_names_are_clear_errors():
    s = scene(TABLE)
    with pytest.raises(ValueError, match="allowed: inside, on top of"):
        oracle_relation(s, "Table_1", "beside", "Table_1")
    with pytest.raises(ValueError, match="no object or person 'Mug_9'"):
        oracle_relation(s, "Mug_9", "near", "Table_1")
