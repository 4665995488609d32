"""Rooms in the scene model (project extension) and the house scene built on them."""
from __future__ import annotations

import numpy as np
import pytest

from raider_ros.common.paths import scenes_dir
from raider_ros.sim.scene import (
    Room, SceneError, apply_setup, load_scene, load_scene_text, parse_scene, room_key, scene_to_dict,
)
from raider_ros.sim import skills

BASE = """
format: raider-scene/1
name: two_rooms
robot: {pose: [1.0, 1.0, 0.0]}
objects:
  - {id: Table_1, type: Table, shape: box, center: [3.0, 1.0, 0.4], size: [1.0, 1.0, 0.8]}
"""


def _scene(rooms_yaml: str):
    return load_scene_text(BASE + rooms_yaml, "two.scene.yaml")


def test_rooms_are_optional_and_absent_from_plain_documents():
    s = _scene("")
    assert s.rooms == ()
    assert "rooms" not in scene_to_dict(s)
    assert s.room_at(1.0, 1.0) is None


def test_room_of_a_point_and_lookup_by_name():
    s = _scene("rooms:\n  - {name: bedroom, min: [0, 0], max: [2, 2]}\n"
               "  - {name: Living Room, min: [2, 0], max: [5, 2]}\n")
    assert s.room_at(1.0, 1.0) == "bedroom"
    assert s.room_at(3.0, 1.5) == "Living Room"
    assert s.room_at(2.0, 1.0) == "bedroom"          # a shared wall goes to the earlier room
    assert s.room_at(6.0, 1.0) is None
    assert s.room("living_room") is s.room("LIVINGROOM") is s.rooms[1]
    assert room_key("Living Room") == room_key("living_room") == "livingroom"
    assert isinstance(s.rooms[0], Room) and s.rooms[0].min == (0.0, 0.0)


def test_rooms_round_trip_through_scene_to_dict_and_setups():
    s = _scene("rooms:\n  - {name: bedroom, min: [0, 0], max: [2, 2]}\n")
    again = parse_scene(scene_to_dict(s), "again")
    assert again.rooms == s.rooms
    moved = apply_setup(s, {"robot": {"pose": [0.5, 0.5, 0]}})
    assert moved.rooms == s.rooms
    assert "rooms" not in moved.extra


@pytest.mark.parametrize("rooms, field, words", [
    ("rooms: {name: a}", "rooms", "expected a list"),
    ("rooms:\n  - {min: [0, 0], max: [1, 1]}", "rooms[0].name", "non-empty string"),
    ("rooms:\n  - {name: a, min: [0, 0]}", "rooms[0] (a).max", "2 numbers"),
    ("rooms:\n  - {name: a, min: [0, 0, 0], max: [1, 1]}", "rooms[0] (a).min", "2 numbers"),
    ("rooms:\n  - {name: a, min: [0, x], max: [1, 1]}", "rooms[0] (a).min[1]", "expected a number"),
    ("rooms:\n  - {name: a, min: [2, 0], max: [1, 1]}", "rooms[0] (a).max", "max > min"),
    ("rooms:\n  - {name: a, min: [0, 0], max: [1, 1], door: 3}", "rooms[0].door", "unknown room key"),
    ("rooms:\n  - {name: a, min: [0, 0], max: [2, 2]}\n  - {name: b, min: [1, 1], max: [3, 3]}",
     "rooms[1] (b)", "overlaps room 'a'"),
    ("rooms:\n  - {name: a, min: [0, 0], max: [1, 1]}\n  - {name: A, min: [1, 0], max: [2, 1]}",
     "rooms[1] (A).name", "used twice"),
    ("rooms:\n  - {name: table_1, min: [0, 0], max: [1, 1]}", "rooms[0] (table_1).name", "id of an object"),
])
def test_bad_rooms_are_errors_naming_the_field(rooms, field, words):
    with pytest.raises(SceneError) as err:
        _scene(rooms)
    msg = str(err.value)
    assert msg.startswith(f"two.scene.yaml: {field}:"), msg
    assert words in msg


# --------------------------------------------------------------------------- the house scene
HOUSE = load_scene(scenes_dir() / "house.scene.yaml")


def test_house_has_the_papers_rooms_and_objects_in_them():
    assert [r.name for r in HOUSE.rooms] == ["kitchen", "bedroom", "living_room", "bathroom"]
    assert HOUSE.room_at(HOUSE.robot.x, HOUSE.robot.y) == "kitchen"
    where = {o.id: HOUSE.room_at(o.center[0], o.center[1]) for o in HOUSE.objects}
    assert where["Toilet_1"] == "bathroom" and where["Bed_1"] == "bedroom"
    assert where["Sofa_1"] == "living_room" and where["Knife_1"] == "kitchen"
    assert all(where.values()), [k for k, v in where.items() if v is None]
    assert HOUSE.room_at(*HOUSE.person("Person_1").center[:2]) == "living_room"


def test_house_objects_rest_on_supports():
    for o in HOUSE.objects:
        direct = [s for s in HOUSE.objects if skills.on_top_of(o, s) or skills.inside(o, s)]
        assert skills.stands_on_floor(o) or direct, f"{o.id} floats"
    for p in HOUSE.people:
        assert skills.stands_on_floor(p)


def test_house_solids_do_not_interpenetrate():
    ents = list(HOUSE.entities)
    clashes = []
    for i, a in enumerate(ents):
        for b in ents[i + 1:]:
            (alo, ahi), (blo, bhi) = skills.aabb(a), skills.aabb(b)
            overlap = np.clip(np.minimum(ahi, bhi) - np.maximum(alo, blo), 0, None)
            if float(np.prod(overlap)) <= 2e-5:
                continue
            if skills.inside(a, b) or skills.inside(b, a):
                continue
            clashes.append(f"{a.id}/{b.id}")
    assert not clashes
