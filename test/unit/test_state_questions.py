"""The demo's questions about the robot's state: read from data, printed with their modules
(a fake client stands in for ask_robot; no running ROS)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from raider_ros.ros import state_questions
from raider_ros.ros.state_questions import ask_about_state, demo_questions


def test_the_fig17_questions_come_from_the_data_file():
    assert demo_questions("assistive") == ["Why did you stop before the table?", "Where is the medicine now?",
                                           "Who did you give it to?"]
    assert demo_questions("no_such_task") == []


def test_answers_are_printed_with_their_modules(monkeypatch):
    said = []
    node = SimpleNamespace(create_client=lambda *a: "client")
    monkeypatch.setattr(state_questions, "wait_for_services", lambda *a, **k: None)
    monkeypatch.setattr(state_questions, "_call", lambda client, q, timeout, graph: SimpleNamespace(
        answer=f"answer to {q}", modules=["robot", "people"] if "who" in q.lower() else [], backend="rules (no LLM)"))
    out = ask_about_state(node, ["Who has it?", "Why?"], lambda who, text: said.append((who, text)))
    assert len(out) == 2
    assert said == [("ASK", "Who has it?"), ("ANSWER", "answer to Who has it?  [from: robot, people; rules (no LLM)]"),
                    ("ASK", "Why?"), ("ANSWER", "answer to Why?  [from: no module; rules (no LLM)]")]
    assert ask_about_state(node, [], lambda *a: pytest.fail("nothing to ask")) == []
