"""The simulated base laser (sim/scan.py): beam geometry, ranges against known boxes, no return,
objects above the scan plane, the robot's pose and yaw, the held object, SimWorld's cache."""
from __future__ import annotations

import math

import numpy as np
import pytest

from raider_ros.sim.render import Renderer
from raider_ros.sim.scan import LaserModel, cast_scan
from raider_ros.sim.scene import parse_scene
from raider_ros.sim.world import SimWorld


def scene(objects=(), people=(), pose=(0.0, 0.0, 0.0), holding=None):
    return parse_scene({"format": "raider-scene/1", "name": "t",
                        "robot": {"pose": list(pose), "reach": 1.1, "holding": holding},
                        "objects": [dict({"shape": "box", "properties": [], "state": {}}, **o) for o in objects],
                        "people": list(people)}, "test")


def box(oid, center, size, **kw):
    return dict({"id": oid, "type": oid.split("_")[0], "center": list(center), "size": list(size)}, **kw)


def beam(model: LaserModel, angle_deg: float) -> int:
    """Index of the beam pointing ``angle_deg`` from the base yaw."""
    return int(round((math.radians(angle_deg) - model.angle_min) / model.angle_increment))


def test_beam_geometry_defaults():
    m = LaserModel()
    assert m.height_m == pytest.approx(0.15) and m.range_min_m == pytest.approx(0.05) and m.range_max_m == 10.0
    assert m.beams == 541                                   # 270 deg / 0.5 deg + 1
    a = m.angles()
    assert a[0] == pytest.approx(-math.radians(135)) and a[-1] == pytest.approx(math.radians(135))
    assert a[beam(m, 0.0)] == pytest.approx(0.0)


def test_box_ahead_gives_its_distance_on_the_straight_beam():
    s = scene([box("Stool_1", [0.5, 0.0, 0.2], [0.2, 0.2, 0.4])])      # near face at x = 0.4
    scan = cast_scan(s, renderer=Renderer())
    m = scan.model
    assert scan.ranges.shape == (m.beams,) and scan.ranges.dtype == np.float32
    assert scan.ranges[beam(m, 0.0)] == pytest.approx(0.4, abs=1e-4)
    # off-axis beam on the same face: 0.4 / cos(angle)
    assert scan.ranges[beam(m, 10.0)] == pytest.approx(0.4 / math.cos(math.radians(10.0)), abs=1e-4)
    # beams past the box's edge (atan(0.1 / 0.4) = 14 deg) see nothing
    assert np.isinf(scan.ranges[beam(m, 20.0)]) and np.isinf(scan.ranges[beam(m, -20.0)])
    assert scan.pose == (0.0, 0.0, 0.0)


def test_box_to_the_left_and_the_robots_yaw():
    s = scene([box("Bucket_1", [0.0, 0.8, 0.15], [0.3, 0.3, 0.3])], pose=(0.0, 0.0, 0.0))
    m = LaserModel()
    assert cast_scan(s).ranges[beam(m, 90.0)] == pytest.approx(0.65, abs=1e-4)
    # turned to face +y, the box is straight ahead; moved back by 1 m, 1 m further
    turned = scene([box("Bucket_1", [0.0, 0.8, 0.15], [0.3, 0.3, 0.3])], pose=(0.0, -1.0, 90.0))
    r = cast_scan(turned).ranges
    assert r[beam(m, 0.0)] == pytest.approx(1.65, abs=1e-4)
    assert np.isinf(r[beam(m, 90.0)])


def test_nothing_in_range_reads_inf():
    r = cast_scan(scene()).ranges
    assert np.all(np.isinf(r))
    far = cast_scan(scene([box("Wall_1", [12.0, 0.0, 1.0], [0.2, 30.0, 2.0])])).ranges
    assert np.all(np.isinf(far))                             # beyond range_max_m
    assert cast_scan(scene([box("Wall_1", [12.0, 0.0, 1.0], [0.2, 30.0, 2.0])]),
                     LaserModel(range_max_m=20.0)).ranges[beam(LaserModel(), 0.0)] == pytest.approx(11.9, abs=1e-3)


def test_objects_above_the_scan_plane_are_not_seen():
    table_top = box("TableTop_1", [0.6, 0.0, 0.72], [0.6, 0.8, 0.04])    # 0.70 .. 0.74
    shelf = box("Shelf_1", [0.6, 0.0, 0.25], [0.4, 0.4, 0.1])             # 0.20 .. 0.30, above 0.15
    r = cast_scan(scene([table_top, shelf])).ranges
    assert np.all(np.isinf(r))
    # the same shelf with a low scanner
    low = cast_scan(scene([shelf]), LaserModel(height_m=0.25)).ranges
    assert low[beam(LaserModel(), 0.0)] == pytest.approx(0.4, abs=1e-4)


def test_behind_the_robot_is_outside_the_field_of_view():
    r = cast_scan(scene([box("Box_1", [-0.6, 0.0, 0.2], [0.2, 0.2, 0.4])])).ranges
    assert np.all(np.isinf(r))                               # 270 deg: the back 90 deg are blind
    full = cast_scan(scene([box("Box_1", [-0.6, 0.0, 0.2], [0.2, 0.2, 0.4])]), LaserModel(fov_deg=360.0))
    assert np.isfinite(full.ranges).any() and full.model.beams == 720


def test_people_are_seen_and_the_held_object_is_not():
    person = {"id": "Person_1", "name": "Ana", "center": [1.0, 0.0, 0.85], "size": [0.4, 0.3, 1.7]}
    r = cast_scan(scene(people=[person])).ranges
    assert r[beam(LaserModel(), 0.0)] == pytest.approx(0.8, abs=1e-4)          # near face: 1.0 - 0.2
    held = scene([box("Box_1", [0.5, 0.0, 0.2], [0.2, 0.2, 0.4], properties=["pickupable"])], holding="Box_1")
    assert np.all(np.isinf(cast_scan(held).ranges))


def test_bad_models_are_refused():
    for bad in ({"height_m": 0.0}, {"fov_deg": 400.0}, {"range_min_m": 5.0, "range_max_m": 1.0},
                {"resolution_deg": float("nan")}):
        with pytest.raises(ValueError):
            LaserModel(**bad)


def test_world_scan_follows_the_world_version():
    w = SimWorld(scene([box("Stool_1", [0.5, 0.0, 0.2], [0.2, 0.2, 0.4], properties=["pickupable"])]))
    frame, scan = w.sensors()
    assert scan.world_version == frame.world_version == w.version
    assert w.scan() is scan                                  # cached while the world is unchanged
    assert scan.ranges[beam(w.laser, 0.0)] == pytest.approx(0.4, abs=1e-4)
    w.apply_setup({"objects": {"Stool_1": {"center": [0.8, 0.0, 0.2]}}})
    moved = w.scan()
    assert moved.world_version == w.version and moved.ranges[beam(w.laser, 0.0)] == pytest.approx(0.7, abs=1e-4)
