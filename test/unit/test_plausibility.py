"""Physical plausibility (benchmark format v1): resting on a support or the floor, no
interpenetration; --check names the offending objects."""
from __future__ import annotations

import textwrap

from raider_ros.cli import evaluate
from raider_ros.sim.plausibility import check_plausibility
from raider_ros.sim.scene import parse_scene

DESK = {"id": "Desk_1", "type": "Desk", "shape": "box", "center": [1.2, 0.0, 0.375], "size": [0.6, 1.0, 0.75]}


def scene(*objects, people=()):
    return parse_scene({"format": "raider-scene/1", "name": "t", "robot": {"pose": [0, 0, 0]},
                        "objects": [DESK, *objects], "people": list(people)}, "test")


def lamp(z, **kw):
    return {"id": "Lamp_1", "type": "Lamp", "shape": "cylinder", "center": [1.2, 0.2, z], "size": [0.15, 0.15, 0.4], **kw}


def test_a_lamp_standing_on_the_desk_is_fine():
    assert check_plausibility(scene(lamp(0.95))) == []


def test_a_lamp_sunk_half_into_the_desk_is_named():
    problems = check_plausibility(scene(lamp(0.75)))
    assert any("Desk_1 and Lamp_1 interpenetrate" in p for p in problems), problems
    assert any(p.startswith("Lamp_1 rests on nothing") for p in problems)


def test_floating_objects_and_people_are_named_unless_mounted_or_supported():
    assert check_plausibility(scene(lamp(1.3)))[0].startswith("Lamp_1 rests on nothing")
    assert check_plausibility(scene(lamp(1.3, mounted=True))) == []
    floating = {"id": "Person_1", "name": None, "center": [2.5, 0, 1.2], "size": [0.45, 0.35, 1.7]}
    assert any(p.startswith("Person_1 rests on nothing") for p in check_plausibility(scene(people=[floating])))
    lying = {"id": "Person_1", "name": None, "center": [1.2, 0, 0.9], "size": [0.45, 0.8, 0.3]}
    assert check_plausibility(scene(people=[lying])) == []          # lying on the desk-high bed


def test_things_inside_containers_and_in_the_gripper_are_fine():
    box = {"id": "Box_1", "type": "Box", "shape": "box", "center": [1.2, -0.3, 0.85], "size": [0.3, 0.3, 0.2],
           "open_top": True}
    ball = {"id": "Ball_1", "type": "Ball", "shape": "sphere", "center": [1.2, -0.3, 0.8], "size": [0.1, 0.1, 0.1]}
    assert check_plausibility(scene(box, ball)) == []
    held = parse_scene({"format": "raider-scene/1", "name": "t", "robot": {"pose": [0, 0, 0], "holding": "Lamp_1"},
                        "objects": [DESK, lamp(3.0)]}, "test")
    assert check_plausibility(held) == []


def test_rotated_boxes_side_by_side_do_not_count_as_touching_boxes():
    a = {"id": "Book_1", "type": "Book", "shape": "box", "center": [1.1, 0.0, 0.76], "size": [0.3, 0.05, 0.02],
         "yaw_deg": 45}
    b = {"id": "Book_2", "type": "Book", "shape": "box", "center": [1.2, -0.1, 0.76], "size": [0.3, 0.05, 0.02],
         "yaw_deg": 45}
    assert check_plausibility(scene(a, b)) == []      # their axis-aligned boxes overlap, the books do not


def test_check_mode_fails_and_names_the_objects(tmp_path, capsys):
    (tmp_path / "office.scene.yaml").write_text(textwrap.dedent("""\
        format: raider-scene/1
        name: office
        robot: {pose: [0, 0, 0], reach: 1.1, holding: null}
        objects:
          - {id: Desk_1, type: Desk, shape: box, center: [1.2, 0.0, 0.375], size: [0.6, 1.0, 0.75], properties: [receptacle]}
          - {id: Lamp_1, type: Lamp, shape: cylinder, center: [1.2, 0.2, 0.75], size: [0.15, 0.15, 0.4], properties: [toggleable], state: {switched_on: false}}
        """))
    (tmp_path / "office.cases.yaml").write_text(textwrap.dedent("""\
        format: raider-cases/1
        scene: office
        cases:
          - {id: of-1, query: "turn_on(Lamp)", query_type: QS, abstraction: AS, expected: {issue: none, category: IN}}
        """))
    assert evaluate.main(["--cases", str(tmp_path), "--check"]) == 1
    out, err = capsys.readouterr()
    assert "implausible: scene office: Desk_1 and Lamp_1 interpenetrate" in err
    assert "2 physical plausibility problems" in out       # sunk in, and so resting on nothing
