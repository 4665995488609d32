"""The rules reasoner when things go wrong or look different: failed tools, suggested ids,
warnings, tools that never answer, deadlines, bad input, answers written as Python literals
(the paper's appendix D transcripts), name-matched lists, receptacles, and the embedding
fallback of grounding."""
import math
import time

import pytest

from raider_ros.agent.backends import make_llm
from raider_ros.agent.flow import ProgramFlowManager
from raider_ros.agent.llm import LLMError
from raider_ros.agent.parsing import parse_reply
from raider_ros.agent.prompt import IssuePrompt, PromptConfig
from raider_ros.agent.backends.rules import RulesReasoner
from raider_ros.common.tool_contract import ToolExecutorBase, ToolResult
from raider_ros.common.paths import scenes_dir
from raider_ros.sim.scene import load_scene
from support.agent_world import world_tools
from support.fake_tools import SceneTools, drive

KITCHEN = scenes_dir() / "kitchen.scene.yaml"     # the project's galley kitchen


@pytest.fixture(scope="module")
def llm():
    return RulesReasoner(use_embeddings=False)


def final_of(text: str):
    f = parse_reply(text).final
    assert f is not None, text
    return f


def calls_of(text: str):
    return [(c.tool, c.args) for c in parse_reply(text).tool_calls]


def world(objects, holding=None, relations=(), people=()):
    return {"robot": {"holding": holding, "reach": 1.1}, "objects": list(objects), "people": list(people),
            "relations": [list(r) for r in relations]}


def obj(i, dist=0.6, props=("pickupable",), **state):
    return {"id": i, "type": i.rsplit("_", 1)[0], "distance_m": dist, "state": state, "properties": list(props)}


# --------------------------------------------------------------------------- protocol
def test_backend_registry_and_first_turn(llm):
    assert make_llm("rules", use_embeddings=False).name == "rules (no LLM)"
    with pytest.raises(ValueError, match="max_turns"):
        make_llm("rules", max_turns=0)
    with pytest.raises(ValueError, match="rules"):
        make_llm("rules", temperature=0.2)
    p = IssuePrompt("household")
    reply = llm.complete([{"role": "system", "content": p.system},
                          {"role": "user", "content": p.user_message("pick(Apple)")}], deadline=time.monotonic() + 5)
    assert reply.text.startswith("Step 1 - Ground")
    assert calls_of(reply.text) == [("object_detection", []), ("robot_holding", [])]
    assert parse_reply(reply.text).final is None


def test_bad_input_and_deadline_raise_llm_error(llm):
    p = IssuePrompt("household")
    good = [{"role": "system", "content": p.system}, {"role": "user", "content": "Query: pick(Apple)"}]
    with pytest.raises(LLMError, match="deadline"):
        llm.complete(good, deadline=time.monotonic() - 1)
    with pytest.raises(LLMError, match="message 1"):
        llm.complete([good[0], ["not", "a", "message"]], deadline=time.monotonic() + 5)
    with pytest.raises(LLMError, match="no query"):
        llm.complete([good[0], {"role": "user", "content": "   "}], deadline=time.monotonic() + 5)


def test_objects_listed_in_the_first_message_are_used_without_detection(llm):
    p = IssuePrompt("household", PromptConfig(include_objects_in_sight=True))
    tools = SceneTools(load_scene(KITCHEN), p.toolset.names)
    res = ProgramFlowManager(llm, tools, p, time_limit_s=30).run("pick(Apple)")
    assert res.status == "ok" and "Objects in sight: " in res.transcript[1]["content"]
    assert res.issue == "none" and res.grounding == ["Apple_1"]
    asked = [c.name for c in res.tool_calls if c.turn > 0]
    assert "object_detection" not in asked and "robot_holding" in asked


def test_without_any_tool_it_says_it_cannot_see(llm):
    reply = llm.complete([{"role": "system", "content": "You check robot actions."},
                          {"role": "user", "content": "Query: pick(Apple)"}], deadline=time.monotonic() + 5)
    f = final_of(reply.text)
    assert f.issue == "unfeasibility" and "cannot see" in f.explanation and not calls_of(reply.text)


def test_a_query_without_any_object_is_unfeasible(llm):
    p = IssuePrompt("household")
    final, _ = drive(llm, world_tools(world([obj("Apple_1")])), p.system, p.user_message("???"))
    assert final["issue"] == "unfeasibility"


# --------------------------------------------------------------------------- failures and warnings
class Renamed(ToolExecutorBase):
    """Scene tools whose state and property tools know objects only by lower-case ids."""

    def __init__(self, inner: SceneTools):
        self.inner, self.calls = inner, []
        self.ids = {i.lower(): i for i in inner.visible}

    def call(self, name, args, *, deadline=math.inf):
        self.calls.append((name, list(args)))
        if name in ("get_obj_properties", "get_obj_state"):
            if args[0] != args[0].lower():
                return ToolResult.fail(f"not found: nothing matches {args[0]!r}; closest: {args[0].lower()}",
                                       {"error": "not found", "query": args[0], "closest": [args[0].lower()]})
            args = [self.ids.get(args[0], args[0])]
        return self.inner.call(name, args, deadline=deadline)


def test_failed_call_is_retried_with_the_id_the_tool_suggests(llm):
    scene = load_scene(KITCHEN)
    tools = Renamed(SceneTools(scene))
    p = IssuePrompt("household")
    res = ProgramFlowManager(llm, tools, p, time_limit_s=30).run("pick(CounterTop)")
    assert res.status == "ok"
    assert [w.number for w in res.warnings] == [3]                     # the failed call came back as warning 3
    assert ("get_obj_properties", ["countertop_1"]) in tools.calls
    assert res.issue == "unfeasibility" and "not pickupable" in res.explanation


def test_missing_tool_falls_back_to_common_sense(llm):
    scene = load_scene(KITCHEN)
    names = [n for n in IssuePrompt("household").toolset.names if n != "get_obj_properties"]
    p = IssuePrompt("household")
    final, messages = drive(llm, SceneTools(scene, names), p.system, p.user_message("pick(CounterTop)"))
    assert any("get_obj_properties" in m["content"] and "failed" in m["content"] for m in messages)
    assert final["issue"] == "unfeasibility" and "pickupable" in final["explanation"]


def test_warning_2_removes_the_tool(llm):
    p = IssuePrompt("household")
    _, warn = p.warning(2, tool="get_obj_properties", tools="object_detection, robot_holding")
    msgs = [{"role": "system", "content": p.system}, {"role": "user", "content": p.user_message("pick(Apple)")},
            {"role": "assistant", "content": 'call_tool{"tool": "object_detection", "args": []}'},
            {"role": "user", "content": 'Call to tool object_detection with args [] returned ["Apple_1"]'},
            {"role": "user", "content": "Call to tool robot_holding with args [] returned null"},
            {"role": "assistant", "content": 'call_tool{"tool": "get_obj_properties", "args": ["Apple_1"]}'},
            {"role": "user", "content": warn}]
    reply = llm.complete(msgs, deadline=time.monotonic() + 5)
    assert calls_of(reply.text) and all(t != "get_obj_properties" for t, _ in calls_of(reply.text))


def test_tools_that_never_answer_do_not_loop_forever(llm):
    p = IssuePrompt("household")
    msgs = [{"role": "system", "content": p.system}, {"role": "user", "content": p.user_message("pick(Apple)")}]
    for turn in range(8):
        text = llm.complete(list(msgs), deadline=time.monotonic() + 5).text
        msgs.append({"role": "assistant", "content": text})
        if parse_reply(text).final is not None:
            break
        if turn == 0:   # detection answers, nothing else ever does
            msgs.append({"role": "user", "content": 'Call to tool object_detection with args [] returned ["Apple_1"]'})
            msgs.append({"role": "user", "content": "Call to tool robot_holding with args [] returned null"})
    f = final_of(msgs[-1]["content"])
    assert turn <= 3 and f.issue == "none" and "Not checked" in f.explanation and f.grounding == ["Apple_1"]


def test_turn_limit_forces_a_decision():
    llm = RulesReasoner(use_embeddings=False, max_turns=2)
    p = IssuePrompt("household")
    msgs = [{"role": "system", "content": p.system}, {"role": "user", "content": p.user_message("pick(Apple)")},
            {"role": "assistant", "content": 'call_tool{"tool": "object_detection", "args": []}'},
            {"role": "user", "content": 'Call to tool object_detection with args [] returned ["Apple_1", "Apple_2"]'}]
    f = final_of(llm.complete(msgs, deadline=time.monotonic() + 5).text)
    assert f.issue == "ambiguity" and f.grounding == ["Apple_1", "Apple_2"]


def test_answers_for_several_instances_are_read_per_instance(llm):
    class Listing(ToolExecutorBase):
        def __init__(self):
            self.inner = world_tools(world([obj("Mug_1", clean=True), obj("Mug_2", clean=False)]))

        def call(self, name, args, *, deadline=math.inf):
            if name == "get_obj_state":       # answer for every mug, as a name matching several does
                return ToolResult.ok([{"object": "Mug_1", "state": {"clean": True}},
                                      {"object": "Mug_2", "state": {"clean": False}}])
            return self.inner.call(name, args, deadline=deadline)

    p = IssuePrompt("household")
    final, _ = drive(llm, Listing(), p.system, p.user_message("Please pick up the dirty mug."))
    assert final["issue"] == "none" and final["grounding"] == ["Mug_2"]


# --------------------------------------------------------------------------- the paper's transcripts
class Literal(ToolExecutorBase):
    """Tools answering as the paper's appendix D shows: Python literals and bare values."""

    def __init__(self, answers):
        self.answers, self.calls = answers, []

    def call(self, name, args, *, deadline=math.inf):
        self.calls.append((name, list(args)))
        key = (name, *args)
        if key not in self.answers:
            return ToolResult.fail(f"no answer for {key}")
        value = self.answers[key]
        return ToolResult(True, repr(value), value)


def assistive(reach=0.5):
    return IssuePrompt("assistive", PromptConfig(facts={"reach_m": reach, "arms": "a single arm",
                                                          "handover_distance_m": 0.5}))


def test_appendix_d_pick_medicine_ambiguity_then_clarified_and_out_of_reach():
    # the robot of the assistive plan reaches 0.5 m: configuration, whatever the prompt says
    llm = RulesReasoner(use_embeddings=False, reach_m=0.5)
    p = assistive(reach=1.1)
    answers = {("object_detection",): ["medicine1", "medicine2", "plant", "bottle", "medicine_counter"],
               ("robot_holding",): None,
               ("dist_between_objs", "plant", "medicine1"): 0.1, ("dist_between_objs", "plant", "medicine2"): 0.2,
               ("dist_robot_to_obj", "medicine1"): 0.6}
    final, _ = drive(llm, Literal(answers), p.system, p.user_message("pick adrianas_medicine medicine_counter"))
    assert final["issue"] == "ambiguity" and set(final["grounding"]) == {"medicine1", "medicine2"}

    tools = Literal(answers)
    final, _ = drive(llm, tools, p.system, p.user_message("pick adrianas_medicine medicine_counter",
                                                          "It's the medicine that is closest to the plant."))
    assert final["issue"] == "unfeasibility" and final["grounding"] == ["medicine1"]
    assert "0.60 m" in final["explanation"] and "0.50 m" in final["explanation"]
    assert ("dist_between_objs", ["plant", "medicine1"]) in tools.calls


def test_appendix_d_approach_blocked_and_person_not_recognised(llm):
    p = assistive()
    tools = Literal({("object_detection",): ["medicine_counter"], ("robot_holding",): None,
                     ("check_free_path", "medicine_counter"): False})
    final, _ = drive(llm, tools, p.system, p.user_message("approach medicine_counter"))
    assert final["issue"] == "unfeasibility" and "path" in final["explanation"]

    tools = Literal({("object_detection",): [], ("robot_holding",): None,
                     ("recognize_humans",): {"Person_1": None}, ("check_humans_around",): ["Person_1"],
                     ("check_free_path", "Person_1"): True})
    final, _ = drive(llm, tools, p.system, p.user_message("approach adriana_user"))
    assert final["issue"] == "unfeasibility" and "Adriana" in final["explanation"]
    final, _ = drive(llm, tools, p.system, p.user_message("approach adriana_user", "I am Adriana."))
    assert final["issue"] == "none" and final["grounding"] == ["Person_1"]


def test_names_listed_by_recognition_are_people(llm):
    p = assistive()
    tools = Literal({("object_detection",): [], ("robot_holding",): None, ("recognize_humans",): ["Adriana"],
                     ("check_humans_around",): ["Adriana"], ("check_free_path", "Adriana"): True})
    final, _ = drive(llm, tools, p.system, p.user_message("approach adriana_user"))
    assert final["issue"] == "none" and final["grounding"] == ["Adriana"]
    tools = Literal({("object_detection",): [], ("robot_holding",): None, ("recognize_humans",): ["-1"],
                     ("check_humans_around",): ["-1"]})
    final, _ = drive(llm, tools, p.system, p.user_message("approach adriana_user"))
    assert final["issue"] == "unfeasibility" and "not recognised" in final["explanation"]


def test_appendix_d_handover_person_not_looking(llm):
    p = assistive()
    tools = Literal({("object_detection",): ["plant"], ("robot_holding",): "medicine",
                     ("recognize_humans",): {"Person_1": "Adriana"}, ("check_humans_around",): ["Person_1"],
                     ("detect_human_gaze", "Person_1"): False, ("human_hands_free", "Person_1"): True,
                     ("dist_robot_to_human", "Person_1"): 0.4})
    final, _ = drive(llm, tools, p.system, p.user_message("handover adrianas_medicine adriana_user"))
    assert final["issue"] == "unfeasibility" and "not looking" in final["explanation"]
    assert final["grounding"] == ["medicine", "Person_1"]


def test_user_information_settles_a_personal_reference(llm):
    p = IssuePrompt("preferences")
    w = world([obj("Apple_1"), obj("Banana_1")])
    w["user_info"] = ["The user's favourite fruit is the banana."]
    final, messages = drive(llm, world_tools(w), p.system, p.user_message("Please pick up my favourite fruit."))
    assert final["issue"] == "none" and final["grounding"] == ["Banana_1"]
    assert any("retrieve_user_information" in m["content"] for m in messages if m["role"] == "assistant")
    final, _ = drive(llm, world_tools(w), IssuePrompt("household").system, p.user_message("Please pick up my favourite fruit."))
    assert final["issue"] == "ambiguity"                    # no user information among the tools


# --------------------------------------------------------------------------- receptacles
def test_place_into_a_closed_or_occupied_receptacle(llm):
    p = IssuePrompt("household")
    w = world([obj("Mug_1"), obj("Microwave_1", props=("openable", "receptacle", "toggleable"), open=False),
               obj("CoffeeMachine_1", props=("receptacle", "toggleable")), obj("Cup_1")],
              holding="Mug_1", relations=[("Cup_1", "on top of", "CoffeeMachine_1")])
    final, _ = drive(llm, world_tools(w), p.system, p.user_message("Put the mug in the microwave."))
    assert final["issue"] == "unfeasibility" and "closed" in final["explanation"]
    final, _ = drive(llm, world_tools(w), p.system, p.user_message("place(Mug, CoffeeMachine)"))
    assert final["issue"] == "unfeasibility" and "Cup_1" in final["explanation"]
    w["relations"] = []
    final, _ = drive(llm, world_tools(w), p.system, p.user_message("place(Mug, CoffeeMachine)"))
    assert final["issue"] == "none" and final["grounding"] == ["Mug_1", "CoffeeMachine_1"]


def test_nothing_on_top_and_conditions_on_contents(llm):
    p = IssuePrompt("household")
    w = world([obj("Plate_1", props=("pickupable", "receptacle")), obj("Apple_1"), obj("Bowl_1", props=("pickupable", "receptacle"))],
              relations=[("Apple_1", "on top of", "Plate_1"), ("Apple_1", "inside", "Bowl_1")])
    final, _ = drive(llm, world_tools(w), p.system, p.user_message("pick(Plate)"))
    assert final["issue"] == "unfeasibility" and "Apple_1" in final["explanation"]
    final, _ = drive(llm, world_tools(w), p.system, p.user_message("pick the bowl if it doesn't contain anything"))
    assert final["issue"] == "unfeasibility" and "contains Apple_1" in final["explanation"]


def test_several_places_to_take_from_are_no_ambiguity(llm):
    p = IssuePrompt("household")
    w = world([obj("Apple_1"), obj("Table_1", props=("receptacle",)), obj("Table_2", props=("receptacle",))],
              relations=[("Apple_1", "on top of", "Table_2")])
    final, _ = drive(llm, world_tools(w), p.system, p.user_message("Pick the apple from the table."))
    assert final["issue"] == "none" and final["grounding"] == ["Apple_1"]


# --------------------------------------------------------------------------- embeddings
@pytest.mark.slow
def test_embedding_links_a_word_no_rule_knows():
    llm = RulesReasoner(use_embeddings=True, preload=False)
    p = IssuePrompt("household")
    w = world([obj("Car_1", props=("moveable",)), obj("Apple_1")])
    final, _ = drive(llm, world_tools(w), p.system, p.user_message("Please pick up the automobile."),
                     time_limit_s=120)
    assert final["grounding"] == ["Car_1"]
    assert final["issue"] == "unfeasibility" and "pickupable" in final["explanation"]
    final, _ = drive(llm, world_tools(w), p.system, p.user_message("pick(Pear)"), time_limit_s=120)
    assert final["issue"] == "unfeasibility" and final["grounding"] == []
