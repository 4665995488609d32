"""Reading the conversation the rules reasoner is handed (tool list, robot facts, query and
context, tool results, failures, warnings) and asking for tool answers through it."""
import pytest

from raider_ros.agent.prompt import IssuePrompt
from raider_ros.agent.backends.rules.transcript import Observations, read_conversation
from raider_ros.common.tool_contract import tool_catalogue


def conv_of(*user_msgs, system=None, assistant=()):
    system = system if system is not None else IssuePrompt("household").system
    msgs = [{"role": "system", "content": system}, {"role": "user", "content": user_msgs[0]}]
    for a in assistant:
        msgs.append({"role": "assistant", "content": a})
    msgs += [{"role": "user", "content": u} for u in user_msgs[1:]]
    return read_conversation(msgs)


def test_the_tool_list_comes_from_the_system_prompt_and_the_catalogue():
    c = conv_of("Query: pick(Apple)")
    assert c.tools == set(IssuePrompt("household").toolset.names)
    assert not hasattr(c, "reach_m") and not hasattr(c, "handover_m")   # limits: configuration only
    a = conv_of("Query: pick(Apple)", system=IssuePrompt("assistive").system)
    assert "check_free_path" in a.tools and "get_obj_state" not in a.tools
    assert conv_of("pick(Apple)", system="You are a robot.").tools == set()
    assert conv_of("pick(Apple)", system="Use object_detection and robot_holding.").tools == \
        {"object_detection", "robot_holding"} < set(tool_catalogue())


def test_first_user_message_forms():
    p = IssuePrompt("household")
    c = conv_of(p.user_message("pick the mug", "It's the clean one.", objects=["Mug_1", "Mug_2"], holding="Knife_1"))
    assert (c.query, c.context, c.objects_hint, c.held_hint, c.held_known) == \
        ("pick the mug", ["It's the clean one."], ["Mug_1", "Mug_2"], "Knife_1", True)
    assert not conv_of(p.user_message("pick the mug")).held_known
    assert conv_of(p.user_message("pick the mug", holding="none")).held_known
    c = conv_of('pick adrianas_medicine medicine_counter. "It\'s the medicine that is closest to the plant."')
    assert c.query == "pick adrianas_medicine medicine_counter"
    assert c.context == ["It's the medicine that is closest to the plant."]
    c = conv_of("approach adriana_user\nI am Adriana.")
    assert (c.query, c.context) == ("approach adriana_user", ["I am Adriana."])


def test_tool_results_in_json_and_python_literals():
    c = conv_of(
        "Query: pick(Apple)",
        'Call to tool object_detection with args [] returned ["Apple_1", "Bowl_1"]',
        "Call to tool robot_holding with args [] returned None",
        "Call to tool dist_between_objs with args ['plant', 'medicine1'] returned 0.1",
        'Call to tool check_obj_relationship with args ["on the left of", "Bowl_1"] returned '
        '{"relationship": "on the left of", "object": "Bowl_1", "related": ["Apple_1"], "evidence": {}}',
        "Call to tool object_detection with args [] returned ['medicine1', 'plant']",   # a later answer wins
        assistant=['call_tool{"tool": "object_detection", "args": []}'])
    r = c.results
    assert r[("object_detection", ())].data == ["medicine1", "plant"]
    assert r[("robot_holding", ())].data is None and r[("robot_holding", ())].ok
    assert r[("dist_between_objs", ("plant", "medicine1"))].data == 0.1
    assert r[("check_obj_relationship", ("on the left of", "Bowl_1"))].data["related"] == ["Apple_1"]
    assert c.asked[("object_detection", ())] == 1 and c.turns == 1


def test_failures_inside_warnings_and_closest_suggestions():
    p = IssuePrompt("household")
    _, warn3 = p.warning(3, expected="dist_to_target(target)", detail=p.tool_message(
        "dist_to_target", ["Mug_01"], "not found: nothing matches 'Mug_01'; closest: Mug_1, Mug_2", failed=True) + ".")
    _, warn2 = p.warning(2, tool="get_weather", tools="object_detection, robot_holding")
    c = conv_of("Query: pick(Mug)", warn3, warn2)
    obs = c.results[("dist_to_target", ("Mug_01",))]
    assert not obs.ok and obs.closest == ["Mug_1", "Mug_2"] and obs.failed_name == "Mug_01"
    assert [w.number for w in c.warnings] == [3, 2]
    assert "get_weather" in c.unavailable
    json_fail = conv_of("Query: x", 'Call to tool get_obj_state with args ["pear"] failed: '
                                    '{"error": "not found", "query": "pear", "closest": ["Apple_1"]}')
    assert json_fail.results[("get_obj_state", ("pear",))].closest == ["Apple_1"]


def test_observations_retry_with_the_suggested_id_and_give_up_after_two_asks():
    fail = "Call to tool dist_to_target with args [\"Mug_01\"] failed: not found: nothing matches 'Mug_01'; closest: Mug_1"
    c = conv_of("Query: pick(Mug)", fail)
    obs = Observations(c)
    a = obs.get("dist_to_target", "Mug_01")
    assert a.pending and obs.pending == [("dist_to_target", ("Mug_1",))]

    ok = 'Call to tool dist_to_target with args ["Mug_1"] returned {"target": "Mug_1", "distance_m": 0.5}'
    obs = Observations(conv_of("Query: pick(Mug)", fail, ok))
    assert obs.get("dist_to_target", "Mug_01").data["distance_m"] == 0.5

    call = 'call_tool{"tool": "get_obj_state", "args": ["Mug_1"]}'
    obs = Observations(conv_of("Query: pick(Mug)", assistant=[call]))
    assert obs.get("get_obj_state", "Mug_1").pending                 # asked once: ask again
    obs = Observations(conv_of("Query: pick(Mug)", assistant=[call, call]))
    assert obs.get("get_obj_state", "Mug_1").status == "failed"     # asked twice: give up
    obs = Observations(conv_of("Query: pick(Mug)"), final=True)
    assert obs.get("get_obj_state", "Mug_1").status == "failed" and not obs.pending
    assert Observations(conv_of("Query: x")).get("check_free_path", "Mug_1").status == "unavailable"


def test_malformed_messages_are_reported():
    with pytest.raises(ValueError, match="message 1"):
        read_conversation([{"role": "system", "content": "x"}, "not a message"])
