"""Why-questions prefer the facts that give a reason (explanations, errors, failures: `cause`
in facts.yaml) over the state around them (an object's distance at some earlier frame), and a
part of a reported object ("the fridge door", "the door of the fridge") names that object
instead of an absent thing - while a thing alone that no module reports is still "I don't
know of any". No ROS; the shared embedding model; a fixed selector."""
from __future__ import annotations

from raider_ros.state_qa.answer import StateQA
from raider_ros.state_qa.rules import asks_cause, find_mentions, known_things, load_fact_templates, load_language
from raider_ros.state_qa.summary import SummaryHistory
from support.state_qa_fakes import FixedSelector, S

T0 = 1000.0


def _history() -> SummaryHistory:
    h = SummaryHistory()
    for i, d in enumerate((2.4, 1.9, 1.6)):
        h.add(S("world_model", T0 + i, f"Fridge_1 at {d} m.", object__Fridge_1=f"fridge, in view, {d:.2f} m away, closed",
                relations__Fridge_1="near Sink_1, on the right of Sink_1"))
    h.add(S("issue_detector", T0 + 2, "Check of open(Fridge_1): unfeasible.", last_query="open(Fridge_1)",
            verdict="unfeasibility (cannot be done as asked)",
            explanation="Fridge_1 is out of reach: 1.60 m from the camera, the arm reaches 1.10 m."))
    h.add(S("issue_detector", T0 + 6, "Check of place(Mug_1, Sink_1): no issue.", last_query="place(Mug_1, Sink_1)",
            verdict="no issue (feasible)", explanation="No issue: Sink_1 can take Mug_1."))
    h.add(S("world_model", T0 + 8, "Fridge_1 at 1.55 m.", object__Fridge_1="fridge, in view, 1.55 m away, closed",
            relations__Fridge_1="near Sink_1, on the right of Sink_1"))
    return h


def test_cause_words_and_cause_facts_come_from_data():
    assert asks_cause("Why did you stop?") and asks_cause("How come you did not open it?")
    assert asks_cause("What went wrong with the fridge?") and not asks_cause("Where is the fridge?")
    t = load_fact_templates()
    assert t["explanation"].cause and t["skill_failures"].cause and not t["object"].cause


def test_why_question_gets_the_explanation_not_an_earlier_distance():
    qa = StateQA(selector=FixedSelector("world_model", "issue_detector"))
    ans = qa.ask("Why didn't you open Fridge_1?", _history(), now=T0 + 10)
    assert "out of reach" in ans.answer, ans.answer
    assert ans.facts[0].key == "explanation", ans.facts


def test_a_part_of_a_reported_object_names_the_object():
    h = _history()
    known = known_things(h.latest_all().values())
    lang = load_language()
    for q in ("Why could you not open the fridge door?", "Is the door of the fridge closed?"):
        ms = find_mentions(q, known, lang)
        assert all(m.present for m in ms), ms
        assert any("door" in m.surface and m.ids == ("Fridge_1",) for m in ms), ms
    qa = StateQA(selector=FixedSelector("world_model", "issue_detector"))
    ans = qa.ask("Why could you not open the fridge door?", h, now=T0 + 10)
    assert "don't know of any door" not in ans.answer and "out of reach" in ans.answer, ans.answer


def test_a_thing_alone_that_no_module_reports_is_still_absent():
    qa = StateQA(selector=FixedSelector("world_model"))
    h = _history()
    for q in ("Is the door open?", "Can you see a door?", "Is the oven door open?"):
        ans = qa.ask(q, h, now=T0 + 10)
        assert "I don't know of any" in ans.answer and "door" in ans.answer, (q, ans.answer)
