"""Reading LLM replies: tool calls and final responses in the shapes real models write."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from raider_ros.agent.parsing import (loads_relaxed, parse_final_response, parse_reply, parse_stages,
                                      parse_tool_calls)


def calls(text):
    found, errors = parse_tool_calls(text)
    return [(c.tool, c.args) for c in found], errors


@pytest.mark.parametrize("text, expected", [
    ('call_tool{"tool": "object_detection", "args": []}', [("object_detection", [])]),
    ("call_tool{'tool': 'dist_to_target', 'args': ['Mug_1']}", [("dist_to_target", ["Mug_1"])]),
    # the paper's own prompt shape: bare keys and values
    ("call_tool{tool: check_obj_relationship, args: [on top of, Table_1]}",
     [("check_obj_relationship", ["on top of", "Table_1"])]),
    # markdown escapes, bold, code spans and fences
    ('call\\_tool{"tool": "dist\\_to\\_target", "args": ["Mug\\_2"]}', [("dist_to_target", ["Mug_2"])]),
    ('**call_tool{"tool": "robot_holding", "args": []}**', [("robot_holding", [])]),
    ('`call_tool{"tool": "get_obj_state", "args": ["Apple_1"]}`', [("get_obj_state", ["Apple_1"])]),
    ('```\ncall_tool{"tool": "robot_holding", "args": []}\n```', [("robot_holding", [])]),
    # function-call style, missing args, a string instead of a list, trailing comma
    ('call_tool(tool="robot_holding", args=[])', [("robot_holding", [])]),
    ('call_tool{"tool": "object_detection"}', [("object_detection", [])]),
    ('call_tool{"tool": "get_obj_properties", "args": "Mug_1",}', [("get_obj_properties", ["Mug_1"])]),
    ('call_tool{"tool": "object_detection()", "args": []}', [("object_detection", [])]),
])
def test_tool_call_variants(text, expected):
    found, errors = calls(text)
    assert found == expected and errors == []


def test_several_calls_inside_prose_keep_their_order():
    text = ("Step 3: Tool Calls - I will use call_tool{\"tool\": \"object_detection\", \"args\": []} to list "
            "the objects, then call_tool{\"tool\": \"dist_between_objs\", \"args\": [\"Plant_1\", \"Medicine_1\"]} "
            "and call_tool{\"tool\": \"dist_between_objs\", \"args\": [\"Plant_1\", \"Medicine_2\"]}.")
    found, errors = calls(text)
    assert found == [("object_detection", []), ("dist_between_objs", ["Plant_1", "Medicine_1"]),
                     ("dist_between_objs", ["Plant_1", "Medicine_2"])]
    assert errors == []


def test_prose_mention_of_call_tool_is_not_a_call():
    assert calls("I will use call_tool to check the distance next.") == ([], [])


@pytest.mark.parametrize("text, why", [
    ('call_tool{"tool": "dist_to_target", "args": ["Mug_1"', "cut off"),
    ('call_tool{"args": ["Mug_1"]}', "no tool name"),
    ('call_tool{"tool": "x" "args": []}', "could not be read"),
])
def test_broken_tool_calls_are_reported_not_raised(text, why):
    found, errors = calls(text)
    assert found == []
    assert len(errors) == 1 and why in errors[0]


@pytest.mark.parametrize("text, issue, grounding", [
    ('{"final_response": "none", "explanation": "fine", "grounding": ["Apple_1"]}', "none", ["Apple_1"]),
    ('Final response: {"final_response": "unfeasibility", "explanation": "too far"} That is all.',
     "unfeasibility", []),
    ('```json\n{\n  "final_response": "Ambiguity",\n  "explanation": "two mugs",\n'
     '  "grounding": ["Mug_1", "Mug_2"]\n}\n```', "ambiguity", ["Mug_1", "Mug_2"]),
    ("{'final_response': 'none', 'explanation': \"the robot's gripper is free\", 'grounding': 'Knife_1'}",
     "none", ["Knife_1"]),
    ('{"final\\_response": "unfeasibility", "explanation": "Adriana\\_user is Final response: not recognised"}',
     "unfeasibility", []),
    ('{"result": {"final_response": "unfeasible", "explanation": "blocked"}}', "unfeasibility", []),
    # a literal line break inside the explanation string (invalid JSON, common in model output)
    ('{"final_response": "unfeasibility", "explanation": "The medicine is\n0.6m away."}', "unfeasibility", []),
])
def test_final_response_variants(text, issue, grounding):
    final, error = parse_final_response(text)
    assert error is None
    assert final.issue == issue and final.grounding == grounding
    assert "\n" not in final.explanation
    assert final.grounding_given == ("grounding" in text)     # the paper's format has none


def test_an_empty_grounding_is_still_a_grounding():
    final, _ = parse_final_response('{"final_response": "unfeasibility", "explanation": "no pear", "grounding": []}')
    assert final.grounding == [] and final.grounding_given


def test_last_valid_final_wins_and_prose_braces_are_ignored():
    text = ('I will call {obj} for each. First guess {"final_response": "none", "explanation": "a"}; '
            'on reflection {"final_response": "ambiguity", "explanation": "b", "grounding": ["Mug_1", "Mug_2"]}')
    final, error = parse_final_response(text)
    assert (final.issue, final.explanation, error) == ("ambiguity", "b", None)


@pytest.mark.parametrize("text, why", [
    ('{"final_response": "unfeasibility", "explanation": "The mug is', "cut off"),
    ('{"final_response": "maybe", "explanation": "x"}', "must be one of"),
    ('{"final_response": "none", "explanation": }', "not valid JSON"),
    ("final_response: none, explanation: fine", "no JSON object"),
])
def test_malformed_final_is_a_clear_failure(text, why):
    final, error = parse_final_response(text)
    assert final is None and why in error


def test_final_inside_tool_call_text_is_not_mistaken():
    reply = parse_reply('call_tool{"tool": "object_detection", "args": []}')
    assert reply.final is None and reply.final_error is None and len(reply.tool_calls) == 1


def test_reply_with_calls_and_final_reports_both():
    reply = parse_reply('call_tool{"tool": "robot_holding", "args": []}\n'
                        '{"final_response": "none", "explanation": "ok"}')
    assert [c.tool for c in reply.tool_calls] == ["robot_holding"]
    assert reply.final.issue == "none"


def test_stages_from_headings_in_order():
    text = ("Step 1: Instance Grounding: - the counter. Step 2: Question Generation: - is the path free? "
            "Step 3: Tool Calls - Information Gathering: call_tool{\"tool\": \"check_free_path\", \"args\": [\"X\"]}")
    assert [s for s, _ in parse_stages(text)] == ["ground", "ask", "answer"]
    text = "**Step 1 - GROUND**\nfoo\nStep 4: Iterate Step 2 and Step 3\n\nBased on this\nStep 5: Decision Making\n{}"
    assert [s for s, _ in parse_stages(text)] == ["ground", "issue"]
    assert [s for s, _ in parse_stages("GROUND: x\nASK: y\nANSWER: z\nISSUE: w")] == ["ground", "ask", "answer", "issue"]
    assert parse_stages("no headings here") == []


def test_relaxed_json_reader():
    assert loads_relaxed("{tool: robot_holding, args: [], n: 3, f: 0.5, ok: True, x: None,}") == \
        {"tool": "robot_holding", "args": [], "n": 3, "f": 0.5, "ok": True, "x": None}
    assert loads_relaxed("[\u201cMug_1\u201d, 'it\\'s']") == ["Mug_1", "it's"]
    for bad in ("{a: }", "[1, 2", "{'a': 'b'} extra", "{" * 200):
        with pytest.raises(ValueError):
            loads_relaxed(bad)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list('{}[]()"\':,_\\ \nabcT01') + ["call_tool", "final_response", "none"]),
                max_size=80).map("".join))
def test_parser_never_raises(text):
    reply = parse_reply(text)
    assert isinstance(reply.tool_calls, list) and isinstance(reply.call_errors, list)


@pytest.mark.parametrize("text", ["{" * 100_000, '{"final" ' * 11_000, '{"a": "' * 14_000, "{" * 50_000 + "}" * 50_000])
def test_a_reply_of_unbalanced_braces_is_read_in_bounded_work(text):
    """The final-response search scans a bounded number of characters over all candidate
    braces (it used to be quadratic: 5,000 braces took a minute); past the bound it says why."""
    r = parse_reply(text)
    assert r.final is None and "too many unbalanced braces" in r.final_error


def test_the_scan_bound_still_finds_a_final_response_after_many_small_groups():
    r = parse_reply("x {} " * 5_000 + '{"final_response": "ambiguity", "explanation": "two", "grounding": ["A_1", "A_2"]}')
    assert r.final is not None and r.final.issue == "ambiguity"
