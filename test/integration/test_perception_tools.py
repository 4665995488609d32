"""sim_world, the perception nodes and scene_graph as separate processes: every tool's answer on
the shared example scene (and the assistive room for the people tools), checked against the
simulator truth and the benchmark oracle; bad input gets clear errors."""
from __future__ import annotations

from pathlib import Path

import pytest

from raider_ros.common.paths import scenes_dir
from raider_ros.sim.scene import apply_setup, load_scene, load_yaml_text
from raider_ros.perception.oracle import oracle_distance, oracle_relation
from raider_ros.ros.graph import NodeGraph
from raider_ros.srv import MeasureDistance, QueryRelation
from support.graph import PERCEPTION, GraphClient

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT.parent / "shared" / "benchmark" / "examples" / "kitchen_example.scene.yaml"
ASSISTIVE = scenes_dir() / "assistive_room.scene.yaml"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    assert EXAMPLE.is_file(), f"the shared example scene is missing: {EXAMPLE}"
    with NodeGraph(tmp_path_factory.mktemp("logs")) as graph:
        graph.start("sim_world", {"scene": str(EXAMPLE), "skill_duration_s": 0.0})
        for name in PERCEPTION:
            graph.start(name)
        client = GraphClient(graph)
        try:
            client.wait_refreshed(client.apply(""), timeout=60)
            yield client
        finally:
            client.close()


def _ok(result):
    success, data = result
    assert success, data
    return data


def test_object_detection_and_robot_holding(env):
    scene = load_scene(EXAMPLE)
    seen = set(_ok(env.tool("object_detection")))
    assert seen == {o.id for o in scene.objects}
    assert _ok(env.tool("robot_holding")) is None


@pytest.mark.parametrize("target", ["Mug_1", "Apple_1", "Mug_2", "CoffeeMachine_1"])
def test_dist_to_target_matches_the_oracle(env, target):
    scene = load_scene(EXAMPLE)
    data = _ok(env.tool("dist_to_target", target))
    assert data["target"] == target
    assert data["distance_m"] == pytest.approx(oracle_distance(scene, target), abs=0.05)
    assert data["within_reach"] == (oracle_distance(scene, target) <= scene.robot.reach)
    same = _ok(env.tool("dist_robot_to_obj", target))
    assert same["distance_m"] == pytest.approx(data["distance_m"], abs=1e-6)


def test_states_and_properties_come_from_the_provider(env):
    scene = load_scene(EXAMPLE)
    mug = scene.object("Mug_2")
    assert _ok(env.tool("get_obj_state", "Mug_2"))["state"] == dict(mug.state)
    assert set(_ok(env.tool("get_obj_properties", "mug_2"))["properties"]) == set(mug.properties)


def test_name_matching(env):
    data = _ok(env.tool("get_obj_state", "the apple"))
    assert data["object"] == "Apple_1"
    several = _ok(env.tool("dist_to_target", "mug"))   # a type with two instances answers for both
    assert {d["target"] for d in several} == {"Mug_1", "Mug_2"}
    success, (error, data) = env.tool("get_obj_state", "pear")
    assert not success and "not found" in error
    assert isinstance(data.get("closest"), list)


def test_relations_on_top_of_and_left_right(env):
    scene = load_scene(EXAMPLE)
    on_counter = set(_ok(env.tool("check_obj_relationship", "on top of", "CounterTop_1"))["related"])
    expected = {o.id for o in scene.objects if oracle_relation(scene, o.id, "on top of", "CounterTop_1")}
    assert expected and on_counter == expected
    left = _ok(env.tool("check_obj_relationship", "on the left of", "Mug_1"))
    assert "Apple_1" in left["related"] and "evidence" in left


def test_blocking_after_a_setup(env):
    setup = ("objects: {Mug_1: {center: [0.62, -0.34, 0.95]}, "
             "CerealBox_1: {center: [0.463, -0.356, 1.05], yaw_deg: -29}}")
    scene = apply_setup(load_scene(EXAMPLE), load_yaml_text(setup, "setup"))
    env.wait_refreshed(env.apply(setup))
    data = _ok(env.tool("check_obj_relationship", "blocking", "Mug_1"))
    assert oracle_relation(scene, "CerealBox_1", "blocking", "Mug_1")
    assert "CerealBox_1" in data["related"] and data["evidence"]["CerealBox_1"]
    env.wait_refreshed(env.apply(""))


def test_dist_between_objs_and_free_path(env):
    gap = _ok(env.tool("dist_between_objs", "Apple_1", "Banana_1"))
    assert 0.0 <= gap["distance_m"] < 0.15
    path = _ok(env.tool("check_free_path", "Mug_1"))
    assert path["free"] is True and path["blocking"] == []


def test_depth_distance_and_spatial_relations_services(env):
    scene = load_scene(EXAMPLE)
    r = env.call(MeasureDistance, "depth_distance/measure", to_id="the clean mug"[10:])  # "mug": two of them
    assert not r.success and "Mug_1" in r.message and "Mug_2" in r.message
    r = env.call(MeasureDistance, "depth_distance/measure", to_id="Mug_1")
    assert r.success and r.distance_m == pytest.approx(oracle_distance(scene, "Mug_1"), abs=0.05)
    r = env.call(MeasureDistance, "depth_distance/measure", from_id="Apple_1", to_id="Banana_1")
    assert r.success and r.distance_m < 0.15
    q = env.call(QueryRelation, "spatial_relations/query", relation="on top of", object="countertop")
    assert q.success and "Mug_1" in q.related
    bad = env.call(QueryRelation, "spatial_relations/query", relation="underneath-ish", object="Mug_1")
    assert not bad.success and "allowed" in bad.message


def test_bad_tool_input_gets_clear_errors(env):
    success, (error, _) = env.tool("check_obj_relationship", "levitating over", "Mug_1")
    assert not success and "on top of" in error
    success, (error, _) = env.tool("dist_to_target")
    assert not success and "dist_to_target(target)" in error


def test_people_tools_in_the_assistive_room(env):
    scene = load_scene(ASSISTIVE)
    env.wait_refreshed(env.load(ASSISTIVE))
    person = scene.people[0]
    assert _ok(env.tool("check_humans_around")) == [person.id]
    assert _ok(env.tool("recognize_humans")) == {person.id: person.name}
    gaze = _ok(env.tool("detect_human_gaze", person.id))
    assert gaze["looking_at_robot"] is person.looking_at_robot
    assert _ok(env.tool("human_hands_free", person.id))["hands_free"] is person.hands_free
    d = _ok(env.tool("dist_robot_to_human", person.id))
    assert d["distance_m"] == pytest.approx(oracle_distance(scene, person.id), abs=0.05)
    path = _ok(env.tool("check_free_path", "MedicineCounter_1"))
    assert path["free"] is False and "Chair_1" in path["blocking"]
    answer = _ok(env.tool("retrieve_user_information", "which fruit does the user like most?", timeout=60))
    assert answer["answer"] and 0.0 < answer["score"] <= 1.0
    env.wait_refreshed(env.load(EXAMPLE))
