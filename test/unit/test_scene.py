"""Scene files: loading good files, every kind of bad input (errors name the file and the
field), setup blocks, and the facts the project's scenes are built for."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from raider_ros.common.paths import scenes_dir
from raider_ros.sim.render import visible_pixel_counts
from raider_ros.sim.scene import (SceneError, apply_setup, dump_scene, load_scene, load_scene_dir,
                                   load_scene_text, scene_to_dict)
from raider_ros.sim.skills import distance_from_camera, inside, on_top_of, path_blockers
from raider_ros.sim.world import SimWorld
from support.shared import KITCHEN_EXAMPLE, requires_shared

MINI_SCENE = Path(__file__).resolve().parents[1] / "data" / "mini_benchmark" / "mini_kitchen.scene.yaml"
PROJECT_SCENES = sorted(scenes_dir().glob("*.scene.yaml"))
SHARED_EXAMPLE = pytest.param(KITCHEN_EXAMPLE, marks=requires_shared, id="shared:" + KITCHEN_EXAMPLE.name)

GOOD = """\
format: raider-scene/1
name: tiny
robot: {pose: [0.0, 0.0, 0.0], reach: 1.1, holding: null}
objects:
  - id: Table_1
    type: Table
    shape: box
    center: [1.0, 0.0, 0.375]
    size: [0.8, 0.8, 0.75]
    properties: [receptacle]
  - id: Mug_1
    type: Mug
    shape: cylinder
    center: [0.8, 0.1, 0.8]
    size: [0.09, 0.09, 0.1]
    open_top: true
    properties: [pickupable, dirtyable]
    state: {clean: true}
people:
  - id: Person_1
    name: null
    center: [2.0, -0.5, 0.85]
    state: {looking_at_robot: false, hands_free: true}
"""


def write(tmp_path: Path, text: str, name: str = "bad.scene.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def doc() -> dict:
    return yaml.safe_load(GOOD)


# --------------------------------------------------------------------------- good files
@pytest.mark.parametrize("path", [SHARED_EXAMPLE, *PROJECT_SCENES, MINI_SCENE], ids=lambda p: p.name)
def test_good_files_load_render_and_round_trip(path):
    s = load_scene(path)
    assert s.source == str(path) and s.objects
    assert load_scene_text(dump_scene(s), "dumped").entities == s.entities
    w = SimWorld(s)
    counts = visible_pixel_counts(w.frame())
    assert sum(1 for n in counts.values() if n > 0) >= len(s.entities) // 2


def test_project_scenes_are_there_and_named_uniquely():
    names = {p.name for p in PROJECT_SCENES}
    assert {"kitchen.scene.yaml", "assistive_room.scene.yaml", "kitchen_task.scene.yaml"} <= names
    assert set(load_scene_dir(scenes_dir())) >= {"kitchen", "assistive_room", "kitchen_task"}


def test_defaults_of_a_minimal_file(tmp_path):
    s = load_scene(write(tmp_path, GOOD, "tiny.scene.yaml"))
    assert s.camera.height == 1.3 and s.camera.pitch_deg == 30 and s.camera.width == 640
    assert s.people[0].size == (0.45, 0.35, 1.7) and s.people[0].name is None
    assert s.object("Table_1").state == {} and s.object("Mug_1").has("pickupable")
    assert [e.id for e in s.entities] == ["Table_1", "Mug_1", "Person_1"]


# --------------------------------------------------------------------------- bad files
def mutate(fn) -> str:
    d = doc()
    fn(d)
    return yaml.safe_dump(d, sort_keys=False)


BAD = {
    "not_yaml": ("format: raider-scene/1\nobjects: [1, 2\n", "not valid YAML"),
    "not_a_mapping": ("- just\n- a list\n", "expected a mapping"),
    "wrong_format": (mutate(lambda d: d.update(format="raider-scene/2")), "format: expected 'raider-scene/1'"),
    "no_format": (mutate(lambda d: d.pop("format")), "format"),
    "no_name": (mutate(lambda d: d.pop("name")), "name: expected a non-empty string"),
    "no_robot": (mutate(lambda d: d.pop("robot")), "robot: missing"),
    "no_id": (mutate(lambda d: d["objects"][0].pop("id")), "objects[0].id"),
    "no_center": (mutate(lambda d: d["objects"][1].pop("center")), "objects[1] (Mug_1).center"),
    "no_type": (mutate(lambda d: d["objects"][1].pop("type")), "objects[1] (Mug_1).type"),
    "negative_size": (mutate(lambda d: d["objects"][1].update(size=[0.09, -0.09, 0.1])),
                      "objects[1] (Mug_1).size[1]: expected a positive number"),
    "zero_size": (mutate(lambda d: d["objects"][0].update(size=[0.8, 0.8, 0])), "(Table_1).size[2]"),
    "short_size": (mutate(lambda d: d["objects"][0].update(size=[0.8, 0.8])), "(Table_1).size"),
    "nan_center": (GOOD.replace("center: [0.8, 0.1, 0.8]", "center: [.nan, 0.1, 0.8]"),
                   "(Mug_1).center[0]: expected a finite number"),
    "inf_reach": (GOOD.replace("reach: 1.1", "reach: .inf"), "robot.reach: expected a finite number"),
    "text_center": (mutate(lambda d: d["objects"][0].update(center=["a", 0, 0])), "(Table_1).center[0]"),
    "unknown_property": (mutate(lambda d: d["objects"][1]["properties"].append("edible")),
                         "(Mug_1).properties[2]: unknown property 'edible'"),
    "unknown_shape": (mutate(lambda d: d["objects"][1].update(shape="cone")), "(Mug_1).shape"),
    "bad_door": (mutate(lambda d: d["objects"][0].update(door="+z")), "(Table_1).door"),
    "door_on_cylinder": (mutate(lambda d: d["objects"][1].update(door="+x")), "only box objects can have a door"),
    "state_not_bool": (mutate(lambda d: d["objects"][1].update(state={"clean": "yes"})),
                       "(Mug_1).state.clean: expected true or false"),
    "color_range": (mutate(lambda d: d["objects"][1].update(color=[1.5, 0, 0])), "(Mug_1).color"),
    "duplicate_id": (mutate(lambda d: d["objects"].append(copy.deepcopy(d["objects"][1]))),
                     "'Mug_1' is used twice"),
    "person_same_id": (mutate(lambda d: d["people"][0].update(id="Table_1")), "'Table_1' is used twice"),
    "holding_unknown": (mutate(lambda d: d["robot"].update(holding="Ghost_1")),
                        "robot.holding: no object with id 'Ghost_1'"),
    "holding_person": (mutate(lambda d: d["robot"].update(holding="Person_1")),
                       "robot.holding: 'Person_1' is a person"),
    "bad_pose": (mutate(lambda d: d["robot"].update(pose=[0, 0])), "robot.pose"),
    "objects_not_list": (mutate(lambda d: d.update(objects={"a": 1})), "objects: expected a list"),
    "camera_fov": (mutate(lambda d: d.update(camera={"hfov_deg": 200})), "camera.hfov_deg"),
    "person_bad_state": (mutate(lambda d: d["people"][0].update(state={"hands_free": 1})),
                         "people[0] (Person_1).state.hands_free"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_files_name_the_file_and_field(tmp_path, case):
    text, expected = BAD[case]
    path = write(tmp_path, text, f"{case}.scene.yaml")
    with pytest.raises(SceneError) as err:
        load_scene(path)
    msg = str(err.value)
    assert msg.startswith(str(path)), msg
    assert expected in msg, msg


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(SceneError, match="no such scene file"):
        load_scene(tmp_path / "nope.scene.yaml")
    p = tmp_path / "binary.scene.yaml"
    p.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(SceneError, match="binary.scene.yaml"):
        load_scene(p)


def test_duplicate_scene_names_in_a_directory(tmp_path):
    write(tmp_path, GOOD, "a.scene.yaml")
    write(tmp_path, GOOD, "b.scene.yaml")
    with pytest.raises(SceneError, match="name 'tiny' is also used"):
        load_scene_dir(tmp_path)


# --------------------------------------------------------------------------- setup blocks
def test_apply_setup_edits_robot_objects_people_and_removes():
    s = load_scene_text(GOOD, "tiny")
    before = scene_to_dict(s)
    new = apply_setup(s, {
        "robot": {"pose": [0.5, 0.2, 90], "holding": "Mug_1"},
        "objects": {"Mug_1": {"center": [1.0, 0.0, 0.8], "state": {"clean": False}}},
        "people": {"Person_1": {"name": "Adriana", "state": {"looking_at_robot": True}}},
    })
    assert new.robot.pose == (0.5, 0.2, 90.0) and new.robot.holding == "Mug_1"
    mug = new.object("Mug_1")
    assert mug.center == (1.0, 0.0, 0.8) and mug.state == {"clean": False} and mug.open_top
    p = new.person("Person_1")
    assert p.name == "Adriana" and p.state == {"looking_at_robot": True, "hands_free": True}
    assert scene_to_dict(s) == before                        # the input is unchanged
    gone = apply_setup(s, {"remove": ["Mug_1", "Person_1"]})
    assert gone.object_ids == ["Table_1"] and gone.people == ()
    assert apply_setup(s, None) is s


@pytest.mark.parametrize("setup, expected", [
    ({"objects": {"Pear_1": {"center": [0, 0, 0]}}}, "objects.Pear_1: no object with id 'Pear_1'"),
    ({"people": {"Bob_1": {"name": "Bob"}}}, "people.Bob_1"),
    ({"remove": ["Pear_1"]}, "remove[0]: no object or person with id 'Pear_1'"),
    ({"remove": "Mug_1"}, "remove: expected a list"),
    ({"robot": {"speed": 2}}, "robot.speed: unknown robot key"),
    ({"robot": {"holding": "Ghost_1"}}, "robot.holding"),
    ({"objects": {"Mug_1": {"size": [0.1, -1, 0.1]}}}, "(Mug_1).size[1]"),
    ({"objects": {"Mug_1": {"id": "Cup_1"}}}, "ids cannot be changed"),
    ({"teleport": True}, "teleport: unknown setup key"),
    ("not a mapping", "expected a mapping"),
])
def test_bad_setups_raise_and_leave_the_scene(setup, expected):
    s = load_scene_text(GOOD, "tiny")
    before = scene_to_dict(s)
    with pytest.raises(SceneError) as err:
        apply_setup(s, setup, "case kx-01 setup")
    assert expected in str(err.value) and "case kx-01 setup" in str(err.value)
    assert scene_to_dict(s) == before


@pytest.mark.parametrize("path", [SHARED_EXAMPLE, MINI_SCENE], ids=lambda p: p.name)
def test_example_case_setups_apply(path):
    s = load_scene(path)
    cases = yaml.safe_load(path.with_name(path.name.replace(".scene.", ".cases.")).read_text())["cases"]
    for case in cases:
        new = apply_setup(s, case.get("setup"), case["id"])
        assert new.name == s.name


# --------------------------------------------------------------------------- the project's scenes
def world_of(name: str) -> SimWorld:
    w = SimWorld()
    w.load_path(name)
    return w


def dist(w: SimWorld, oid: str) -> float:
    return distance_from_camera(w.scene, w.scene.get(oid))


def test_kitchen_contents_and_reach():
    w = world_of("kitchen")
    s = w.scene
    assert 15 <= len(s.objects) <= 20 and s.robot.holding is None
    types = {o.type for o in s.objects}
    assert {"Fridge", "Microwave", "CoffeeMachine", "Sink", "Bowl", "Mug", "Apple", "Banana", "Tomato",
            "Knife", "Egg", "Bread"} <= types
    assert s.object("Fridge_1").door and s.object("Fridge_1").has("openable")
    mw = s.object("Microwave_1")
    assert mw.has("openable") and mw.has("toggleable") and s.object("Sink_1").open_top
    assert {o.state.get("clean") for o in s.objects if o.type == "Mug"} == {True, False}
    near = [o.id for o in s.objects if o.has("pickupable") and dist(w, o.id) < 1.0]
    far = [o.id for o in s.objects if o.has("pickupable") and dist(w, o.id) > 1.2]
    assert {"Mug_1", "Apple_1", "Knife_1", "Bowl_1"} <= set(near)
    assert {"Mug_2", "Tomato_1", "Bread_1", "Banana_1"} <= set(far)
    # clear margins: no pickable object sits within 0.08 m of the reach limit
    assert all(abs(dist(w, o.id) - s.robot.reach) > 0.08 for o in s.objects if o.has("pickupable"))
    assert inside(s.object("Milk_1"), s.object("Fridge_1")) and inside(s.object("Mug_2"), s.object("Sink_1"))
    counts = visible_pixel_counts(w.frame())
    assert all(counts[o] > 250 for o in ("Fridge_1", "Microwave_1", "CoffeeMachine_1", "Mug_1", "Apple_1",
                                         "Knife_1", "Bowl_1", "Tomato_1", "Banana_1", "Bread_1", "Mug_2"))


def test_kitchen_skills_do_what_the_scene_promises():
    w = world_of("kitchen")
    assert w.execute("pick", ["Mug_1"]).success
    assert w.execute("place", ["CounterTop_1"]).success
    assert "out of reach" in w.execute("pick", ["Mug_2"]).message
    assert "Egg_1 is inside it" in w.execute("pick", ["Bowl_1"]).message
    assert path_blockers(w.scene, w.scene.object("Fridge_1")) == []
    assert "inside Fridge_1" in w.execute("pick", ["Milk_1"]).message
    assert w.execute("move_to", ["Fridge_1"]).success
    assert w.execute("open", ["Fridge_1"]).success
    assert visible_pixel_counts(w.frame())["Milk_1"] > 100            # seen through the open door
    assert w.execute("pick", ["Milk_1"]).success
    assert w.execute("move_to", ["Microwave_1"]).success
    assert w.execute("open", ["Microwave_1"]).success is False        # hand full: holding the milk
    assert w.execute("place", ["CounterTop_1"]).success
    assert w.execute("open", ["Microwave_1"]).success
    assert w.execute("turn_on", ["Microwave_1"]).success


def test_assistive_room_supports_the_paper_demo():
    w = world_of("assistive_room")
    s = w.scene
    p = s.person("Person_1")
    assert p.name is None and not p.looking_at_robot and p.hands_free
    # 1. the chair blocks the straight path to the counter
    r = w.execute("move_to", ["MedicineCounter_1"])
    assert not r.success and "Chair_1" in r.message
    # 2. two medicines; Medicine_1 is clearly the one closest to the plant
    meds = [o for o in s.objects if o.type == "Medicine"]
    assert [m.id for m in meds] == ["Medicine_1", "Medicine_2"]
    assert "ambiguous" in w.execute("pick", ["medicine"]).message
    plant = s.object("Plant_1")

    def gap(a, b):
        return max(max(abs(a.center[i] - b.center[i]) - (a.size[i] + b.size[i]) / 2, 0.0) for i in (0, 1))

    assert gap(s.object("Medicine_1"), plant) < 0.12 and gap(s.object("Medicine_2"), plant) > 0.4
    assert all(on_top_of(m, s.object("MedicineCounter_1")) for m in meds)
    # recovery: the person moves the chair; the robot reaches the counter
    w.apply_setup({"objects": {"Chair_1": {"center": [1.2, 1.6, 0.45]}}})
    assert w.execute("move_to", ["MedicineCounter_1"]).success
    # 3. from there Medicine_1 is out of reach, Medicine_2 within reach, both visible
    assert dist(w, "Medicine_1") > 1.18 and dist(w, "Medicine_2") < 0.9
    counts = visible_pixel_counts(w.frame())
    assert counts["Medicine_1"] > 100 and counts["Medicine_2"] > 100 and counts["Plant_1"] > 500
    r = w.execute("pick", ["Medicine_1"])
    assert not r.success and "out of reach" in r.message
    # recovery: the person puts it closer; the robot picks it and approaches the person
    w.apply_setup({"objects": {"Medicine_1": {"center": [2.9, 0.75, 0.95]}}}, reset=False)
    assert w.execute("pick", ["Medicine_1"]).success
    assert w.execute("move_to", ["Person_1"]).success
    assert dist(w, "Person_1") <= 0.5
    # 4. handover: the person is not looking until asked
    r = w.execute("handover", ["Medicine_1", "Person_1"])
    assert not r.success and "not looking" in r.message
    w.apply_setup({"people": {"Person_1": {"name": "Adriana", "state": {"looking_at_robot": True}}}}, reset=False)
    assert w.execute("handover", ["Medicine_1", "Adriana"]).success


def test_kitchen_task_supports_the_second_task():
    w = world_of("kitchen_task")
    s = w.scene
    assert s.robot.holding == "Egg_1" and "Egg_1" not in visible_pixel_counts(w.frame())
    assert on_top_of(s.object("Tomato_1"), s.object("CuttingBoard_1"))
    table = s.object("FreeTable_1")
    assert table.has("receptacle") and not any(on_top_of(o, table) for o in s.visible_objects())
    assert dist(w, "Tomato_1") < 0.9 and dist(w, "Knife_1") > 1.2 and dist(w, "FreeTable_1") < 1.0
    r = w.execute("slice", ["Tomato_1"])
    assert not r.success and "knife" in r.message and "Egg_1" in r.message
    assert "hand is full" in w.execute("pick", ["Knife_1"]).message
    for skill, args in (("place", ["FreeTable_1"]), ("move_to", ["Knife_1"]), ("pick", ["Knife_1"]),
                        ("move_to", ["Tomato_1"]), ("slice", ["Tomato_1"])):
        r = w.execute(skill, args)
        assert r.success, (skill, r.message)
    s = w.scene
    assert on_top_of(s.object("Egg_1"), table) and s.object("Tomato_1").state["sliced"] is True
