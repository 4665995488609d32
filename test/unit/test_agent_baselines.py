"""Baselines of §4.2.1: Precond (Table B.3 checks through the tools) and LLMVisualObs
(tool-free prompt with the whole scene described)."""
from __future__ import annotations

import pytest

from raider_ros.agent.backends import make_llm
from raider_ros.agent.baselines import METHODS, LLMVisualObs, Precond, describe_scene, make_method
from raider_ros.agent.flow import ProgramFlowManager
from support.agent_world import kitchen_world, world_tools


def precond(world=None):
    return make_method("precond", tools=world_tools(world or kitchen_world()))


@pytest.mark.parametrize("query, issue, explanation, grounding", [
    ("pick(Apple)", "none", "Apple_1 is present; the gripper is empty.", ["Apple_1"]),
    ("pick(Banana)", "unfeasibility", "Banana is not in view and not in the gripper.", []),
    ("pick(Apple, Fridge)", "unfeasibility", "Fridge_1 is closed.", ["Apple_1", "Fridge_1"]),
    ("pick(Apple, Table)", "none", "Apple_1 is present; the gripper is empty.", ["Apple_1", "Table_1"]),
    ("open(Fridge)", "none", "Fridge_1 is present; the gripper is empty; Fridge_1 is openable; Fridge_1 is closed.",
     ["Fridge_1"]),
    ("close(Fridge)", "unfeasibility", "Fridge_1 is not open.", ["Fridge_1"]),
    ("turn_on(Fridge)", "unfeasibility", "Fridge_1 is not toggleable.", ["Fridge_1"]),
    ("slice(Apple)", "unfeasibility", "The robot is not holding a Knife (it holds nothing).", ["Apple_1"]),
    ("place(Mug, Bowl)", "unfeasibility", "The robot is not holding Mug_1 (it holds nothing).", ["Mug_1"]),
])
def test_precond_checks(query, issue, explanation, grounding):
    res = precond().run(query)
    assert (res.status, res.issue, res.explanation, res.grounding) == ("ok", issue, explanation, grounding)
    assert res.method == "precond" and res.backend == "precond (no LLM)" and res.llm_turns == 0


def test_precond_with_an_object_in_the_gripper():
    world = kitchen_world()
    world["robot"]["holding"] = "Knife_1"
    p = precond(world)
    r = p.run("slice(Apple)")
    assert r.issue == "none" and "holding a Knife (Knife_1)" in r.explanation and "not sliced" in r.explanation
    assert p.run("pick(Apple)").explanation == "The robot is already holding Knife_1."
    r = p.run("place(Knife, Table)")   # the held object counts as present
    assert (r.issue, r.grounding) == ("none", ["Knife_1", "Table_1"])


@pytest.mark.parametrize("query, why", [
    ("Can you pick the apple to the left of the bowl?", "unsupported query"),
    ("approach(Fridge)", "unsupported action 'approach'"),
    ("pick()", "pick takes 1..2 argument(s)"),
    ("", "unsupported query"),
])
def test_precond_reports_what_it_cannot_handle(query, why):
    res = precond().run(query)
    assert res.status == "error" and why in res.error and res.issue is None


def test_precond_tool_failure_and_events():
    world = kitchen_world()
    tools = world_tools(world)
    tools.functions["get_obj_properties"] = lambda obj: (_ for _ in ()).throw(RuntimeError("no properties"))
    events = []
    res = Precond(tools).run("open(Fridge)", on_event=lambda s, p: events.append(s))
    assert res.status == "error" and "get_obj_properties" in res.error and "no properties" in res.error
    assert events.count("tool_call") == events.count("tool_result") == len(res.tool_calls) == 3


def test_describe_scene_from_simple_and_snapshot_graphs():
    text = describe_scene(kitchen_world())
    for part in ("Apple_1 (Apple; not sliced)", "Fridge_1 (Fridge; closed)", "Mug_1 (Mug; dirty)",
                 "CerealBox_1 is blocking Mug_1", "The robot's gripper is empty"):
        assert part in text
    snapshot = {
        "frame": 3, "stamp": 1.0,
        "nodes": [
            {"id": "robot", "kind": "robot", "type": "Robot", "visible": True, "holding": "Egg_1"},
            {"id": "Egg_1", "kind": "object", "type": "Egg", "visible": False, "held": True, "state": {"cooked": False}},
            {"id": "Pan_1", "kind": "object", "type": "Pan", "visible": True, "state": {"clean": True}},
            {"id": "Cup_1", "kind": "object", "type": "Cup", "visible": False, "state": {}},
            {"id": "Person_1", "kind": "person", "type": "Person", "visible": True, "name": "Adriana",
             "looking_at_robot": False, "hands_free": True},
        ],
        "edges": [{"subject": "robot", "relation": "holding", "object": "Egg_1", "evidence": {}},
                  {"subject": "Pan_1", "relation": "near", "object": "Person_1", "evidence": {"gap_m": 0.1}},
                  {"subject": "Cup_1", "relation": "on top of", "object": "Pan_1", "evidence": {}}],
    }
    text = describe_scene(snapshot)
    assert "Egg_1 (Egg; raw)" in text and "Pan_1 (Pan; clean)" in text
    assert "Person_1 (person, Adriana; not looking at the robot, hands free)" in text
    assert "Pan_1 is near Person_1" in text and "Egg_1 is in the robot's gripper" in text
    assert "Cup_1" not in text and "holding" not in text   # out of sight; gripper said once
    assert describe_scene({"objects": []}).startswith("Nothing is in view")


def test_llm_visual_obs_prompt_and_run():
    llm = make_llm("scripted", responses=[
        'Step 1 - GROUND: Mug_1 and Mug_2 both match.\n'
        '{"final_response": "ambiguity", "explanation": "two mugs", "grounding": ["Mug_1", "Mug_2"]}'])
    method = make_method("llm_visual_obs", llm=llm, scene_graph=kitchen_world)   # a callable source
    assert isinstance(method, LLMVisualObs)
    res = method.run("pick the mug")
    assert (res.status, res.issue, res.grounding, res.method) == ("ok", "ambiguity", ["Mug_1", "Mug_2"], "llm_visual_obs")
    system, user = res.transcript[0]["content"], res.transcript[1]["content"]
    assert "call_tool" not in system and "# Tools" not in system
    assert user.startswith('Query: "pick the mug"\nScene observation: "Apple_1 (Apple; not sliced).')
    assert res.tool_calls == []


def test_llm_visual_obs_tool_call_is_a_made_up_tool():
    llm = make_llm("scripted", responses=['call_tool{"tool": "dist_to_target", "args": ["Mug_1"]}',
                                          '{"final_response": "none", "explanation": "ok"}'])
    res = LLMVisualObs(llm).run("pick(Mug_1)", scene_graph=kitchen_world())
    assert [w.number for w in res.warnings] == [2] and res.issue == "none"


def test_llm_visual_obs_needs_a_graph():
    res = LLMVisualObs(make_llm("scripted", responses=["x"])).run("pick(Apple)")
    assert res.status == "error" and "needs a scene graph" in res.error


def test_make_method():
    assert METHODS == ("raider", "llm_visual_obs", "precond")
    llm = make_llm("scripted", responses=["x"])
    assert isinstance(make_method("raider", llm=llm, tools=world_tools(kitchen_world())), ProgramFlowManager)
    with pytest.raises(ValueError, match="unknown method 'vqa'"):
        make_method("vqa", llm=llm)
    with pytest.raises(ValueError, match="needs tools"):
        make_method("precond")
