"""Renderer: instance ids, depth against analytic geometry, open tops, doors, held objects,
people, colours, caching and the occlusion measure."""
from __future__ import annotations

import math

import numpy as np
import pytest

from raider_ros.sim.camera import CameraModel
from raider_ros.sim.render import (Renderer, default_color, drawn_entities, render,
                                    visible_pixel_counts)
from raider_ros.sim.scene import parse_scene


def scene(objects=(), people=(), robot=None, camera=None):
    doc = {"format": "raider-scene/1", "name": "t",
           "robot": robot or {"pose": [0.0, 0.0, 0.0], "reach": 1.1, "holding": None},
           "objects": [dict({"shape": "box", "properties": [], "state": {}}, **o) for o in objects],
           "people": list(people)}
    if camera:
        doc["camera"] = camera
    return parse_scene(doc, "test")


def box(oid, center, size, **kw):
    return dict({"id": oid, "type": oid.split("_")[0], "center": list(center), "size": list(size)}, **kw)


def pixel_of(cam: CameraModel, point) -> tuple[int, int]:
    u, v, z = cam.project(np.asarray(point, float))[0]
    assert z > 0
    return int(round(u)), int(round(v))


def analytic_depth(cam: CameraModel, u: int, v: int, axis: int, plane: float) -> float:
    """Depth (optical z) where pixel (u, v)'s ray meets the plane world[axis] = plane."""
    ray = cam.rays()[v, u]
    return float((plane - ray[axis]) / ray[3 + axis])


def test_frame_shapes_and_types():
    f = render(scene([box("Box_1", [1.5, 0, 0.5], [0.4, 0.4, 1.0])]), world_version=7)
    assert f.rgb.shape == (480, 640, 3) and f.rgb.dtype == np.uint8
    assert f.depth.shape == (480, 640) and f.depth.dtype == np.float32
    assert f.instance.shape == (480, 640) and f.instance.dtype == np.int32
    assert f.labels == {1: ("Box_1", "Box")} and f.world_version == 7
    assert f.camera.width == 640 and f.camera.height == 480


def test_instance_ids_where_objects_are_and_in_entity_order():
    s = scene([box("Box_1", [1.5, 0.5, 0.3], [0.3, 0.3, 0.6]), box("Box_2", [1.5, -0.5, 0.3], [0.3, 0.3, 0.6])],
              people=[{"id": "Person_1", "name": "Ana", "center": [3.0, 0.0, 0.85], "size": [0.45, 0.35, 1.7]}])
    f = render(s)
    assert f.labels == {1: ("Box_1", "Box"), 2: ("Box_2", "Box"), 3: ("Person_1", "Person")}
    for iid, oid in ((1, "Box_1"), (2, "Box_2"), (3, "Person_1")):
        u, v = pixel_of(f.camera, s.get(oid).center)
        assert f.instance[v, u] == iid
    counts = visible_pixel_counts(f)
    assert set(counts) == {"Box_1", "Box_2", "Person_1"}
    assert all(n > 500 for n in counts.values())
    assert counts["Box_1"] == int(np.count_nonzero(f.instance == 1))
    # Box_1 is on the left of the image (+y is left when looking along +x), Box_2 on the right
    assert pixel_of(f.camera, [1.5, 0.5, 0.3])[0] < 320 < pixel_of(f.camera, [1.5, -0.5, 0.3])[0]


def test_depth_equals_analytic_distance_to_box_faces():
    s = scene([box("Box_1", [1.6, 0.1, 0.4], [0.5, 0.6, 0.8])])
    f = render(s)
    cam = f.camera
    # front face x = 1.35 and top face z = 0.8, at several pixels each
    for point, axis, plane in (([1.35, 0.1, 0.4], 0, 1.35), ([1.35, 0.3, 0.6], 0, 1.35),
                               ([1.6, 0.1, 0.8], 2, 0.8), ([1.75, -0.1, 0.8], 2, 0.8)):
        u, v = pixel_of(cam, point)
        assert f.instance[v, u] == 1
        assert f.depth[v, u] == pytest.approx(analytic_depth(cam, u, v, axis, plane), abs=3e-3)
    # the back-projected pixels of the box all lie on its surface
    vv, uu = np.nonzero(f.instance == 1)
    pts = cam.backproject(uu, vv, f.depth[vv, uu])
    lo, hi = np.array([1.35, -0.2, 0.0]), np.array([1.85, 0.4, 0.8])
    assert np.all(pts > lo - 3e-3) and np.all(pts < hi + 3e-3)
    on_face = np.minimum(np.abs(pts - lo), np.abs(pts - hi)).min(axis=1)
    assert on_face.max() < 3e-3


def test_depth_with_yaw_and_floor_and_sky():
    s = scene([box("Box_1", [2.0, 0.0, 0.5], [0.4, 0.4, 1.0], yaw_deg=45)], camera={"pitch_deg": 10})
    f = render(s)
    cam = f.camera
    # the 45-degree box shows its edge at x = 2 - 0.2*sqrt(2) toward the camera
    u, v = pixel_of(cam, [2.0 - 0.2 * math.sqrt(2), 0.0, 0.5])
    assert f.instance[v, u] == 1
    assert f.depth[v, u] == pytest.approx(analytic_depth(cam, u, v, 0, 2.0 - 0.2 * math.sqrt(2)), abs=5e-3)
    # floor: instance 0, depth to the plane z = 0
    u, v = pixel_of(cam, [4.0, 1.5, 0.0])
    assert f.instance[v, u] == 0
    assert f.depth[v, u] == pytest.approx(analytic_depth(cam, u, v, 2, 0.0), abs=2e-3)
    # sky (top row with a 10 degree tilt looks above the horizon): no depth, instance 0, sky colour
    assert np.isnan(f.depth[0]).all() and (f.instance[0] == 0).all()
    assert f.rgb[0, 0, 2] > f.rgb[0, 0, 0]       # bluish


def test_cylinder_and_sphere_depth():
    s = scene([box("Can_1", [1.3, 0.3, 0.2], [0.2, 0.2, 0.4], shape="cylinder"),
               box("Ball_1", [1.3, -0.3, 0.15], [0.3, 0.3, 0.3], shape="sphere")])
    f = render(s)
    cam = f.camera
    u, v = pixel_of(cam, [1.3, 0.3, 0.4])                 # centre of the cylinder's top cap
    assert f.instance[v, u] == 1
    assert f.depth[v, u] == pytest.approx(analytic_depth(cam, u, v, 2, 0.4), abs=3e-3)
    # sphere: the hit point lies on the sphere (tessellation error well under 1 cm)
    vv, uu = np.nonzero(f.instance == 2)
    pts = cam.backproject(uu, vv, f.depth[vv, uu])
    r = np.linalg.norm(pts - np.array([1.3, -0.3, 0.15]), axis=1)
    assert np.all(np.abs(r - 0.15) < 6e-3)


def test_open_top_container_shows_its_inside():
    common = dict(center=[1.2, 0.0, 0.15], size=[0.3, 0.3, 0.2])     # z 0.05..0.25
    closed = render(scene([box("Pot_1", **common)]))
    opened = render(scene([box("Pot_1", open_top=True, **common)]))
    cam = opened.camera
    u, v = pixel_of(cam, [1.3, 0.0, 0.05])                  # the inner bottom, seen over the near rim
    assert closed.instance[v, u] == 1 and opened.instance[v, u] == 1
    assert closed.depth[v, u] == pytest.approx(analytic_depth(cam, u, v, 2, 0.25), abs=3e-3)
    assert opened.depth[v, u] == pytest.approx(analytic_depth(cam, u, v, 2, 0.05), abs=3e-3)
    # the open cylinder too: its inner far wall is deeper than the closed top
    cyl = dict(common, shape="cylinder")
    c1, c2 = render(scene([box("Pot_1", **cyl)])), render(scene([box("Pot_1", open_top=True, **cyl)]))
    assert c2.instance[v, u] == 1 and c2.depth[v, u] > c1.depth[v, u] + 0.02


def fridge(open_: bool):
    return scene([box("Fridge_1", [1.6, 0.0, 0.5], [0.6, 0.6, 1.0], door="-x", properties=["openable"],
                      state={"open": open_}),
                  box("Milk_1", [1.6, 0.0, 0.6], [0.1, 0.1, 0.2])])


def test_door_face_drawn_only_while_closed():
    closed, opened = render(fridge(False)), render(fridge(True))
    cam = closed.camera
    u, v = pixel_of(cam, [1.3, 0.0, 0.4])                   # the door face, below the milk
    assert closed.instance[v, u] == 1
    assert closed.depth[v, u] == pytest.approx(analytic_depth(cam, u, v, 0, 1.3), abs=3e-3)
    assert visible_pixel_counts(closed)["Milk_1"] == 0
    # open: the milk inside shows, and the ray through the door opening goes deeper
    assert visible_pixel_counts(opened)["Milk_1"] > 100
    assert opened.depth[v, u] > closed.depth[v, u] + 0.1
    um, vm = pixel_of(cam, [1.55, 0.0, 0.6])
    assert opened.instance[vm, um] == 2


def test_held_object_not_drawn_and_ids_stay_consecutive():
    objs = [box("Box_1", [1.5, 0.4, 0.3], [0.3, 0.3, 0.6]), box("Cup_1", [1.5, 0.0, 0.1], [0.1, 0.1, 0.2]),
            box("Box_2", [1.5, -0.4, 0.3], [0.3, 0.3, 0.6])]
    s = scene(objs, robot={"pose": [0, 0, 0], "holding": "Cup_1"})
    f = render(s)
    assert f.labels == {1: ("Box_1", "Box"), 2: ("Box_2", "Box")}
    assert [e.id for e in drawn_entities(s)] == ["Box_1", "Box_2"]
    u, v = pixel_of(f.camera, [1.5, 0.0, 0.1])
    assert f.instance[v, u] == 0                           # floor where the cup would be
    free = render(scene(objs))
    assert free.labels[2] == ("Cup_1", "Cup") and free.instance[v, u] == 2


def test_people_are_drawn_as_boxes():
    s = scene(people=[{"id": "Person_1", "name": None, "center": [2.0, 0.0, 0.85], "size": [0.45, 0.35, 1.7]}])
    f = render(s)
    assert f.labels == {1: ("Person_1", "Person")}
    u, v = pixel_of(f.camera, [1.775, 0.0, 0.8])
    assert f.instance[v, u] == 1
    assert f.depth[v, u] == pytest.approx(analytic_depth(f.camera, u, v, 0, 1.775), abs=3e-3)


def test_colours_follow_the_scene_and_shading_keeps_them():
    s = scene([box("Box_1", [1.5, 0.3, 0.3], [0.3, 0.3, 0.6], color=[0.9, 0.1, 0.1]),
               box("Box_2", [1.5, -0.3, 0.3], [0.3, 0.3, 0.6])])
    f = render(s)
    red = f.rgb[f.instance == 1].astype(int)
    assert (red[:, 0] > 2 * red[:, 1]).all() and (red[:, 0] > 2 * red[:, 2]).all()
    # the default colour of a type is stable across calls and differs between types
    assert default_color("Mug") == default_color("Mug") != default_color("Bowl")
    floor = f.rgb[(f.instance == 0) & np.isfinite(f.depth)].astype(int)
    assert (np.abs(floor[:, 0] - floor[:, 1]) < 12).all()  # neutral grey


def test_renderer_cache_gives_identical_frames_and_sees_changes():
    r = Renderer()
    s = scene([box("Box_1", [1.5, 0.0, 0.3], [0.3, 0.3, 0.6])])
    a, b = r.render(s), r.render(s)
    assert np.array_equal(a.rgb, b.rgb) and np.array_equal(a.instance, b.instance)
    assert np.array_equal(a.depth, b.depth, equal_nan=True)
    moved = s.with_object(s.objects[0].__class__(**{**s.objects[0].__dict__, "center": (1.5, 0.5, 0.3)}))
    c = r.render(moved)
    assert not np.array_equal(a.instance, c.instance)
    assert np.array_equal(r.render(s).instance, a.instance)   # and back
    turned = s.with_robot(yaw_deg=90.0)
    assert visible_pixel_counts(r.render(turned))["Box_1"] == 0


def test_empty_scene_renders_floor_and_sky():
    f = render(scene())
    assert f.labels == {} and (f.instance == 0).all()
    assert np.isfinite(f.depth).any() and visible_pixel_counts(f) == {}


def test_occluders_measure_hidden_fraction():
    r = Renderer()
    target = box("Mug_1", [1.5, 0.0, 0.1], [0.1, 0.1, 0.2])
    wall = box("Wall_1", [1.0, 0.0, 0.5], [0.05, 0.6, 1.0])           # hides the mug completely
    side = box("Box_1", [1.0, 0.6, 0.2], [0.2, 0.2, 0.4])             # off to the side
    total, occ = r.occluders(scene([target, wall, side]), "Mug_1")
    assert total > 100
    assert occ["Wall_1"][1] == pytest.approx(1.0) and "Box_1" not in occ
    # half covered: a low box in front hides the lower part of the mug
    low = box("Low_1", [1.4, 0.0, 0.075], [0.04, 0.5, 0.15])
    total, occ = r.occluders(scene([target, low]), "Mug_1")
    assert 0.2 < occ["Low_1"][1] < 0.9
    # a pixel hidden by two entities counts for neither
    _t, occ = r.occluders(scene([target, wall, box("Wall_2", [0.8, 0.0, 0.5], [0.05, 0.6, 1.0])]), "Mug_1")
    assert occ == {}
    assert r.occluders(scene([wall]), "Nothing_1") == (0, {})
