"""House-scale worlds: generated houses, cases embedded in houses, house files."""
import json

import pytest

from raider_ros.sim.house import (embed_case, dump_house, generate_house, load_house, load_house_types,
                                  memory_entries, parse_house_types)
from raider_ros.sim.plausibility import check_plausibility
from raider_ros.sim.scene import SceneError, load_scene
from raider_ros.common.paths import data_dir

KITCHEN = data_dir() / "scenes" / "kitchen.scene.yaml"


@pytest.mark.parametrize("n", [1, 57, 1500])
def test_generated_houses_have_n_objects_rooms_and_are_plausible(n):
    h = generate_house(n, seed=3)
    assert h.size == n and len({o.id for o in h.scene.objects}) == n
    assert h.scene.rooms and h.view_room == h.scene.rooms[0].name
    assert check_plausibility(h.scene) == []
    assert all(h.scene.room_at(o.center[0], o.center[1]) for o in h.scene.objects)
    assert {o.id for o in h.view().objects} <= {o.id for o in h.scene.objects}


def test_houses_are_deterministic_and_varied():
    a, b, c = generate_house(400, seed=1), generate_house(400, seed=1), generate_house(400, seed=2)
    assert a.scene.objects == b.scene.objects and a.scene.objects != c.scene.objects
    types = {o.type for o in a.scene.objects}
    assert len(types) > 40 and {"Mug", "Fridge", "Book"} <= types
    states = {k for o in a.scene.objects for k in o.state}
    assert {"open", "clean", "switched_on"} <= states


def test_embedding_keeps_the_case_as_one_room_and_remembers_the_rest():
    case = load_scene(KITCHEN)
    h = embed_case(case, 1000)
    assert h.size == 1000 and h.view() is case
    assert h.scene.objects[: len(case.objects)] == case.objects       # coordinates, ids and order kept
    assert h.view_room == case.name
    room = h.scene.room(case.name)
    assert all(room.contains(o.center[0], o.center[1]) for o in case.objects)
    others = h.scene.objects[len(case.objects):]
    assert not any(room.contains(o.center[0], o.center[1]) for o in others)
    assert check_plausibility(h.scene) == []
    mem = memory_entries(h)
    assert len(mem) == 1000 - len(case.objects) and {m["id"] for m in mem} == {o.id for o in others}
    assert all(20 <= m["seen_s_ago"] <= 3600 and m["room"] and m["room"] != case.name for m in mem)
    supported = [m for m in mem if m["last_relation"]]
    assert len(supported) > len(mem) // 3
    assert all(m["last_relation"][0] in ("on top of", "inside") for m in supported)
    assert embed_case(case, 3).size == len(case.objects)               # nothing to add


def test_house_files_round_trip_and_load_as_scenes(tmp_path):
    h = generate_house(300, seed=5)
    path = tmp_path / "h.scene.yaml"
    dump_house(h, path)
    back = load_house(path)
    assert back.scene.objects == h.scene.objects and back.scene.rooms == h.scene.rooms
    assert back.view_room == h.view_room and back.seed == 5
    assert len(load_scene(path).objects) == 300          # a house file is a scene file


def test_malformed_house_files_name_the_error(tmp_path):
    doc = json.loads(dump_house(generate_house(30, seed=1)))
    doc["objects"][3]["size"] = [0.1, -1, 0.1]
    bad = tmp_path / "bad.scene.yaml"
    bad.write_text(json.dumps(doc))
    with pytest.raises(SceneError, match=r"bad.scene.yaml: objects\[3\] \(\w+\).size"):
        load_house(bad)
    doc = json.loads(dump_house(generate_house(30, seed=1)))
    doc["house"]["view_room"] = "attic"
    bad.write_text(json.dumps(doc))
    with pytest.raises(SceneError, match="house.view_room: 'attic' is not a room"):
        load_house(bad)
    bad.write_text("objects: [\n")
    with pytest.raises(SceneError, match="bad.scene.yaml.*not valid YAML"):
        load_house(bad)
    with pytest.raises(SceneError, match="no such house file"):
        load_house(tmp_path / "missing.yaml")


def test_type_data_errors_name_the_field():
    good = load_house_types()
    assert "kitchen" in good.rooms and "Fridge" in good.furniture and "Mug" in good.clutter
    with pytest.raises(SceneError, match=r"t.yaml: clutter.Mug.states.open: state open needs the property openable"):
        parse_house_types({"format": "raider-house-types/1", "rooms": {"k": {"size": [[3, 4], [3, 4]]}},
                           "clutter": {"Mug": {"size": [0.1, 0.1, 0.1], "states": {"open": [True]}}}}, "t.yaml")
    with pytest.raises(SceneError, match=r"rooms.k.furniture\[0\]: unknown furniture type 'Sofa'"):
        parse_house_types({"format": "raider-house-types/1", "rooms": {"k": {"size": [[3, 4], [3, 4]],
                                                                             "furniture": ["Sofa"]}}}, "t.yaml")
