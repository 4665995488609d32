"""The program flow manager with replayed LLM replies: outcomes, the four warnings and their
recovery, time limit, cancellation, concurrency of a turn's tool calls, events and tokens."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from raider_ros.agent.backends import make_llm
from raider_ros.agent.flow import AgentResult, ProgramFlowManager
from raider_ros.agent.llm import LLMError, LLMReply
from raider_ros.agent.prompt import IssuePrompt, PromptConfig
from raider_ros.common.token_count import count_tokens
from raider_ros.common.tool_contract import FunctionTools, ToolResult
from support.agent_world import kitchen_world, world_tools

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llm"


def agent(fixture_or_responses, tools=None, toolset="household", **kw):
    if isinstance(fixture_or_responses, str):
        llm = make_llm("scripted", fixture=FIXTURES / fixture_or_responses)
    else:
        llm = make_llm("scripted", responses=fixture_or_responses)
    return ProgramFlowManager(llm, tools or world_tools(kitchen_world()), IssuePrompt(toolset), **kw)


def run_logged(pfm, query, **kw):
    events = []
    res = pfm.run(query, on_event=lambda stage, payload: events.append((stage, payload)), **kw)
    return res, events


# --------------------------------------------------------------------------- outcomes
@pytest.mark.parametrize("query, issue, grounding, turns, calls", [
    ("pick(Apple)", "none", ["Apple_1"], 3, 5),
    ("Can you pick the mug?", "ambiguity", ["Mug_1", "Mug_2"], 2, 1),
    ("pick(Mug_2)", "unfeasibility", ["Mug_2"], 2, 2),
    ("slice the apple", "unfeasibility", ["Apple_1"], 3, 3),
    ("pick the mug behind the cereal box", "unfeasibility", ["Mug_1"], 2, 3),
])
def test_household_runs(query, issue, grounding, turns, calls):
    res = agent("household.yaml").run(query)
    assert res.status == "ok", res.error
    assert (res.issue, res.grounding, res.llm_turns, len(res.tool_calls)) == (issue, grounding, turns, calls)
    assert res.warnings == [] and res.explanation
    assert all(c.success for c in res.tool_calls)
    assert res.backend == "scripted:household" and res.method == "raider"
    json.dumps(res.to_dict())


def test_transcript_follows_the_text_protocol():
    res = agent("household.yaml").run("pick(Mug_2)")
    roles = [m["role"] for m in res.transcript]
    assert roles == ["system", "user", "assistant", "user", "user", "assistant"]
    assert res.transcript[0]["content"] == IssuePrompt("household").system
    assert res.transcript[1]["content"] == 'Query: "pick(Mug_2)"'
    dist = json.loads(res.transcript[3]["content"].split(" returned ", 1)[1])
    assert res.transcript[3]["content"].startswith('Call to tool dist_to_target with args ["Mug_2"] returned ')
    assert dist == {"target": "Mug_2", "distance_m": 1.6, "reach_m": 1.1, "within_reach": False}
    assert res.transcript[4]["content"] == "Call to tool robot_holding with args [] returned null"


# --------------------------------------------------------------------------- the four warnings
def test_warning_1_final_response_next_to_tool_calls():
    res = agent("household_warnings.yaml").run("open(Fridge)")
    assert [w.number for w in res.warnings] == [1]
    assert res.warnings[0].title == "made-up tool response" and res.warnings[0].turn == 1
    # the early final was set aside: the tools ran and the run went on to a later final
    assert res.status == "ok" and res.issue == "none" and res.llm_turns == 3
    assert [c.name for c in res.tool_calls] == ["get_obj_state", "robot_holding"]
    w_index = next(i for i, m in enumerate(res.transcript) if m["content"].startswith("WARNING 1"))
    assert res.transcript[w_index + 1]["content"].startswith("Call to tool get_obj_state")


def test_warning_2_made_up_tool_name():
    res = agent("household_warnings.yaml").run("pick(Knife)")
    assert [w.number for w in res.warnings] == [2]
    assert '"check_reachability"' in res.warnings[0].message and "dist_to_target" in res.warnings[0].message
    assert [c.name for c in res.tool_calls] == ["dist_to_target"]  # the made-up tool never ran
    assert (res.status, res.issue, res.grounding) == ("ok", "none", ["Knife_1"])


def test_warning_3_failed_call_and_wrong_arity():
    res = agent("household_warnings.yaml").run("pick(Banana)")
    assert [w.number for w in res.warnings] == [3, 3]
    failed, arity = res.warnings
    assert "Call to tool get_obj_state with args [\"Banana\"] failed: \"Banana not found" in failed.message
    assert '\\"closest\\"' in failed.message      # the tool's error data reaches the LLM (quoted)
    assert "dist_to_target takes 1 argument(s), got 0" in arity.message and "dist_to_target(target)" in arity.message
    assert [(c.name, c.success) for c in res.tool_calls] == [("get_obj_state", False), ("object_detection", True)]
    assert (res.status, res.issue) == ("ok", "unfeasibility")


def test_warning_4_missing_call_or_final_then_cut_off_final():
    res = agent("household_warnings.yaml").run("pick(Bowl)")
    assert [w.number for w in res.warnings] == [4, 4]
    assert "could not be read" not in res.warnings[0].message
    assert "cut off" in res.warnings[1].message
    assert (res.status, res.issue, res.llm_turns) == ("ok", "none", 4)


def test_warning_3_for_unreadable_call_and_broken_tools():
    def broken():
        raise RuntimeError("camera unplugged")
    tools = FunctionTools({"robot_holding": broken, "object_detection": lambda: ["Apple_1"]})
    pfm = agent(['call_tool{"tool": "robot_holding", "args": []}\ncall_tool{"tool": "object_detection", "args": [',
                 'call_tool{"tool": "object_detection", "args": []}',
                 '{"final_response": "none", "explanation": "ok", "grounding": []}'], tools=tools)
    res = pfm.run("pick(Apple)")
    assert [w.number for w in res.warnings] == [3, 3]
    assert "camera unplugged" in res.warnings[0].message
    assert "cut off" in res.warnings[1].message
    assert res.status == "ok"


def test_no_final_within_turn_limit_is_an_error():
    res = agent("household_warnings.yaml", max_turns=4).run("place(Apple, Bowl)")
    assert res.status == "error" and res.issue is None
    assert "no final response after 4 LLM turns" in res.error
    assert [w.number for w in res.warnings] == [4, 4, 4, 4]


# --------------------------------------------------------------------------- time limit, errors, cancel
def test_time_limit_with_slow_llm_keeps_what_was_gathered():
    turns = [{"text": 'call_tool{"tool": "object_detection", "args": []}', "delay_s": 0.4}] * 5
    pfm = agent(turns, time_limit_s=1.0)
    t0 = time.monotonic()
    res = pfm.run("pick(Apple)")
    took = time.monotonic() - t0
    assert res.status == "error" and "time limit of 1 s" in res.error
    assert res.llm_turns == 2 and len(res.tool_calls) == 2   # the third reply would end past the deadline
    assert took < 1.0 + 0.5
    assert res.transcript[-1]["content"].startswith("Call to tool object_detection")


class HangingLLM:
    """Ignores the deadline it is given."""
    name = "hanging"

    def complete(self, messages, *, deadline):
        time.sleep(5)
        return LLMReply("too late")


def test_llm_that_ignores_the_deadline_is_abandoned():
    pfm = ProgramFlowManager(HangingLLM(), world_tools(kitchen_world()), time_limit_s=0.5)
    t0 = time.monotonic()
    res = pfm.run("pick(Apple)")
    assert time.monotonic() - t0 < 0.5 + 0.5
    assert res.status == "error" and "time limit of 0.5 s" in res.error and "no answer from the LLM" in res.error


def test_tool_past_the_deadline():
    tools = world_tools(kitchen_world(), delays={"object_detection": 3.0})
    pfm = agent(['call_tool{"tool": "object_detection", "args": []}'], tools=tools, time_limit_s=0.6)
    t0 = time.monotonic()
    res = pfm.run("pick(Apple)")
    assert time.monotonic() - t0 < 0.6 + 0.5
    assert res.status == "error" and "time limit" in res.error


@pytest.mark.parametrize("llm_turn, expected", [
    ({"error": "HTTP 503 (server error): overloaded"}, "LLM backend scripted failed: HTTP 503 (server error): overloaded"),
])
def test_llm_error_ends_the_run_with_its_reason(llm_turn, expected):
    res = agent([llm_turn]).run("pick(Apple)")
    assert (res.status, res.error, res.llm_turns) == ("error", expected, 0)


class CrashingLLM:
    name = "crashing"

    def complete(self, messages, *, deadline):
        raise KeyError("choices")


def test_backend_bug_is_an_error_result_not_an_exception():
    res = ProgramFlowManager(CrashingLLM(), world_tools(kitchen_world())).run("pick(Apple)")
    assert res.status == "error" and "crashing failed: KeyError" in res.error


def test_empty_query():
    res = agent(["x"]).run("   ")
    assert res.status == "error" and "empty query" in res.error


def test_cancel_while_the_llm_thinks():
    pfm = agent([{"text": "slow", "delay_s": 5.0}])
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    t0 = time.monotonic()
    res = pfm.run("pick(Apple)", cancel=cancel)
    assert time.monotonic() - t0 < 2.0
    assert (res.status, res.error) == ("error", "cancelled")


def test_cancel_callable_between_turns():
    calls = []
    pfm = agent("household.yaml")
    res = pfm.run("pick(Apple)", on_event=lambda s, p: calls.append(s), cancel=lambda: calls.count("tool_result") >= 2)
    assert (res.status, res.error) == ("error", "cancelled")
    assert res.llm_turns == 1 and len(res.tool_calls) == 2      # the first turn's two calls, then no second turn


# --------------------------------------------------------------------------- concurrency and events
def test_one_turns_tool_calls_run_concurrently():
    tools = world_tools(kitchen_world(), delays={"dist_to_target": 0.3, "get_obj_state": 0.3})
    pfm = agent(['call_tool{"tool": "dist_to_target", "args": ["Apple_1"]}\n'
                 'call_tool{"tool": "get_obj_state", "args": ["Apple_1"]}',
                 '{"final_response": "none", "explanation": "ok", "grounding": ["Apple_1"]}'], tools=tools)
    res, events = run_logged(pfm, "pick(Apple)")
    assert res.status == "ok"
    kinds = [stage for stage, _ in events if stage in ("tool_call", "tool_result")]
    # both calls started before either finished: they overlapped
    assert kinds == ["tool_call", "tool_call", "tool_result", "tool_result"]
    # results still go back to the LLM in call order
    assert [c.name for c in res.tool_calls] == ["dist_to_target", "get_obj_state"]
    assert all(c.duration_s >= 0.29 for c in res.tool_calls)


def test_stage_events_from_headings_and_from_behaviour():
    res, events = run_logged(agent("household.yaml"), "pick(Apple)")
    stages = [s for s, _ in events if s in ("ground", "ask", "answer", "issue")]
    assert stages == ["ground", "ground", "ask", "answer", "issue"]
    issue = events[-1]
    assert issue[0] == "issue" and issue[1]["issue"] == "none" and issue[1]["grounding"] == ["Apple_1"]
    results = [p for s, p in events if s == "tool_result"]
    assert results[0]["name"] == "object_detection" and results[0]["success"] is True
    # no headings: a tool call means "answer", a final means "issue"
    res, events = run_logged(agent(['call_tool{"tool": "robot_holding", "args": []}',
                                    '{"final_response": "none", "explanation": "ok"}']), "pick(Apple)")
    assert [s for s, _ in events if s in ("ground", "ask", "answer", "issue")] == ["answer", "issue"]


def test_warning_events_and_a_broken_hook():
    seen = []

    def hook(stage, payload):
        seen.append(stage)
        raise RuntimeError("subscriber bug")
    res = agent("household_warnings.yaml").run("pick(Knife)", on_event=hook)
    assert res.status == "ok" and "warning" in seen


# --------------------------------------------------------------------------- tokens and misc
def test_tokens_from_usage_or_estimated():
    res = agent([{"text": '{"final_response": "none", "explanation": "ok"}',
                  "usage": {"prompt_tokens": 1234, "completion_tokens": 56}}]).run("pick(Apple)")
    assert (res.prompt_tokens, res.completion_tokens, res.tokens_estimated) == (1234, 56, False)
    reply = '{"final_response": "none", "explanation": "ok"}'
    res = agent([reply]).run("pick(Apple)")
    assert res.tokens_estimated
    assert res.completion_tokens == count_tokens(reply)
    system = IssuePrompt("household").system
    assert res.prompt_tokens > count_tokens(system) > 500


def test_objects_in_sight_in_first_message():
    pfm = ProgramFlowManager(make_llm("scripted", responses=['{"final_response": "none", "explanation": "ok"}']),
                             world_tools(kitchen_world()),
                             IssuePrompt("household", PromptConfig(include_objects_in_sight=True)))
    res = pfm.run("pick(Apple)", context="the red one")
    first = res.transcript[1]["content"]
    assert 'Additional information: "the red one"' in first
    assert 'Objects in sight: ["Apple_1", "Bowl_1", "Mug_1"' in first
    assert res.tool_calls[0].name == "object_detection" and res.tool_calls[0].turn == 0


def test_objects_in_sight_is_a_detector_setting_on_by_default():
    from raider_ros.agent.factory import DetectorSettings, build_detector
    assert DetectorSettings().include_objects_in_sight is True            # as in the paper
    for on in (True, False):
        det = build_detector(DetectorSettings(include_objects_in_sight=on, extra={"use_embeddings": False}),
                             world_tools(kitchen_world()))
        res = det.run("pick(Apple)")
        assert res.status == "ok", res.error
        assert ('Objects in sight: ["Apple_1"' in res.transcript[1]["content"]) is on
        assert (res.tool_calls[0].turn == 0) is on


def test_the_papers_final_format_takes_its_grounding_from_the_tool_calls():
    world = kitchen_world()
    world["people"] = [{"id": "Person_1", "name": "Adriana", "distance_m": 1.2,
                        "state": {"looking_at_robot": True, "hands_free": True}}]
    calls = ('call_tool{"tool": "dist_robot_to_obj", "args": ["apple"]}\n'
             'call_tool{"tool": "dist_between_objs", "args": ["Apple_1", "bowl"]}\n'
             'call_tool{"tool": "dist_robot_to_obj", "args": ["pear"]}\n'          # fails: not counted
             'call_tool{"tool": "dist_robot_to_human", "args": ["Adriana"]}')
    final = '{"final_response": "none", "explanation": "The apple can be handed over."}'
    pfm = ProgramFlowManager(make_llm("scripted", responses=[calls, final]), world_tools(world), IssuePrompt("assistive"))
    res = pfm.run("give the apple next to the bowl to Adriana")
    assert res.status == "ok" and res.issue == "none"
    assert res.grounding == ["Apple_1", "Bowl_1", "Person_1"]            # ids as resolved, people too
    pfm = ProgramFlowManager(make_llm("scripted", responses=[calls, final[:-1] + ', "grounding": []}']),
                             world_tools(world), IssuePrompt("assistive"))
    assert pfm.run("give the apple to Adriana").grounding == []          # given, even empty: kept
    # a relation name is no object argument
    calls = 'call_tool{"tool": "check_obj_relationship", "args": ["blocking", "apple"]}'
    pfm = ProgramFlowManager(make_llm("scripted", responses=[calls, final]), world_tools(world), IssuePrompt("household"))
    assert pfm.run("pick the apple").grounding == ["Apple_1"]


def test_native_tool_calls_use_the_same_path():
    pfm = agent([{"text": "Step 3 - ANSWER", "tool_calls": [{"tool": "dist_to_target", "args": ["Mug_1"]}]},
                 '{"final_response": "none", "explanation": "ok", "grounding": ["Mug_1"]}'])
    res = pfm.run("pick(Mug_1)")
    assert res.status == "ok" and [c.name for c in res.tool_calls] == ["dist_to_target"]
    assert res.transcript[2]["content"] == 'Step 3 - ANSWER\ncall_tool{"tool": "dist_to_target", "args": ["Mug_1"]}'


def test_assistive_plan_steps():
    world = {
        "robot": {"holding": None, "reach": 1.1},
        "objects": [{"id": "MedicineCounter_1", "type": "MedicineCounter", "distance_m": 2.0},
                    {"id": "Chair_1", "type": "Chair", "distance_m": 1.0},
                    {"id": "Medicine_1", "type": "Medicine", "distance_m": 1.4},
                    {"id": "Medicine_2", "type": "Medicine", "distance_m": 0.9},
                    {"id": "Plant_1", "type": "Plant", "distance_m": 1.5}],
        "people": [{"id": "Person_1", "name": None, "distance_m": 0.4,
                    "state": {"looking_at_robot": False, "hands_free": True}}],
        "relations": [["Chair_1", "blocking", "MedicineCounter_1"]],
    }
    pfm = agent("assistive.yaml", tools=world_tools(world), toolset="assistive")
    r = pfm.run("approach(MedicineCounter)")
    assert (r.issue, r.grounding) == ("unfeasibility", ["MedicineCounter_1"]) and "Chair_1" in r.explanation
    r = pfm.run("pick(adrianas_medicine, MedicineCounter)")
    assert (r.issue, r.grounding) == ("ambiguity", ["Medicine_1", "Medicine_2"])
    r = pfm.run("pick(adrianas_medicine, MedicineCounter)", context="It's the medicine closest to the plant")
    assert (r.issue, r.grounding, len(r.tool_calls)) == ("unfeasibility", ["Medicine_1"], 5)
    r = pfm.run("approach(adriana)")
    assert r.issue == "unfeasibility" and json.loads(r.tool_calls[0].result) == {"Person_1": None}
    world["robot"]["holding"] = "Medicine_1"
    world["people"][0]["name"] = "Adriana"
    pfm.tools = world_tools(world)
    r = pfm.run("handover(adrianas_medicine, adriana)")
    assert (r.status, r.issue, r.grounding) == ("ok", "unfeasibility", ["Medicine_1", "Person_1"])
    assert [c.name for c in r.tool_calls][2:] == ["detect_human_gaze", "human_hands_free", "dist_robot_to_human"]
    assert all(w == [] for w in [r.warnings])


def test_result_defaults_are_independent():
    a, b = AgentResult(), AgentResult()
    a.tool_calls.append(1)
    assert b.tool_calls == []


def test_scripted_backend_errors():
    with pytest.raises(ValueError, match="no scripts and no responses"):
        make_llm("scripted", fixture={"format": "raider-llm-script/1"})
    with pytest.raises(ValueError, match="cannot read fixture"):
        make_llm("scripted", fixture="/nonexistent/x.yaml")
    with pytest.raises(ValueError, match="format must be"):
        make_llm("scripted", fixture={"format": "other", "responses": ["x"]})
    with pytest.raises(ValueError, match=r"responses\[0\]"):
        make_llm("scripted", responses=[{"delay_s": 1}])
    llm = make_llm("scripted", fixture={"scripts": [{"query": "pick(A)", "turns": ["one"]}]})
    with pytest.raises(LLMError, match="has 1 turn"):
        llm.complete([{"role": "user", "content": "Query: pick(A)"}, {"role": "assistant", "content": "one"}],
                     deadline=time.monotonic() + 1)
    with pytest.raises(LLMError, match="no recorded reply"):
        llm.complete([{"role": "user", "content": "Query: other"}], deadline=time.monotonic() + 1)
    with pytest.raises(ValueError, match="unknown LLM backend 'nope'"):
        make_llm("nope")
    with pytest.raises(ValueError, match="bad settings for LLM backend 'scripted'"):
        make_llm("scripted", responses=["x"], colour="blue")


def test_tool_result_helpers():
    ok = ToolResult.ok({"a": 1})
    assert (ok.success, ok.text, ok.data) == (True, '{"a": 1}', {"a": 1})
    bad = ToolResult.fail("not found", {"error": "not found", "closest": ["Mug_1"]})
    assert (bad.success, bad.error, json.loads(bad.text)["closest"]) == (False, "not found", ["Mug_1"])


# --------------------------------------------------------------------------- dead tool backend
class _DeadTools(FunctionTools):
    """Every call answers as a ROS tool client does when the perception node is gone."""

    def __init__(self):
        super().__init__({})
        self.calls = 0

    def call(self, name, args, *, deadline):
        self.calls += 1
        return ToolResult.unavailable("perception service scene_graph/call_tool is not available")


def test_unavailable_tools_end_the_run_with_the_cause():
    tools = _DeadTools()
    res = agent("household.yaml", tools=tools).run("pick(Apple)")
    assert res.status == "error" and res.issue is None
    assert "scene_graph/call_tool is not available" in res.error
    assert res.llm_turns == 1 and tools.calls >= 1  # no second LLM turn after the tools died
