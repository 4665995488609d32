"""The simulator's move_to a room (house scene): the base stops at the free floor point nearest
the room's middle, facing the way it travelled; names of things win over room names."""
from __future__ import annotations

import math

import pytest

from raider_ros.common.paths import scenes_dir
from raider_ros.sim.scene import load_scene, scene_to_dict
from raider_ros.sim.skills import ROOM_CLEARANCE_M, aabb, room_spot
from raider_ros.sim.world import SimWorld

HOUSE = load_scene(scenes_dir() / "house.scene.yaml")


@pytest.fixture
def world():
    return SimWorld(HOUSE)


@pytest.mark.parametrize("room", ["kitchen", "bedroom", "living_room", "Living Room", "bathroom"])
def test_move_to_a_room_ends_inside_it_clear_of_everything(world, room):
    r = world.execute("move_to", [room])
    assert r.success, r.message
    s = world.scene
    assert s.room_at(s.robot.x, s.robot.y) == s.room(room).name
    for e in s.entities:
        lo, hi = aabb(e)
        if lo[2] < 0.3:
            gap = math.hypot(max(lo[0] - s.robot.x, 0, s.robot.x - hi[0]), max(lo[1] - s.robot.y, 0, s.robot.y - hi[1]))
            assert gap >= ROOM_CLEARANCE_M - 1e-6, (e.id, gap)
    assert "moved to the " + s.room(room).name.replace("_", " ") in r.message


def test_room_moves_face_the_way_travelled_and_a_blocked_last_leg_fails(world):
    assert world.execute("move_to", ["living_room"]).success
    x0, y0 = world.scene.robot.x, world.scene.robot.y
    assert world.execute("move_to", ["bathroom"]).success
    s = world.scene
    assert s.robot.yaw_deg == pytest.approx(math.degrees(math.atan2(s.robot.y - y0, s.robot.x - x0)), abs=0.01)
    # within a room the straight-path rule holds: a chair put between the robot and the toilet blocks it
    world.apply_setup({"add": [{"id": "Chair_9", "type": "Chair", "shape": "box", "center": [11.1, 1.6, 0.45],
                                "size": [0.5, 0.5, 0.9], "properties": [], "state": {}}]}, reset=False)
    r = world.execute("move_to", ["Toilet_1"])
    assert not r.success and "blocked by Chair_9" in r.message


def test_the_spot_is_the_free_point_nearest_the_middle():
    living = HOUSE.room("living_room")
    x, y = room_spot(HOUSE, living)
    # the coffee table stands in the middle (6.5, 2.0): the spot is just clear of it
    assert abs(x - 6.5) <= 0.1 and 2.1 + ROOM_CLEARANCE_M - 1e-6 <= y <= 2.1 + ROOM_CLEARANCE_M + 0.1


def test_a_room_with_no_room_for_the_base_is_a_failure_naming_it(world):
    world.load({**scene_to_dict(HOUSE),
                "rooms": [{"name": "closet", "min": [0.0, 0.0], "max": [0.5, 0.5]},
                          {"name": "rest", "min": [0.5, 0.0], "max": [12.0, 8.0]}]})
    r = world.execute("move_to", ["closet"])
    assert not r.success and "no free spot for the base" in r.message and "closet" in r.message


def test_an_unknown_room_or_thing_is_still_named(world):
    r = world.execute("move_to", ["attic"])
    assert not r.success and "'attic'" in r.message


def test_a_thing_in_another_room_is_reached_through_that_room(world):
    r = world.execute("move_to", ["Toilet_1"])          # from the kitchen: through the bathroom's middle
    assert r.success and "through the bathroom" in r.message, r.message
    s = world.scene
    assert s.room_at(s.robot.x, s.robot.y) == "bathroom"
    r = world.execute("move_to", ["Sink_1"])            # same room: straight from where it stands
    assert r.success and "through" not in r.message
