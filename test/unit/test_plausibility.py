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


def test_the_broad_phase_gives_the_answers_of_comparing_every_pair():
    """check_plausibility's floor grid against the plain all-pairs check, on a house with
    deliberate faults (floating things, things pushed into each other)."""
    import dataclasses

    import numpy as np

    from raider_ros.common.geometry import footprint, overlap, polygon_penetration, true_box
    from raider_ros.sim import plausibility as pl
    from raider_ros.sim.house import generate_house

    scene = generate_house(400, seed=11).scene
    objs = list(scene.objects)
    rng = np.random.default_rng(0)
    for i in rng.choice(len(objs), 25, replace=False):
        o = objs[i]
        objs[i] = dataclasses.replace(o, center=(o.center[0] + float(rng.uniform(-0.4, 0.4)),
                                                 o.center[1] + float(rng.uniform(-0.4, 0.4)),
                                                 o.center[2] + float(rng.choice([0.0, 0.3]))))
    scene = scene.replace(objects=tuple(objs))

    def brute(scene):
        ents = list(scene.entities)
        boxes = {e.id: true_box(e) for e in ents}
        out = [e.id for e in ents if not pl._supported(e, ents, boxes)]
        pairs = []
        for i, a in enumerate(ents):
            for b in ents[i + 1:]:
                ov = overlap(*boxes[a.id], *boxes[b.id])
                if np.all(ov > pl.PENETRATION_M) and not pl._inside(a, b, boxes) and not pl._inside(b, a, boxes) \
                        and polygon_penetration(footprint(a), footprint(b)) > pl.PENETRATION_M:
                    pairs.append((a.id, b.id))
        return out, pairs

    floating, pairs = brute(scene)
    problems = check_plausibility(scene)
    assert floating and pairs, "the faults should show"
    assert [p.split(" ")[0] for p in problems if "rests on nothing" in p] == floating
    assert [tuple(p.split(" ")[0:3:2]) for p in problems if "interpenetrate" in p] == pairs
