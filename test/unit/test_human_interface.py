"""Human-interface backends: the scripted person (matching, order, world changes, resolving
answers to ids, scenario validation) and the terminal person (timeouts, EOF)."""
from __future__ import annotations

import io
import os
import threading
import time

import pytest

from raider_ros.human.people import ScenarioError, ScriptedHuman, TerminalHuman, load_scenario


def scenario(**over):
    doc = {
        "format": "raider-scenario/1",
        "name": "t",
        "entries": [
            {"match": {"keywords": ["chair"], "any": ["move", "aside"]}, "answer": "Done.",
             "world": {"objects": {"Chair_1": {"center": [1, 2, 0.45]}}}},
            {"match": {"regex": "(?i)which (medicine|one)"}, "answer": "The one by the plant.", "means": "Medicine_1"},
            {"on": "say", "match": {"keywords": ["recognise"]}, "world": {"people": {"Person_1": {"name": "Ada"}}}},
            {"match": {"any": ["look"]}, "answer": "Looking.", "times": 2},
        ],
    }
    doc.update(over)
    return doc


# --------------------------------------------------------------------------- scripted
def test_answers_by_keywords_and_regex_with_world_changes_to_the_callback():
    applied = []
    h = ScriptedHuman(scenario(), apply_world_change=applied.append)
    assert h.ask("Which medicine should I pick?", 5) == "The one by the plant."
    assert h.ask("The chair is in my way. Could you move it aside?", 5) == "Done."
    assert applied == [{"objects": {"Chair_1": {"center": [1, 2, 0.45]}}}]
    assert h.pending_world_changes == []
    # an entry is used once unless `times` says otherwise
    assert h.ask("Could you move the chair aside again?", 5) is None
    assert h.unmatched == ["Could you move the chair aside again?"]
    assert [h.ask("Please look at me", 1), h.ask("look here", 1), h.ask("look!", 1)] == ["Looking.", "Looking.", None]


def test_say_entries_change_the_world_and_pending_changes_without_callback():
    h = ScriptedHuman(scenario())
    h.say("I cannot recognise the person in front of me.")
    h.say("Hello")
    assert h.take_world_changes() == [{"people": {"Person_1": {"name": "Ada"}}}]
    assert h.take_world_changes() == []
    assert [(x.kind, x.entry) for x in h.transcript] == [("say", 2), ("say", None)]


def test_world_changes_are_copies():
    h = ScriptedHuman(scenario())
    h.ask("move the chair aside", 1)
    change = h.take_world_changes()[0]
    change["objects"]["Chair_1"]["center"][0] = 99
    assert h.scenario.entries[0].world["objects"]["Chair_1"]["center"][0] == 1


def test_sequence_order_only_answers_the_next_entry():
    h = ScriptedHuman(scenario(order="sequence"))
    assert h.ask("Which medicine?", 1) is None            # entry 0 (the chair) comes first
    assert h.ask("move the chair aside", 1) == "Done."
    assert h.ask("Which medicine?", 1) == "The one by the plant."


def test_default_answer_and_remaining():
    h = ScriptedHuman(scenario(default_answer="I don't know."))
    assert h.ask("What time is it?", 1) == "I don't know."
    assert [e.index for e in h.remaining()] == [0, 1, 3]


def test_resolve_name_maps_an_answer_to_what_it_means():
    h = ScriptedHuman(scenario())
    assert h.resolve_name("The one by the plant.") == "Medicine_1"
    assert h.resolve_name("somewhere else") == "somewhere else"


def test_callback_errors_reach_the_caller():
    def bad(setup):
        raise ValueError("setup: objects.Chair_1: no object with id 'Chair_1'")

    h = ScriptedHuman(scenario(), apply_world_change=bad)
    with pytest.raises(ValueError, match="no object with id"):
        h.ask("move the chair aside", 1)


@pytest.mark.parametrize("patch,msg", [
    ({"format": "x/1"}, "format"),
    ({"order": "random"}, "order: expected any or sequence"),
    ({"entries": []}, "entries: expected a non-empty list"),
    ({"entries": [{"match": {}, "answer": "a"}]}, "entries[0].match: expected keywords"),
    ({"entries": [{"match": {"regex": "("}, "answer": "a"}]}, "not a valid regular expression"),
    ({"entries": [{"match": {"keywords": ["x"]}}]}, "entries[0].answer: an ask entry needs"),
    ({"entries": [{"match": {"keywords": ["x"]}, "answer": "a", "world": {"sky": 1}}]}, "entries[0].world.sky"),
    ({"entries": [{"match": {"keywords": ["x"]}, "answer": "a", "times": 0}]}, "times: expected a positive"),
    ({"entries": [{"match": {"keywords": ["x"]}, "answer": "a", "colour": 1}]}, "entries[0].colour: unknown key"),
    ({"entries": [{"on": "shout", "match": {"keywords": ["x"]}, "answer": "a"}]}, "expected ask or say"),
])
def test_bad_scenarios_name_the_field(patch, msg):
    with pytest.raises(ScenarioError) as err:
        load_scenario(scenario(**patch))
    assert msg in str(err.value)


def test_scenario_files(tmp_path):
    assert load_scenario("assistive_demo").scene == "assistive_room"
    assert load_scenario("kitchen_demo").scene == "kitchen_task"
    with pytest.raises(ScenarioError, match="no such scenario file"):
        load_scenario("nope")
    bad = tmp_path / "bad.yaml"
    bad.write_text("entries: [\n  {match: oops\n")
    with pytest.raises(ScenarioError, match=r"bad.yaml:\d+: not valid YAML"):
        load_scenario(bad)


# --------------------------------------------------------------------------- terminal
def test_terminal_human_reads_a_line_and_prints():
    out = io.StringIO()
    h = TerminalHuman(io.StringIO("It's in the drawer.\n"), out)
    h.say("Hello")
    answer = h.ask("Where is the knife?", 2.0)
    assert answer == "It's in the drawer."
    assert "ROBOT: Hello" in out.getvalue() and "ROBOT asks: Where is the knife?" in out.getvalue()
    assert h.ask("Anything else?", 1.0) is None          # end of input: no answer, at once


def test_terminal_human_times_out_and_drops_stale_lines():
    r, w = os.pipe()
    out = io.StringIO()
    with os.fdopen(r, "r") as rf, os.fdopen(w, "w") as wf:
        h = TerminalHuman(rf, out)
        t0 = time.monotonic()
        assert h.ask("Are you there?", 0.2) is None
        assert 0.15 < time.monotonic() - t0 < 2
        assert "no answer within 0.2 s" in out.getvalue()
        wf.write("late answer\n")
        wf.flush()
        time.sleep(0.1)
        threading.Timer(0.1, lambda: (wf.write("fresh answer\n"), wf.flush())).start()
        assert h.ask("Which one?", 2.0) == "fresh answer"
