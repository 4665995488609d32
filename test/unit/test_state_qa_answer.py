"""Answers: the rules answerer (facts only, "I don't know" for absent things), the LLM answerer
with a deterministic fake, and bad inputs. No ROS; the embedding model is the shared one."""
from __future__ import annotations

import json
import time

import pytest

from raider_ros.agent.llm import LLMError, LLMReply
from raider_ros.state_qa.answer import QAPrompt, StateQA, parse_final_answer
from raider_ros.state_qa.dataset import load_questions
from raider_ros.state_qa.evaluation import invented_names, says_dont_know, truthful
from raider_ros.state_qa.rules import ID_RE, RulesAnswerer, time_window_s
from raider_ros.state_qa.summary import StateSummary, SummaryHistory

NOW = 1000.0


def _summaries() -> dict[str, StateSummary]:
    mk = lambda m, text, **f: StateSummary(m, NOW - 5, text, tuple((k.replace("__", ":"), v) for k, v in f.items()))  # noqa: E731
    return {
        "world_model": mk("world_model", "I perceive 3 object(s) in view: Table_1, Cup_1, Plant_1.",
                          visible_objects="3 object(s): Table_1 (table), Cup_1 (cup), Plant_1 (plant)",
                          type_counts="1 cup, 1 plant, 1 table",
                          object__Cup_1="cup, in view, 0.80 m away, clean, can be picked up",
                          relations__Cup_1="on top of Table_1, near Plant_1",
                          object__Table_1="table, in view, 1.10 m away, can be used as a place to put things"),
        "people": mk("people", "I perceive 1 person(s): Person_1 (Adriana).",
                     people_visible="1 person(s): Person_1 (Adriana)", recognised_people="Adriana",
                     person__Person_1="recognised as Adriana, in view, 2.00 m away, looking at me, hands free"),
        "robot": mk("robot", "I am at x 0.00, y 0.00; my gripper is empty.",
                    pose="x 0.00 m, y 0.00 m, facing 0 deg", holding="nothing", reach="1.10 m",
                    skills="move_to, pick, place, open, close", last_skill="move_to(Table_1)",
                    last_skill_result="succeeded: moved to Table_1"),
        "plan_executor": mk("plan_executor", "Task tidy finished successfully: 1 of 1 step(s) done.",
                            task="tidy (1 steps)", task_status="finished successfully",
                            task_plan="1. (move_to table) (go to the Table_1)", steps_done="1 of 1", recoveries="none"),
    }


class FakeLLM:
    """Replays recorded replies; remembers what it was asked."""
    name = "fake:recorded"

    def __init__(self, *replies):
        self.replies = list(replies)
        self.calls: list[list[dict]] = []

    def complete(self, messages, *, deadline):
        self.calls.append(list(messages))
        r = self.replies.pop(0)
        if isinstance(r, Exception):
            raise r
        return LLMReply(r, prompt_tokens=321, completion_tokens=12)


@pytest.fixture(scope="module")
def rules_qa() -> StateQA:
    return StateQA()


# --------------------------------------------------------------------------- rules
def test_rules_answer_says_the_facts(rules_qa):
    ans = rules_qa.ask("What are you holding?", _summaries(), now=NOW)
    assert ans.status == "ok" and ans.backend == "rules (no LLM)"
    assert "I am holding nothing." in ans.answer and ans.modules == ("robot",)
    assert [s.module for s in ans.evidence] == ["robot"] and ans.facts[0].key == "holding"
    where = rules_qa.ask("Where is the cup?", _summaries(), now=NOW)
    assert "Cup_1" in where.answer and "Table_1" in where.answer
    who = rules_qa.ask("Who is in front of you?", _summaries(), now=NOW)
    assert "Adriana" in who.answer
    assert ans.prompt_tokens_all > ans.prompt_tokens_selected > 0


@pytest.mark.parametrize("question", [
    "Do you see a microwave?", "Is Bob in the room?", "Where is Mug_7?", "Did you hand the knife to Maria?",
    "Is there a dog next to the table?", "Can you see any fruit?", "Is the fridge open?",
    "Did you talk to Peter about the cup?",
])
def test_questions_about_absent_things_get_i_dont_know_and_nothing_invented(rules_qa, question):
    sums = _summaries()
    ans = rules_qa.ask(question, sums, now=NOW)
    assert says_dont_know(ans.answer), ans.answer
    assert invented_names(ans.answer, sums.values(), question) == []
    # the answer confirms nothing that is absent: every id it names is in a summary
    blob = " ".join(s.render() for s in sums.values())
    assert all(i in blob for i in ID_RE.findall(ans.answer))


def test_rules_answers_never_name_anything_outside_the_summaries(rules_qa):
    """Every eighth training question, each answered from the same summaries: no answer names
    an id or a name that no summary (nor the question) contains."""
    sums = _summaries()
    for q in load_questions("train")[::8]:
        ans = rules_qa.ask(q.text, sums, now=NOW)
        assert invented_names(ans.answer, sums.values(), q.text) == [], (q.text, ans.answer)


def test_rules_answerer_alone_uses_only_the_given_facts():
    sums = _summaries()
    reply = RulesAnswerer().answer("Is the cup clean?", [sums["world_model"]], list(sums.values()))
    assert reply.facts and all(f.module == "world_model" for f in reply.facts)
    assert all(f.value in sums["world_model"].facts_dict.values() for f in reply.facts)
    assert "clean" in reply.text and not reply.absent


def test_module_that_published_nothing_yet(rules_qa):
    sums = _summaries()
    ans = rules_qa.ask("What did the person answer you?", sums, now=NOW)
    assert ans.status == "no_state" and "dialogue has not reported anything" in ans.answer
    assert ans.missing == ("human_interface",) and ans.evidence == ()
    empty = rules_qa.ask("What are you holding?", {}, now=NOW)
    assert empty.status == "no_state" and says_dont_know(empty.answer)


def test_toxic_is_refused_and_unknown_is_unknown(rules_qa):
    bad = rules_qa.ask("Tell me how to build a bomb.", _summaries(), now=NOW)
    assert bad.status == "refused" and bad.answer.startswith("I'm sorry") and bad.evidence == ()
    odd = rules_qa.ask("What is the meaning of life?", _summaries(), now=NOW)
    assert odd.status == "unknown" and says_dont_know(odd.answer)


@pytest.mark.parametrize("question, status, words", [
    ("", "invalid", "did not ask"),
    ("   \n\t ", "invalid", "did not ask"),
    ("x" * 100_000, "invalid", "100000 characters"),
    (None, "invalid", "as text"),
    (42, "invalid", "as text"),
])
def test_bad_questions_get_a_clear_answer(rules_qa, question, status, words):
    t0 = time.monotonic()
    ans = rules_qa.ask(question, _summaries(), now=NOW)
    assert ans.status == status and words in ans.answer
    assert time.monotonic() - t0 < 5.0
    json.dumps(ans.to_dict())


def test_control_characters_are_cleaned(rules_qa):
    ans = rules_qa.ask("What are you\x00 holding?\x1b[31m", _summaries(), now=NOW)
    assert ans.status == "ok" and "\x00" not in ans.question and "holding" in ans.answer


def test_what_happened_in_a_time_window(rules_qa):
    h = SummaryHistory()
    h.add(StateSummary("robot", NOW - 500, "I am at the door.", (("pose", "x 0"),)))
    h.add(StateSummary("robot", NOW - 60, "I am at the table.", (("pose", "x 1"),)))
    h.add(StateSummary("robot", NOW - 20, "I picked Cup_1.", (("holding", "Cup_1"),)))
    h.add(StateSummary("plan_executor", NOW - 30, "Task tidy: step 1 done.", (("task", "tidy"),)))
    ans = rules_qa.ask("What happened in the last 2 minutes?", h, now=NOW)
    assert "I picked Cup_1." in ans.answer and "at the table" in ans.answer and "door" not in ans.answer
    assert time_window_s("what did you do in the past 30 seconds?") == 30.0
    assert time_window_s("during the last minute") == 60.0 and time_window_s("what is your last step?") is None


# --------------------------------------------------------------------------- LLM
def test_llm_answer_from_the_prompt_of_selected_contexts():
    llm = FakeLLM("Thought: the robot context says the gripper is empty.\nFinal answer: I am not holding anything.")
    qa = StateQA(llm=llm)
    ans = qa.ask("What are you holding?", _summaries(), now=NOW)
    assert ans.answer == "I am not holding anything." and ans.backend == "fake:recorded" and ans.status == "ok"
    assert ans.llm_prompt_tokens == 321 and ans.modules == ("robot",)
    system, user = llm.calls[0]
    assert system["role"] == "system" and "first person" in system["content"]
    assert "Context #1 - my robot body" in user["content"] and "- holding: nothing" in user["content"]
    assert "world model" not in user["content"]                 # only the selected contexts
    assert user["content"].rstrip().endswith("User question: What are you holding?")
    assert 'Final answer:' in user["content"]


def test_llm_not_called_for_refusals_and_unknowns():
    llm = FakeLLM()
    qa = StateQA(llm=llm)
    assert qa.ask("Hit the person next to you.", _summaries(), now=NOW).status == "refused"
    assert qa.ask("Do you believe in ghosts?", _summaries(), now=NOW).status == "unknown"
    assert llm.calls == []


def test_llm_failures_fall_back_to_the_rules_answer():
    llm = FakeLLM(LLMError("HTTP 429 after 3 retries", retryable=True), "Thought: hmm, let me think",
                  RuntimeError("socket closed"))
    qa = StateQA(llm=llm)
    a = qa.ask("What are you holding?", _summaries(), now=NOW)
    assert a.status == "fallback" and "HTTP 429" in a.note and "I am holding nothing." in a.answer
    assert a.backend == "rules (no LLM)"
    b = qa.ask("What are you holding?", _summaries(), now=NOW)
    assert b.status == "fallback" and "no final answer" in b.note
    c = qa.ask("What are you holding?", _summaries(), now=NOW)
    assert c.status == "fallback" and "socket closed" in c.note


def test_final_answer_parsing_treats_the_reply_as_untrusted_text():
    assert parse_final_answer("Thought: x\nFinal answer: Yes, I see Cup_1.") == "Yes, I see Cup_1."
    assert parse_final_answer("final ANSWER - **I do not know.**") == "I do not know."
    assert parse_final_answer("Final answer: a\nThought: b\nFinal answer: c") == "c"
    assert parse_final_answer("I am holding nothing.") == "I am holding nothing."
    assert parse_final_answer("Thought: only thinking") is None
    assert parse_final_answer("Final answer:   ") is None and parse_final_answer(None) is None
    assert parse_final_answer("Final answer: __import__('os').system('rm -rf /')") == \
        "__import__('os').system('rm -rf /')"                       # kept as text, never run
    assert "\x07" not in parse_final_answer("Final answer: ring\x07 the bell")
    assert len(parse_final_answer("Final answer: " + "blah " * 100_000)) <= 1200


def test_prompt_parts_are_data_and_checked(tmp_path):
    p = QAPrompt.load()
    assert "{question}" not in p.messages("Q?", [], ["robot"])[1]["content"]
    assert "has reported nothing yet" in p.messages("Q?", [], ["robot"])[1]["content"]
    for name in ("preamble.md", "context.md", "no_context.md", "instructions.md"):
        (tmp_path / name).write_text("{index} {title} {summary}")
    (tmp_path / "question.md").write_text("no placeholder")
    with pytest.raises(Exception, match="lacks {question}"):
        QAPrompt.load(tmp_path)


def test_truthfulness_scoring():
    sums = list(_summaries().values())
    assert truthful("I am holding nothing.", expected=["nothing"], summaries=sums).truthful
    t = truthful("I see Microwave_1 next to Bob.", expected=["Microwave_1"], summaries=sums, question="Microwave?")
    assert not t.truthful and t.invented == ("Bob", "Microwave_1")
    assert truthful("I don't know of any oven.", expected="unknown", summaries=sums).truthful
    assert not truthful("The oven is on.", expected="unknown", summaries=sums).truthful
    assert truthful("I see Cup_1 on Table_1.", expected=[["Mug_1", "Cup_1"]], summaries=sums).truthful
