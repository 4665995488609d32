"""Relations from rendered frames (perception never sees the scene), checked against the oracle."""
from pathlib import Path

import numpy as np
import pytest

from raider_ros.core.render import render
from raider_ros.core.scene import load_scene, parse_scene
from raider_ros.perception.oracle import OracleGeometry
from raider_ros.perception.pipeline import PerceptionPipeline
from raider_ros.perception.pointcloud import build_objects
from raider_ros.perception.relations import RelationEngine, RelationParams, check_free_path, compute_relations
from raider_ros.perception.detection import SimInstanceDetector

_EXAMPLE = "benchmark/examples/kitchen_example.scene.yaml"   # shared/ lies beside the repository
EXAMPLE = next((p / "shared" / _EXAMPLE for p in Path(__file__).resolve().parents if (p / "shared" / _EXAMPLE).is_file()),
               Path("/work/shared") / _EXAMPLE)

TABLE = {"id": "Table_1", "type": "Table", "shape": "box", "center": [1.4, 0.0, 0.4], "size": [0.8, 1.4, 0.8]}


def obj(oid, center, size=(0.08, 0.08, 0.08), shape="box", **kw):
    return {"id": oid, "type": oid.split("_")[0], "shape": shape, "center": list(center), "size": list(size), **kw}


def perceive(*objects, people=()):
    scene = parse_scene({"format": "raider-scene/1", "name": "t", "robot": {"pose": [0, 0, 0]},
                         "objects": [dict(o) for o in objects], "people": list(people)})
    f = render(scene)
    res = PerceptionPipeline("sim").process(f.rgb, f.depth, f.instance, f.labels, f.camera)
    return scene, f, res


def holds(res, a, rel, b):
    return any((r.subject, r.relation, r.object) == (a, rel, b) for r in res.relations)


def test_inside_a_bowl_and_on_top_of_the_table():
    bowl = obj("Bowl_1", [1.2, 0, 0.86], [0.24, 0.24, 0.12], shape="cylinder", open_top=True)
    apple = obj("Apple_1", [1.2, 0, 0.86], [0.12, 0.12, 0.12], shape="sphere")
    _, _, res = perceive(TABLE, bowl, apple)
    assert holds(res, "Apple_1", "inside", "Bowl_1")
    assert not holds(res, "Bowl_1", "inside", "Apple_1")
    assert holds(res, "Bowl_1", "on top of", "Table_1")
    assert not holds(res, "Apple_1", "on top of", "Bowl_1")
    ok, ev = res.engine.evaluate("Apple_1", "inside", "Bowl_1")
    assert ok and ev["inside_fraction"] > 0.5


def test_inside_an_open_cabinet_uses_the_hull():
    cab = obj("Cabinet_1", [1.5, 0, 0.35], [0.5, 0.7, 0.7], door="-x", state={"open": True}, properties=["openable"])
    box = obj("Box_1", [1.5, 0.05, 0.1], [0.18, 0.18, 0.18])
    _, _, res = perceive(cab, box)
    ok, ev = res.engine.evaluate("Box_1", "inside", "Cabinet_1")
    assert ok and ev["method"] == "hull"


def test_above_and_below_a_shelf():
    low = dict(TABLE, center=[1.4, 0, 0.25], size=[0.8, 1.4, 0.5])
    shelf = obj("Shelf_1", [1.5, 0, 0.95], [0.5, 0.6, 0.04])
    book = obj("Book_1", [1.4, 0.1, 0.56], [0.15, 0.2, 0.12])
    _, _, res = perceive(low, shelf, book)
    assert holds(res, "Shelf_1", "above", "Book_1") and holds(res, "Book_1", "below", "Shelf_1")
    assert holds(res, "Book_1", "on top of", "Table_1") and not holds(res, "Book_1", "above", "Table_1")


def test_left_right_and_near():
    apple = obj("Apple_1", [1.2, 0.3, 0.84], shape="sphere")
    mug = obj("Mug_1", [1.2, -0.3, 0.85], [0.08, 0.08, 0.1], shape="cylinder")
    pear = obj("Pear_1", [1.2, 0.18, 0.84], shape="sphere")
    _, _, res = perceive(TABLE, apple, mug, pear)
    assert holds(res, "Apple_1", "on the left of", "Mug_1") and holds(res, "Mug_1", "on the right of", "Apple_1")
    assert not holds(res, "Mug_1", "on the left of", "Apple_1")
    assert holds(res, "Apple_1", "near", "Pear_1") and not holds(res, "Apple_1", "near", "Mug_1")
    ok, ev = res.engine.evaluate("Apple_1", "near", "Pear_1")
    assert ok and ev["gap_m"] == pytest.approx(0.04, abs=0.01)


def test_blocking_by_occlusion_and_by_the_floor_path():
    # the box in front hides the mug's lower part; the chair stands on the floor on the way
    mug = obj("Mug_1", [1.4, 0, 0.85], [0.08, 0.08, 0.1], shape="cylinder")
    cereal = obj("CerealBox_1", [1.2, 0, 0.87], [0.07, 0.25, 0.14])
    chair = obj("Chair_1", [0.75, 0.05, 0.2], [0.3, 0.35, 0.4])
    scene, f, res = perceive(dict(TABLE, center=[1.5, 0, 0.4], size=[0.8, 1.4, 0.8]), mug, cereal, chair)
    oracle = OracleGeometry(scene, frame=f)
    ok, ev = res.engine.evaluate("CerealBox_1", "blocking", "Mug_1")
    assert ok and ev["hidden_fraction"] >= 0.2 and oracle.answer("CerealBox_1", "blocking", "Mug_1").holds
    assert holds(res, "Chair_1", "blocking", "Mug_1")
    assert not holds(res, "Table_1", "blocking", "Mug_1")        # the table carries the mug
    path = check_free_path("Mug_1", res.objects, (0.0, 0.0), camera=f.camera)
    assert not path["free"] and set(path["blocking"]) == {"CerealBox_1", "Chair_1"}
    assert "path_distance_m" in path["evidence"]["Chair_1"]
    floor_only = check_free_path("Mug_1", res.objects, (0.0, 0.0))
    assert floor_only["blocking"] == ["Chair_1"]


def test_perception_agrees_with_the_oracle_on_the_example_kitchen():
    scene = load_scene(EXAMPLE)
    f = render(scene)
    res = PerceptionPipeline().process(f.rgb, f.depth, f.instance, f.labels, f.camera)
    oracle = OracleGeometry(scene, frame=f)
    for name, o in res.objects.items():
        assert o.distance_m == pytest.approx(oracle.distance(name), abs=0.02)
    perceived = {(r.subject, r.relation, r.object) for r in res.relations}
    truth = {k for k, a in oracle.answers().items() if a.holds and not a.borderline}
    # everything the oracle is sure of among these relations is perceived
    for rel in ("on top of", "near", "inside", "blocking"):
        assert {t for t in truth if t[1] == rel} <= perceived, rel
    assert ("Mug_2", "on the right of", "CoffeeMachine_1") in perceived
    assert set(res.timings) >= {"detect_ms", "clouds_ms", "relations_ms", "total_ms"}


def test_objects_without_points_and_empty_frames():
    cam_scene, f, _ = perceive(TABLE)
    # a detection that no depth pixel supports takes part in no relation
    det = SimInstanceDetector().detect(f.rgb, instance=f.instance, labels=f.labels)
    depth = np.where(f.instance == f.ids["Table_1"], np.nan, f.depth).astype(np.float32)
    objs = build_objects(det, depth, f.camera)
    assert objs["Table_1"].status == "no_valid_depth"
    eng = RelationEngine(objs, f.camera)
    assert eng.relations() == [] and eng.related("near", "Table_1") == []
    assert eng.evaluate("Table_1", "near", "Table_1")[0] is False
    assert compute_relations({}, f.camera) == []


def test_errors_name_what_was_wrong():
    _, f, res = perceive(TABLE, obj("Apple_1", [1.2, 0, 0.84], shape="sphere"))
    with pytest.raises(ValueError, match="allowed: inside, on top of"):
        res.engine.evaluate("Apple_1", "next to", "Table_1")
    with pytest.raises(KeyError, match="no perceived object 'Pear_1'; known: Apple_1, Table_1"):
        res.engine.related("near", "Pear_1")
    with pytest.raises(ValueError, match="robot_xy or a camera"):
        check_free_path("Apple_1", res.objects)


def test_thresholds_are_parameters():
    apple = obj("Apple_1", [1.2, 0.3, 0.84], shape="sphere")
    pear = obj("Pear_1", [1.2, 0.05, 0.84], shape="sphere")
    _, f, res = perceive(TABLE, apple, pear)
    assert not res.engine.evaluate("Apple_1", "near", "Pear_1")[0]
    wide = RelationEngine(res.objects, f.camera, RelationParams(near_gap_m=0.3))
    assert wide.evaluate("Apple_1", "near", "Pear_1")[0]
