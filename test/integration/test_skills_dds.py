"""Every skill through the execute_skill action over DDS (sim_world in its own process): each
one's success and each failure reason, with feedback, and the world unchanged by a failure."""
from __future__ import annotations

import threading

import pytest
import yaml

from raider_ros.action import ExecuteSkill
from raider_ros.ros.graph import NodeGraph
from support.graph import GraphClient
from support.world_doc import DOC

CEREAL_IN_FRONT = "objects: {CerealBox_1: {center: [0.63, 0.27, 1.05], size: [0.03, 0.2, 0.3]}}"
NOT_LOOKING = "people: {Person_1: {state: {looking_at_robot: false}}}"
HANDS_BUSY = "people: {Person_1: {state: {hands_free: false}}}"

# (setup applied after a reset, steps: (skill, args, succeeds, words the message must contain))
SCENARIOS = {
    "pick_place_on_top": ("", [("pick", ["Apple_1"], True, ["Apple_1"]), ("place", ["Counter_1"], True, ["Counter_1"])]),
    "place_inside_container": ("", [("pick", ["Apple_1"], True, []), ("place", ["Cup_1"], True, ["Cup_1"])]),
    "open_close_toggle": ("", [("open", ["Microwave_1"], True, []), ("close", ["Microwave_1"], True, []),
                               ("turn_on", ["Microwave_1"], True, []), ("turn_off", ["Microwave_1"], True, [])]),
    "slice_with_knife": ("", [("pick", ["Knife_1"], True, []), ("slice", ["Apple_1"], True, ["Knife_1"])]),
    "move_to_and_handover": ("", [("pick", ["Apple_1"], True, []), ("move_to", ["Person_1"], True, ["Person_1"]),
                                  ("handover", ["apple", "Ana"], True, ["Apple_1"])]),
    "unknown_object_lists_closest": ("", [("pick", ["Appel_1"], False, ["Appel_1", "closest", "Apple_1"])]),
    "out_of_reach": ("", [("pick", ["Mug_1"], False, ["Mug_1", "out of reach", "1.10 m"])]),
    "hand_full": ("", [("pick", ["Knife_1"], True, []), ("pick", ["Apple_1"], False, ["hand is full", "Knife_1"])]),
    "hand_empty": ("", [("place", ["Counter_1"], False, ["not holding anything"])]),
    "door_closed": ("robot: {pose: [1.8, 0.0, 0.0]}", [("pick", ["Milk_1"], False, ["Milk_1", "Fridge_1", "closed"])]),
    "not_pickupable": ("", [("pick", ["Counter_1"], False, ["Counter_1", "not pickupable"])]),
    "not_openable": ("", [("open", ["Apple_1"], False, ["not openable"])]),
    "not_toggleable": ("", [("turn_on", ["Apple_1"], False, ["not toggleable"])]),
    "not_sliceable": ("", [("pick", ["Knife_1"], True, []), ("slice", ["Cup_1"], False, ["not sliceable"])]),
    "already_closed_and_off": ("", [("close", ["Microwave_1"], False, ["already closed"]),
                                    ("turn_off", ["Microwave_1"], False, ["already off"])]),
    "already_sliced": ("{robot: {holding: Knife_1}, objects: {Apple_1: {state: {sliced: true}}}}",
                       [("slice", ["Apple_1"], False, ["already sliced"])]),
    "slice_needs_knife": ("", [("slice", ["Apple_1"], False, ["knife"])]),
    "something_on_top": ("", [("pick", ["Plate_1"], False, ["Cup_1 is on top of it"])]),
    "view_blocked": (CEREAL_IN_FRONT, [("pick", ["Apple_1"], False, ["CerealBox_1", "blocks the way"])]),
    "path_blocked": ("", [("move_to", ["Fridge_1"], False, ["path", "blocked", "Fridge_1"])]),
    "handover_too_far": ("", [("pick", ["Apple_1"], True, []), ("handover", ["Apple_1", "Person_1"], False, ["away"])]),
    "handover_not_looking": (NOT_LOOKING, [("pick", ["Apple_1"], True, []), ("move_to", ["Person_1"], True, []),
                                           ("handover", ["Apple_1", "Person_1"], False, ["not looking"])]),
    "handover_hands_busy": (HANDS_BUSY, [("pick", ["Apple_1"], True, []), ("move_to", ["Person_1"], True, []),
                                         ("handover", ["Apple_1", "Person_1"], False, ["hands are not free"])]),
    "unknown_skill": ("", [("fly", ["Apple_1"], False, ["unknown skill"])]),
}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    scene = tmp_path_factory.mktemp("scene") / "world_test.scene.yaml"
    scene.write_text(yaml.safe_dump(DOC))
    with NodeGraph(tmp_path_factory.mktemp("logs")) as graph:
        graph.start("sim_world", {"scene": str(scene), "skill_duration_s": 0.2})
        client = GraphClient(graph, name="skills_client")
        try:
            yield client
        finally:
            client.close()


def run_skill(client: GraphClient, skill: str, args: list[str]):
    ac = client.action_client(ExecuteSkill, "execute_skill")
    assert ac.wait_for_server(timeout_sec=30)
    feedback: list = []
    done = threading.Event()
    box: dict = {}

    def on_goal(f):
        f.result().get_result_async().add_done_callback(lambda r: (box.__setitem__("r", r.result().result), done.set()))

    ac.send_goal_async(ExecuteSkill.Goal(skill=skill, args=args),
                       feedback_callback=lambda m: feedback.append(m.feedback)).add_done_callback(on_goal)
    assert done.wait(30), f"{skill}{args}: no result"
    return box["r"], feedback


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_skill_over_dds(env, name):
    setup, steps = SCENARIOS[name]
    env.apply(setup, reset=True)
    for skill, args, succeeds, words in steps:
        before = env.truth()
        result, feedback = run_skill(env, skill, args)
        assert result.success is succeeds, f"{skill}{args}: {result.message}"
        for w in words:
            assert w.lower() in result.message.lower(), f"{w!r} not in {result.message!r}"
        if succeeds:
            assert feedback and {f.stage for f in feedback} >= {"checking"}
        else:
            after = env.truth()
            before.pop("version", None), after.pop("version", None)
            assert after == before, f"the failed {skill} changed the world"
    assert env.truth()["robot"]["holding"] in (None, *(o["id"] for o in env.truth()["objects"]))
