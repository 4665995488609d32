"""SimWorld: every skill's success and every failure reason, argument matching, feedback,
cancel, versions, the frame cache, atomic load / setup, truth and thread safety."""
from __future__ import annotations

import copy
import threading
import time

import numpy as np
import pytest

from raider_ros.sim.render import Renderer, visible_pixel_counts
from raider_ros.sim.scene import SceneError, parse_scene
from raider_ros.sim.skills import distance_from_camera, inside, on_top_of
from raider_ros.sim.world import SimWorld, SkillResult
from support.world_doc import DOC, obj


def make_world(doc=None, **kw) -> SimWorld:
    return SimWorld(parse_scene(copy.deepcopy(doc or DOC), "world_test.scene.yaml"), **kw)


@pytest.fixture
def world() -> SimWorld:
    return make_world()


def ok(w: SimWorld, skill: str, *args: str) -> str:
    r = w.execute(skill, list(args))
    assert isinstance(r, SkillResult)
    assert r.success, r.message
    return r.message


def fails(w: SimWorld, skill: str, *args, words=()) -> str:
    before, version = w.truth(), w.version
    r = w.execute(skill, list(args))
    assert not r.success, r.message
    low = r.message.lower()
    for word in words:
        assert word.lower() in low, f"{word!r} not in {r.message!r}"
    assert w.version == version and w.truth() == before       # a failed skill changes nothing
    return r.message


# --------------------------------------------------------------------------- successes
def test_pick_and_place_on_top(world):
    ok(world, "pick", "Apple_1")
    assert world.scene.robot.holding == "Apple_1"
    assert "Apple_1" not in visible_pixel_counts(world.frame())      # in the gripper, not drawn
    ok(world, "place", "Counter_1")
    s = world.scene
    assert s.robot.holding is None
    apple, counter = s.object("Apple_1"), s.object("Counter_1")
    assert on_top_of(apple, counter)
    assert distance_from_camera(s, apple) <= s.robot.reach           # the free spot nearest the robot
    for o in s.objects:                                              # and it collides with nothing
        if o.id not in ("Apple_1", "Counter_1"):
            a_c, a_h = np.array(apple.center), np.array(apple.size) / 2
            o_c, o_h = np.array(o.center), np.array(o.size) / 2
            lo, hi = np.maximum(a_c - a_h, o_c - o_h), np.minimum(a_c + a_h, o_c + o_h)
            assert np.any(hi <= lo + 1e-9), o.id
    assert visible_pixel_counts(world.frame())["Apple_1"] > 0


def test_place_inside_open_top_container(world):
    ok(world, "pick", "Apple_1")
    ok(world, "place", "Cup_1")
    s = world.scene
    assert inside(s.object("Apple_1"), s.object("Cup_1"))


def test_open_place_inside_close_and_toggle_microwave(world):
    ok(world, "open", "Microwave_1")
    assert world.scene.object("Microwave_1").state["open"] is True
    ok(world, "pick", "Apple_1")
    ok(world, "place", "Microwave_1")
    s = world.scene
    assert inside(s.object("Apple_1"), s.object("Microwave_1"))
    ok(world, "close", "Microwave_1")
    ok(world, "turn_on", "Microwave_1")
    assert world.scene.object("Microwave_1").state == {"open": False, "switched_on": True}
    ok(world, "turn_off", "Microwave_1")
    assert world.scene.object("Microwave_1").state["switched_on"] is False


def test_slice_with_a_knife(world):
    ok(world, "pick", "Knife_1")
    assert "Knife_1" in ok(world, "slice", "Apple_1")
    assert world.scene.object("Apple_1").state["sliced"] is True


def test_move_to_stands_off_and_faces_the_target(world):
    msg = ok(world, "move_to", "Counter_1")
    r = world.scene.robot
    assert (r.x, r.y, r.yaw_deg) == pytest.approx((0.6 - 0.45, 0.0, 0.0), abs=1e-3)
    assert "Counter_1" in msg
    # an object near a corner of the counter: the base goes to the counter's side nearest to
    # it (+y, 0.10 m from the mug's centre; -x would be 0.55 m), lined up with it
    ok(world, "move_to", "Mug_1")
    r = world.scene.robot
    assert (r.x, r.y, r.yaw_deg) == pytest.approx((1.15, 0.8 + 0.45, -90.0), abs=1e-3)
    ok(world, "pick", "Mug_1")                                        # now within reach


def test_move_to_person_then_handover(world):
    fails(world, "handover", "Apple_1", "Person_1", words=["not holding"])
    ok(world, "pick", "Apple_1")
    fails(world, "handover", "Apple_1", "Person_1", words=["Person_1", "away", "0.50"])
    ok(world, "move_to", "Person_1")
    r = world.scene.robot
    assert (r.x, r.y, r.yaw_deg) == pytest.approx((0.0, -1.025 + 0.45, -90.0), abs=1e-3)
    assert "Apple_1" in ok(world, "handover", "apple", "Ana")          # type and person name resolve
    s = world.scene
    assert s.robot.holding is None and s.get("Apple_1") is None


def test_standoff_and_handover_distance_are_parameters():
    w = make_world(approach_standoff_m=0.7, handover_distance_m=0.6)
    ok(w, "pick", "Apple_1")
    ok(w, "move_to", "Person_1")
    assert w.scene.robot.y == pytest.approx(-1.025 + 0.7)
    fails(w, "handover", "Apple_1", "Person_1", words=["0.70 m away", "0.60 m"])


# --------------------------------------------------------------------------- failures
def test_unknown_and_ambiguous_names(world):
    fails(world, "pick", "Appel_1", words=["Appel_1", "closest", "Apple_1"])
    fails(world, "pick", "Pear", words=["no object called 'Pear'"])
    two_mugs = copy.deepcopy(DOC)
    two_mugs["objects"].append(obj("Mug_2", [0.7, 0.1, 0.95], [0.09, 0.09, 0.1], ["pickupable"], shape="cylinder"))
    w = make_world(two_mugs)
    fails(w, "pick", "mug", words=["ambiguous", "Mug_1", "Mug_2"])
    ok(w, "pick", "mug_2")                                             # case-insensitive id
    ok(w, "place", "counter")                                         # the only Counter


def test_bad_input_never_raises(world):
    fails(world, "fly", "Apple_1", words=["unknown skill", "pick"])
    fails(world, "pick", words=["takes 1 argument"])
    fails(world, "handover", "Apple_1", words=["takes 2 arguments", "object, person"])
    for skill, args in ((42, ["Apple_1"]), ("pick", None), ("pick", "Apple_1"), ("pick", [None]), ("pick", [""]),
                        (None, None), ("pick", [3.5]), ("place", [{"a": 1}])):
        r = world.execute(skill, args)
        assert isinstance(r, SkillResult) and not r.success and r.message
    assert world.version == 1


def test_person_where_an_object_is_expected_and_vice_versa(world):
    fails(world, "pick", "Person_1", words=["Person_1 is a person"])
    ok(world, "pick", "Apple_1")
    fails(world, "handover", "Apple_1", "Counter_1", words=["Counter_1 is not a person"])
    fails(world, "handover", "Apple_1", "Bob", words=["no person called 'Bob'"])


def test_out_of_reach_gives_distance_and_reach(world):
    msg = fails(world, "pick", "Mug_1", words=["Mug_1", "out of reach", "1.10 m"])
    d = distance_from_camera(world.scene, world.scene.object("Mug_1"))
    assert f"{d:.2f} m" in msg and d > 1.1
    fails(world, "open", "Fridge_1", words=["out of reach"])


def test_hand_full_names_what_it_holds(world):
    ok(world, "pick", "Knife_1")
    fails(world, "pick", "Apple_1", words=["hand is full", "Knife_1"])
    fails(world, "open", "Microwave_1", words=["hand is full", "Knife_1"])   # one arm: no opening with a full hand
    fails(world, "pick", "Knife_1", words=["already holding"])
    fails(world, "move_to", "Knife_1", words=["holding it"])


def test_hand_empty(world):
    fails(world, "place", "Counter_1", words=["not holding anything", "Counter_1"])
    fails(world, "place", "Nowhere_1", words=["not holding anything"])


def test_door_closed_names_the_container(world):
    ok(world, "move_to", "Counter_1")
    w2 = make_world()
    w2.apply_setup({"robot": {"pose": [1.8, 0.0, 0.0]}})
    fails(w2, "pick", "Milk_1", words=["Milk_1", "inside Fridge_1", "closed"])
    ok(w2, "open", "Fridge_1")
    ok(w2, "pick", "Milk_1")
    ok(w2, "close", "Fridge_1")                                       # pushed shut with a full hand
    fails(w2, "place", "Fridge_1", words=["Fridge_1 is closed", "opened"])


def test_wrong_properties(world):
    fails(world, "pick", "Counter_1", words=["Counter_1", "not pickupable"])
    fails(world, "open", "Apple_1", words=["Apple_1", "not openable"])
    fails(world, "close", "Knife_1", words=["not openable"])
    fails(world, "turn_on", "Apple_1", words=["not toggleable"])
    fails(world, "turn_off", "Counter_1", words=["not toggleable"])
    ok(world, "pick", "Knife_1")
    fails(world, "slice", "Cup_1", words=["Cup_1", "not sliceable"])
    ok(world, "place", "Counter_1")
    ok(world, "pick", "Apple_1")
    fails(world, "place", "Knife_1", words=["Knife_1", "not receptacle"])


def test_wrong_states(world):
    fails(world, "close", "Microwave_1", words=["already closed"])
    fails(world, "turn_off", "Microwave_1", words=["already off"])
    ok(world, "open", "Microwave_1")
    fails(world, "open", "Microwave_1", words=["already open"])
    ok(world, "turn_on", "Microwave_1")
    fails(world, "turn_on", "Microwave_1", words=["already on"])
    world.apply_setup({"objects": {"Apple_1": {"state": {"sliced": True}}}, "robot": {"holding": "Knife_1"}})
    fails(world, "slice", "Apple_1", words=["already sliced"])


def test_slice_needs_a_knife_in_hand(world):
    fails(world, "slice", "Apple_1", words=["knife", "holding nothing"])
    world.apply_setup({"robot": {"holding": "Mug_1"}})
    fails(world, "slice", "Apple_1", words=["knife", "Mug_1"])


def test_something_on_top_or_inside_blocks_a_pick(world):
    fails(world, "pick", "Plate_1", words=["Cup_1 is on top of it"])
    fails(world, "pick", "Bowl_1", words=["Egg_1 is inside it"])
    ok(world, "pick", "Egg_1")                                          # the egg itself is free
    ok(world, "place", "Counter_1")
    ok(world, "pick", "Bowl_1")


def test_an_object_between_camera_and_target_blocks(world):
    # the cereal box stands on the counter right between the camera and the apple
    world.apply_setup({"objects": {"CerealBox_1": {"center": [0.63, 0.27, 1.05], "size": [0.03, 0.2, 0.3]}}})
    fails(world, "pick", "Apple_1", words=["CerealBox_1", "blocks the way", "Apple_1"])
    world.apply_setup(None)                                            # reset: the way is free again
    ok(world, "pick", "Apple_1")


def test_path_blocked_for_move_to(world):
    msg = fails(world, "move_to", "Fridge_1", words=["path", "blocked", "Counter_1", "Fridge_1"])
    assert "m from the straight path" in msg
    # a chair on the floor on the way to the person
    world.apply_setup({"add": [obj("Chair_1", [0.0, -0.6, 0.45], [0.4, 0.4, 0.9], ["moveable"])]})
    fails(world, "move_to", "Person_1", words=["Chair_1"])
    # what carries the target is no obstacle: the counter under the mug
    world.apply_setup(None)
    ok(world, "move_to", "Mug_1")


def test_handover_needs_a_ready_person(world):
    ok(world, "pick", "Apple_1")
    ok(world, "move_to", "Person_1")
    world.apply_setup({"people": {"Person_1": {"state": {"looking_at_robot": False}}}}, reset=False)
    fails(world, "handover", "Apple_1", "Person_1", words=["not looking at the robot"])
    world.apply_setup({"people": {"Person_1": {"state": {"looking_at_robot": True, "hands_free": False}}}},
                      reset=False)
    fails(world, "handover", "Apple_1", "Person_1", words=["hands are not free"])
    world.apply_setup({"people": {"Person_1": {"state": {"hands_free": True}}}}, reset=False)
    fails(world, "handover", "Knife_1", "Person_1", words=["holding Apple_1, not Knife_1"])
    ok(world, "handover", "Apple_1", "Person_1")
    world.apply_setup({"remove": ["Person_1"]}, reset=False)
    fails(world, "handover", "Knife_1", "Person_1", words=["no person called 'Person_1'"])


def test_place_needs_free_space(world):
    world.apply_setup({"remove": ["Cup_1"]})
    ok(world, "pick", "Plate_1")
    fails(world, "place", "Coaster_1", words=["no free space", "Coaster_1", "Plate_1"])
    fails(world, "place", "Plate_1", words=["on itself"])


# --------------------------------------------------------------------------- timing, feedback, cancel
def test_feedback_stages_and_duration():
    w = make_world(skill_duration_s=0.1, skill_steps=5)
    seen: list[tuple[str, float, str]] = []
    t0 = time.monotonic()
    r = w.execute("move_to", ["Counter_1"], feedback=lambda *a: seen.append(a))
    assert r.success and time.monotonic() - t0 >= 0.1
    stages = [s for s, _p, _m in seen]
    assert stages[0] == "checking" and stages[-1] == "done" and stages.count("moving") == 5
    progress = [p for _s, p, _m in seen]
    assert progress == sorted(progress) and progress[-1] == 1.0
    seen.clear()
    assert w.execute("pick", ["Apple_1"], feedback=lambda *a: seen.append(a)).success
    assert "acting" in [s for s, _p, _m in seen]
    seen.clear()
    assert not w.execute("pick", ["Knife_1"], feedback=lambda *a: seen.append(a)).success
    assert [s for s, _p, _m in seen] == ["checking", "done"] and "hand is full" in seen[-1][2]


def test_cancel_leaves_the_world_unchanged():
    w = make_world(skill_duration_s=0.2, skill_steps=10)
    before, version = w.truth(), w.version
    r = w.execute("pick", ["Apple_1"], cancel=lambda: True)
    assert not r.success and "cancelled" in r.message
    calls = {"n": 0}

    def later() -> bool:
        calls["n"] += 1
        return calls["n"] > 4                   # after a few steps

    r = w.execute("move_to", ["Counter_1"], cancel=later)
    assert not r.success and "cancelled" in r.message
    assert w.truth() == before and w.version == version
    assert w.execute("move_to", ["Counter_1"], cancel=lambda: False).success


def test_broken_callbacks_do_not_break_a_skill(world):
    def bad_feedback(*_a):
        raise RuntimeError("feedback channel gone")

    def bad_cancel():
        raise RuntimeError("no cancel state")

    assert world.execute("pick", ["Apple_1"], feedback=bad_feedback, cancel=bad_cancel).success


def test_world_changed_while_the_skill_ran_is_checked_again():
    w = make_world(skill_duration_s=0.3, skill_steps=6)
    result: list[SkillResult] = []
    t = threading.Thread(target=lambda: result.append(w.execute("pick", ["Apple_1"])))
    t.start()
    time.sleep(0.1)
    w.apply_setup({"remove": ["Apple_1"]})
    t.join(5)
    assert not result[0].success and "changed" in result[0].message and "Apple_1" in result[0].message
    assert w.scene.robot.holding is None


# --------------------------------------------------------------------------- versions, frame, truth
def test_versions_and_frame_cache(world):
    assert world.version == 1
    f1 = world.frame()
    assert f1.world_version == 1 and world.frame() is f1
    fails(world, "pick", "Mug_1")
    assert world.version == 1 and world.frame() is f1
    ok(world, "pick", "Apple_1")
    assert world.version == 2
    f2 = world.frame()
    assert f2 is not f1 and f2.world_version == 2
    world.apply_setup({"robot": {"pose": [0.1, 0.0, 0.0]}})
    assert world.version == 3 and world.frame().world_version == 3
    world.load(parse_scene(copy.deepcopy(DOC), "again"))
    assert world.version == 4


def test_truth_uses_benchmark_field_names(world):
    ok(world, "pick", "Apple_1")
    t = world.truth()
    assert t["name"] == "world_test" and t["version"] == world.version
    assert t["robot"] == {"pose": [0.0, 0.0, 0.0], "reach": 1.1, "holding": "Apple_1"}
    apple = next(o for o in t["objects"] if o["id"] == "Apple_1")
    assert set(apple) >= {"id", "type", "shape", "center", "size", "properties", "state"}
    assert t["people"][0]["name"] == "Ana" and t["people"][0]["state"]["looking_at_robot"] is True
    again = parse_scene(t, "truth")                                     # a valid scene document
    assert again.robot.holding == "Apple_1"
    t["objects"].clear()                                                # a copy, not the world
    assert world.scene.get("Apple_1") is not None


def test_versions_may_count_on_from_a_first_version():
    # sim_world starts at its start time in ms: a restarted simulator never goes below what it
    # published before, which the scene graph and the checks compare against
    w = SimWorld(first_version=1_700_000_000_000)
    assert w.version == 1_700_000_000_000 and w.frame().world_version == w.version
    w.load(parse_scene(copy.deepcopy(DOC), "v"))
    assert w.version == 1_700_000_000_001
    for bad in (-1, 1.5, True, "7"):
        with pytest.raises(ValueError, match="first_version"):
            SimWorld(first_version=bad)


def test_empty_world_before_load():
    w = SimWorld()
    assert w.scene.name == "empty" and w.version == 0 and w.truth()["objects"] == []
    assert w.frame().labels == {}
    assert not w.execute("pick", ["Apple_1"]).success


def test_atomic_load_keeps_the_previous_world(world):
    before, version = world.truth(), world.version
    bad = copy.deepcopy(DOC)
    bad["objects"][1]["size"] = [0.08, -1, 0.08]
    with pytest.raises(SceneError, match=r"Apple_1\)\.size\[1\]"):
        world.load(bad)
    with pytest.raises(SceneError, match="Scene"):
        world.load(42)
    with pytest.raises(SceneError, match="no such scene file"):
        world.load_path("/nonexistent/where.scene.yaml")
    with pytest.raises(SceneError, match="Nope_1"):
        world.apply_setup({"objects": {"Nope_1": {"center": [0, 0, 0]}}})
    with pytest.raises(SceneError, match="holding"):
        world.apply_setup({"robot": {"holding": "Ghost_1"}})
    assert world.truth() == before and world.version == version


def test_atomic_load_when_the_world_cannot_be_built():
    class Broken(Renderer):
        fail = False

        def render(self, scene, world_version=0):
            if self.fail:
                raise RuntimeError("no GPU today")
            return super().render(scene, world_version)

    r = Broken()
    w = SimWorld(parse_scene(copy.deepcopy(DOC), "a"), renderer=r)
    before, version = w.truth(), w.version
    r.fail = True
    other = copy.deepcopy(DOC)
    other["name"] = "other"
    with pytest.raises(SceneError, match="cannot build the world: no GPU today"):
        w.load(other)
    assert w.truth() == before and w.version == version and w.scene.name == "world_test"


def test_apply_setup_resets_to_the_base_scene(world):
    ok(world, "pick", "Apple_1")
    world.apply_setup({"objects": {"Mug_1": {"center": [0.7, 0.6, 0.95]}}})          # reset=True
    s = world.scene
    assert s.robot.holding is None and s.object("Mug_1").center == (0.7, 0.6, 0.95)
    world.apply_setup({"robot": {"holding": "Knife_1"}}, reset=False)                # on top of it
    assert world.scene.object("Mug_1").center == (0.7, 0.6, 0.95)
    assert world.scene.robot.holding == "Knife_1"
    world.apply_setup(None)
    assert world.scene.object("Mug_1").center == (1.15, 0.7, 0.95) and world.scene.robot.holding is None
    assert world.base_scene.name == "world_test" and world.base_scene.robot.holding is None


def test_load_path_by_scene_name():
    w = SimWorld()
    s = w.load_path("kitchen")
    assert s.name == "kitchen" and w.base_scene is s and w.version == 1


def test_concurrent_frames_and_skills_stay_consistent():
    w = make_world()
    errors: list[BaseException] = []

    def frames():
        try:
            for _ in range(15):
                f = w.frame()
                assert f.instance.shape == (480, 640)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    def skills():
        try:
            for _ in range(5):
                assert w.execute("pick", ["Apple_1"]).success
                assert w.execute("place", ["Counter_1"]).success
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=frames), threading.Thread(target=frames), threading.Thread(target=skills)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert w.version == 1 + 10 and w.frame().world_version == w.version


@pytest.mark.parametrize("kw", [{"skill_duration_s": -1}, {"handover_distance_m": float("nan")},
                                {"approach_standoff_m": float("inf")}, {"skill_steps": 0}, {"skill_duration_s": "1"}])
def test_bad_parameters_are_refused(kw):
    with pytest.raises(ValueError, match=next(iter(kw))):
        SimWorld(**kw)
