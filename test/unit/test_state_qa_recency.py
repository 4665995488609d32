"""History and recency in state QA: questions about the past read earlier summaries, the most
recent fact about an object wins across modules (a last sighting is labelled), and modules
whose summaries name the question's objects join the selection (at most three). No ROS; the
shared embedding model; the selector is a fake that picks fixed modules."""
from __future__ import annotations

import pytest

from raider_ros.agent.llm import LLMReply
from raider_ros.state_qa.answer import StateQA
from raider_ros.state_qa.rules import asks_first, asks_latest, is_past_question, object_timeline
from raider_ros.state_qa.summary import SummaryHistory
from support.state_qa_fakes import FixedSelector, S

T0 = 1000.0


def _history() -> SummaryHistory:
    h = SummaryHistory()
    h.add(S("world_model", T0, "Medicine_1 in view.", object__Medicine_1="medicine, in view, 1.20 m away"))
    h.add(S("world_model", T0 + 5, "Medicine_1 held.", object__Medicine_1="medicine, in my gripper"))
    h.add(S("world_model", T0 + 20, "Medicine_1 out of view.",
            object__Medicine_1="medicine, out of view (last seen less than 10 s ago)"))
    h.add(S("issue_detector", T0 + 1, "Check of approach(Counter_1): blocked by Chair_1.",
            last_query="approach(Counter_1)", verdict="unfeasibility (cannot be done as asked)",
            explanation="The path to Counter_1 is blocked by Chair_1."))
    h.add(S("issue_detector", T0 + 15, "Check of handover: no issue.", last_query="handover(medicine, adriana)",
            verdict="no issue (feasible)", explanation="No issue: the robot can hand over Medicine_1 to Person_1."))
    h.add(S("robot", T0 + 5, "Holding Medicine_1.", holding="Medicine_1", last_skill="pick(Medicine_1)"))
    h.add(S("robot", T0 + 18, "Gripper empty.", holding="nothing", last_skill="handover(Medicine_1, Person_1)",
            handed_to__Medicine_1="Person_1 (Adriana)"))
    h.add(S("people", T0 + 20, "Adriana in view.", person__Person_1="recognised as Adriana, in view"))
    return h


def test_question_words_past_first_latest():
    assert is_past_question("Why did you wait at the door?")
    assert is_past_question("What blocked you when you tried to leave?")
    assert not is_past_question("What are you holding?")
    assert asks_first("What went wrong at first?") and not asks_first("What went wrong?")
    assert asks_latest("What did you say last?") and not asks_latest("What did you say first and last?")


def test_object_timeline_most_recent_wins_and_last_sighting_is_stale():
    h = _history()
    rows = object_timeline(["Medicine_1"], h.latest_all().values(), h)
    by_module = {r.module: r for r in rows}
    assert by_module["world_model"].stale and not by_module["world_model"].newest
    # a last sighting tells about the last time the object was perceived (T0 + 5), not the stamp
    assert by_module["world_model"].time == pytest.approx(T0 + 5)
    assert by_module["robot"].newest and by_module["robot"].key == "handed_to:Medicine_1"
    assert by_module["robot"].time == pytest.approx(T0 + 18)
    # without a history the "last seen ... ago" of the value dates the sighting
    rows = object_timeline(["Medicine_1"], h.latest_all().values(), None)
    wm = next(r for r in rows if r.module == "world_model")
    assert wm.time == pytest.approx(T0 + 20 - 10)


def test_where_is_object_prefers_the_newest_module_and_labels_the_stale_one():
    qa = StateQA(selector=FixedSelector("world_model"))
    ans = qa.ask("Where is Medicine_1 at present?", _history(), now=T0 + 25)
    assert "robot" in ans.modules, ans
    assert "Person_1" in ans.answer and "handed" in ans.answer, ans.answer
    first = ans.facts[0]
    assert first.module == "robot" and first.key == "handed_to:Medicine_1"
    assert "robot" in ans.note                     # added for the object named, and said so
    if any(f.module == "world_model" for f in ans.facts):
        assert "last sighting" in ans.answer


def test_evidence_modules_never_exceed_three():
    qa = StateQA(selector=FixedSelector("world_model", "people"))
    ans = qa.ask("Where is Medicine_1 at present?", _history(), now=T0 + 25)
    assert len(set(ans.labels) | {m for m in ("robot", "issue_detector") if m in ans.note}) <= 3
    assert ans.note.count(",") == 0              # one module added: world_model + people + 1


def test_past_question_reads_the_earlier_check():
    qa = StateQA(selector=FixedSelector("issue_detector"))
    h = _history()
    ans = qa.ask("What blocked the path to Counter_1 when you first checked it?", h, now=T0 + 25)
    assert "Chair_1" in ans.answer, ans.answer
    assert "Earlier" in ans.answer
    # the same question in the present tense reads only the latest check
    ans = qa.ask("What does your latest check say?", h, now=T0 + 25)
    assert "Chair_1" not in ans.answer


def test_absent_thing_in_a_past_question_says_so_then_what_happened():
    qa = StateQA(selector=FixedSelector("issue_detector"))
    ans = qa.ask("Why did you stop at the microwave?", _history(), now=T0 + 25)
    assert ans.answer.startswith("I don't know of any microwave"), ans.answer
    assert "Chair_1" in ans.answer or "Medicine_1" in ans.answer


class RecordingLLM:
    name = "fake:recording"

    def __init__(self):
        self.calls = []

    def complete(self, messages, *, deadline):
        self.calls.append(messages)
        return LLMReply("Thought: ok\nFinal answer: Chair_1 blocked the path.", 10, 5)


def test_llm_prompt_holds_earlier_contexts_and_object_facts():
    llm = RecordingLLM()
    qa = StateQA(llm=llm, selector=FixedSelector("issue_detector"))
    ans = qa.ask("Why did you stop on the way to Counter_1?", _history(), now=T0 + 25)
    user = llm.calls[0][1]["content"]
    assert "Earlier context" in user and "blocked by Chair_1" in user
    assert any(s.stamp == T0 + 1 for s in ans.evidence)
    llm2 = RecordingLLM()
    StateQA(llm=llm2, selector=FixedSelector("world_model")).ask("Where is Medicine_1?", _history(), now=T0 + 25)
    user = llm2.calls[0][1]["content"]
    assert "What my modules report about Medicine_1" in user and "last sighting" in user and "(most recent)" in user
