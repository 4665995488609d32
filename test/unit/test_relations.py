"""Relations from rendered frames (perception never sees the scene), checked against the oracle."""
import numpy as np
import pytest

from raider_ros.sim.render import render
from raider_ros.sim.scene import load_scene, parse_scene
from raider_ros.perception.oracle import OracleGeometry
from raider_ros.perception.pipeline import PerceptionPipeline
from raider_ros.perception.pointcloud import build_objects
from raider_ros.perception.relations import RelationEngine, RelationParams, check_free_path, compute_relations
from raider_ros.perception.detection import SimInstanceDetector
from raider_ros.common.paths import scenes_dir
from support.shared import KITCHEN_EXAMPLE, requires_shared

KITCHEN = scenes_dir() / "kitchen.scene.yaml"

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


def test_a_low_bowl_just_in_front_hides_the_bottom_of_a_bottle():
    # the bowl's back rim is barely nearer than the bottle's front (a few mm, under the
    # occluder depth), but it rises above the bottle's lowest visible point: the bottle is
    # completed down to the table (not onto the bowl) and the bowl blocks it, as the oracle says
    bottle = obj("Bottle_1", [1.4, 0, 0.87], [0.06, 0.06, 0.14], shape="cylinder")
    bowl = obj("Mortar_1", [1.31, 0, 0.845], [0.1, 0.1, 0.09], shape="cylinder")
    scene, f, res = perceive(dict(TABLE, center=[1.5, 0, 0.4], size=[0.8, 1.4, 0.8]), bottle, bowl)
    eng = res.engine
    k = eng.index["Bottle_1"]
    assert eng.seen_bottom[k] > 0.87 and eng.lo[k, 2] == pytest.approx(0.8, abs=0.005)
    assert eng.bottom_occluders[k] == {eng.index["Mortar_1"]}
    ok, ev = eng.evaluate("Mortar_1", "blocking", "Bottle_1")
    assert ok and ev["hidden_fraction"] >= 0.4
    assert OracleGeometry(scene, frame=f).answer("Mortar_1", "blocking", "Bottle_1").holds


def test_blocking_by_side_occlusion():
    # the bottle stands half a width aside in front of the glass: the glass's visible half shows
    # nothing of what is hidden, its whole left side is cut by the nearer bottle
    glass = obj("WineGlass_1", [1.2, 0.0, 0.89], [0.08, 0.08, 0.18], shape="cylinder")
    bottle = obj("WineBottle_1", [1.08, 0.04, 0.96], [0.08, 0.08, 0.32], shape="cylinder")
    scene, f, res = perceive(TABLE, glass, bottle)
    truth = OracleGeometry(scene, frame=f).answer("WineBottle_1", "blocking", "WineGlass_1")
    assert truth.holds and not truth.borderline
    ok, ev = res.engine.evaluate("WineBottle_1", "blocking", "WineGlass_1")
    assert ok and ev["hidden_fraction"] >= 0.4 and ev["path_distance_m"] > 0.3
    assert holds(res, "WineBottle_1", "blocking", "WineGlass_1")
    assert res.engine.related("blocking", "WineGlass_1")[0].subject == "WineBottle_1"
    assert not holds(res, "WineGlass_1", "blocking", "WineBottle_1")
    # the glass's box holds only its visible half: without the continuation nothing is hidden
    seen_only = RelationEngine(res.objects, f.camera, RelationParams(side_occluded_fraction=1.01))
    assert not seen_only.evaluate("WineBottle_1", "blocking", "WineGlass_1")[0]


def test_no_side_continuation_into_a_neighbour_beside_it():
    # the coffee machine stands beside the microwave, a little nearer: it borders the microwave's
    # whole left side in the image, but the microwave cannot go on inside the machine's box
    counter = obj("CounterTop_1", [1.5, -0.675, 0.45], [2.4, 0.65, 0.9])
    micro = obj("Microwave_1", [2.35, -0.81, 1.05], [0.46, 0.36, 0.3])
    coffee = obj("CoffeeMachine_1", [2.52, -0.49, 1.09], [0.22, 0.26, 0.38])
    scene = parse_scene({"format": "raider-scene/1", "name": "t", "robot": {"pose": [0, 0, -15]},
                         "objects": [counter, micro, coffee]})
    f = render(scene)
    res = PerceptionPipeline("sim").process(f.rgb, f.depth, f.instance, f.labels, f.camera)
    truth = OracleGeometry(scene, frame=f).answer("CoffeeMachine_1", "blocking", "Microwave_1")
    assert not truth.holds and not truth.borderline
    ok, ev = res.engine.evaluate("CoffeeMachine_1", "blocking", "Microwave_1")
    assert not ok and ev["hidden_fraction"] < 0.1


def test_floor_path_blocked_by_a_chair_cut_by_the_image_edge():
    # the chair beside the robot shows only its top part, the image's lower edge cuts its legs
    # off; a chair stands on the floor, so it lies across the floor path to the mug. A
    # wall-hung cabinet in the same place looks the same but is completed no lower
    desk = obj("Desk_1", [1.0, 0, 0.375], [1.2, 1.2, 0.75])
    mug = obj("Mug_1", [0.5, -0.28, 0.8], [0.09, 0.09, 0.1], shape="cylinder")
    for other, size, z, blocks in (("Chair_1", [0.5, 0.5, 0.9], 0.45, True), ("Cabinet_1", [0.5, 0.5, 0.3], 0.7, False)):
        scene, f, res = perceive(desk, mug, obj(other, [0.14, -0.5, z], size))
        truth = OracleGeometry(scene, frame=f).answer(other, "blocking", "Mug_1")
        assert truth.holds is blocks and not truth.borderline
        eng = res.engine
        k = eng.index[other]
        assert res.objects[other].bbox[3] == f.camera.height - 1 and eng.seen_bottom[k] > 0.5
        assert eng.lo[k, 2] == (0.0 if blocks else eng.seen_bottom[k])
        ok, ev = eng.evaluate(other, "blocking", "Mug_1")
        assert ok is blocks and (ev["path_distance_m"] < 0.1) is blocks
        assert holds(res, other, "blocking", "Mug_1") is blocks
    # the kinds that stand on the floor are a parameter
    scene, f, res = perceive(desk, mug, obj("Chair_1", [0.14, -0.5, 0.45], [0.5, 0.5, 0.9]))
    assert not RelationEngine(res.objects, f.camera, RelationParams(floor_types=()),
                              robot_xy=(0, 0)).evaluate("Chair_1", "blocking", "Mug_1")[0]


@pytest.mark.parametrize("path", [KITCHEN, pytest.param(KITCHEN_EXAMPLE, marks=requires_shared, id="shared-example")],
                         ids=lambda p: p.name)
def test_perception_agrees_with_the_oracle_on_a_kitchen(path):
    scene = load_scene(path)
    f = render(scene)
    res = PerceptionPipeline().process(f.rgb, f.depth, f.instance, f.labels, f.camera)
    oracle = OracleGeometry(scene, frame=f)
    for name, o in res.objects.items():
        assert o.distance_m == pytest.approx(oracle.distance(name), abs=0.02)
    seen = set(res.objects)             # what no pixel shows (the milk in the closed fridge) is not perceived
    perceived = {(r.subject, r.relation, r.object) for r in res.relations}
    answers = oracle.answers()
    sure = {k: a.holds for k, a in answers.items() if not a.borderline and k[0] in seen and k[2] in seen}
    # everything the oracle is sure of among these relations is perceived
    for rel in ("on top of", "near", "inside", "blocking"):
        truth = {k for k, holds in sure.items() if holds and k[1] == rel}
        assert truth <= perceived, (rel, truth - perceived)
    # left / right: the image boxes of objects wholly in view match their true extents'
    w, h = f.camera.width, f.camera.height
    whole = {e for e in seen if (b := oracle.image_box(e)) and b[0] >= 0 and b[1] >= 0 and b[2] < w and b[3] < h}
    lr = {k: holds for k, holds in sure.items() if k[1] in ("on the left of", "on the right of")
          and k[0] in whole and k[2] in whole}
    assert sum(lr.values()) >= 5
    assert {k for k, holds in lr.items() if holds} <= perceived
    assert not {k for k, holds in lr.items() if not holds} & perceived
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
