"""learn_from_interaction: recognising corrections, the rules and LLM improvers, the paper's
two discard rules, plans checked by the plan interpreter, and the reason given when nothing
is stored."""
from __future__ import annotations

import pytest

from raider_ros.agent.llm import LLMReply
from raider_ros.common.paths import scenes_dir
from raider_ros.memory.adapt import SceneIndex
from raider_ros.memory.config import LearningConfig
from raider_ros.memory.feedback import (
    FeedbackError, LLMFeedbackClassifier, classify_feedback, parse_label,
)
from raider_ros.memory.interaction import Act, Interaction, Recovery
from raider_ros.memory.learning import (
    ImprovePrompt, LLMImprover, RulesImprover, learn_from_interaction,
)
from raider_ros.memory.store import EpisodicMemory
from raider_ros.sim.scene import load_scene
from test_memory_store import WordEncoder

CFG = LearningConfig.load()


@pytest.fixture(scope="module")
def room() -> SceneIndex:
    return SceneIndex.from_scene(load_scene(scenes_dir() / "assistive_learning.scene.yaml"))


@pytest.fixture(scope="module")
def kitchen() -> SceneIndex:
    return SceneIndex.from_scene(load_scene(scenes_dir() / "kitchen.scene.yaml"))


@pytest.fixture
def memory():
    m = EpisodicMemory(":memory:", encoder=WordEncoder(), seeds=None)
    yield m
    m.close()


def delivery() -> Interaction:
    """The medicine delivery as the runner records it: a question to clear the chair, then done."""
    it = Interaction("Please bring me my medicine.", "deliver",
                     {"item": "Medicine_1", "source": "MedicineCounter_1", "person": "Person_1"},
                     "assistive_learning", "move_to(MedicineCounter_1)\npick(Medicine_1)\nmove_to(Person_1)\n"
                     "handover(Medicine_1, Person_1)", "seed task/deliver-medicine")
    it.acts = [Act("move_to", ("MedicineCounter_1",), False, "the path is blocked by Chair_1"),
               Act("ask", ("The chair is in my way. Could you move it aside, please?",), True, "Sure.",
                   "recovery", 0),
               Act("move_to", ("MedicineCounter_1",), True), Act("pick", ("Medicine_1",), True),
               Act("move_to", ("Person_1",), True), Act("handover", ("Medicine_1", "Person_1"), True)]
    it.recoveries = [Recovery("move_to", ("MedicineCounter_1",), "unfeasibility", "IU2", "the path is blocked by "
                              "Chair_1", None, 'ask("The chair is in my way. Could you move it aside, please?")\n'
                              "move_to(MedicineCounter_1)", "rules (no LLM)")]
    it.success = True
    return it


def milk(closed_after: bool = False) -> Interaction:
    it = Interaction("Get me the milk, please.", "fetch", {"item": "Milk_1", "source": "Fridge_1"}, "kitchen",
                     "move_to(Fridge_1)\npick(Milk_1)")
    it.acts = [Act("move_to", ("Fridge_1",), True), Act("pick", ("Milk_1",), False, "inside Fridge_1, closed"),
               Act("open", ("Fridge_1",), True, "", "recovery", 0), Act("pick", ("Milk_1",), True)]
    if closed_after:
        it.acts.append(Act("close", ("Fridge_1",), True))
    it.recoveries = [Recovery("pick", ("Milk_1",), "unfeasibility", "IU4", "inside Fridge_1, closed", None,
                              "open(Fridge_1)\npick(Milk_1)")]
    it.success = True
    return it


def far_cereal() -> Interaction:
    it = Interaction("Get me the cereal box.", "fetch", {"item": "CerealBox_1", "source": "CounterTop_1"},
                     "kitchen_island", "move_to(CounterTop_1)\npick(CerealBox_1)")
    q = "I cannot reach the cereal box. Could you bring it closer to me, please?"
    it.acts = [Act("move_to", ("CounterTop_1",), True), Act("pick", ("CerealBox_1",), False, "out of reach"),
               Act("ask", (q,), True, "Fine.", "recovery", 0), Act("pick", ("CerealBox_1",), True)]
    it.recoveries = [Recovery("pick", ("CerealBox_1",), "unfeasibility", "IU1", "it is out of reach", None,
                              f'ask("{q}")\npick(CerealBox_1)')]
    it.success = True
    return it


# --------------------------------------------------------------------------- recognising
@pytest.mark.parametrize("text, kind", [
    ("Next time, bring me a glass of water with my medicine.", "learn"),
    ("You should have closed the fridge.", "correction"),
    ("No, the other one.", "correction"),
    ("Can you learn that for next time?", "learn"),
    ("Remember to switch the lamp on.", "learn"),
    ("Don't ask me, just move closer.", "correction"),
    ("I can't cut it with my hands.", "complaint"),
    ("Thanks, that's all.", "none"),
    ("Nobody needs the lamp now, thanks.", "none"),
    ("", "none"),
])
def test_rules_recognise_corrections(text, kind):
    fb = classify_feedback(text, CFG)
    assert fb.kind == kind, fb
    assert fb.triggers_learning == (kind != "none")


@pytest.mark.parametrize("reply, label", [("learn", "learn"), ("Correction.", "correction"),
                                          ("**complaint**", "complaint"), ("Label: none", "none")])
def test_llm_label_is_parsed(reply, label):
    assert parse_label(reply) == label


def test_llm_label_outside_the_list_is_an_error():
    with pytest.raises(FeedbackError, match="not one of"):
        parse_label("I think the person is happy")


class FakeLLM:
    name = "fake-llm"

    def __init__(self, *replies):
        self.replies, self.calls = list(replies), []

    def complete(self, messages, *, deadline):
        self.calls.append([dict(m) for m in messages])
        r = self.replies.pop(0)
        if isinstance(r, Exception):
            raise r
        return LLMReply(r)


def test_llm_classifier_uses_the_prompt_file():
    llm = FakeLLM("correction")
    fb = LLMFeedbackClassifier(llm).classify("No, the red one.", context="picked the blue mug")
    assert fb.kind == "correction" and fb.backend == "fake-llm"
    assert '"No, the red one."' in llm.calls[0][1]["content"] and "picked the blue mug" in llm.calls[0][1]["content"]


# --------------------------------------------------------------------------- rules improver
def test_rules_bring_too_adds_fetching_and_handing_over(memory, room):
    out = learn_from_interaction(memory, delivery(), "Thank you. Next time, bring me a glass of water with my "
                                 "medicine.", room, improver=RulesImprover(CFG))
    assert out.learned, out.reason
    ep = out.stored[0]
    assert ep.plan.splitlines() == ["move_to(MedicineCounter_1)", "pick(Medicine_1)", "move_to(Person_1)",
                                    "handover(Medicine_1, Person_1)", "move_to(SideTable_1)", "pick(Glass_1)",
                                    "move_to(Person_1)", "handover(Glass_1, Person_1)"]
    assert ep.scope == "task" and ep.task == "deliver" and ep.kind == "lesson" and ep.id is not None
    assert ep.instructions == ("Please bring me my medicine.", "Thank you. Next time, bring me a glass of water "
                                                               "with my medicine.")
    assert ep.carriers == {"Glass_1": "SideTable_1", "Medicine_1": "MedicineCounter_1"}
    assert ep.types["Glass_1"] == "Glass" and ep.roles["item"] == "Medicine_1"
    assert "glass" in out.problem and "glass" in out.improvement
    assert ("robot", "The chair is in my way. Could you move it aside, please?") in ep.dialogue
    assert ep.issues[0]["category"] == "IU2" and ep.runs[0]["result"] == "success"
    assert memory.get(ep.id).plan == ep.plan


def test_rules_action_after_and_before(memory, kitchen):
    imp = RulesImprover(CFG)
    after = imp.improve(milk(), "You left the fridge open. Next time, close the fridge after you take "
                                "something out of it.", kitchen)
    assert after.plan.splitlines() == ["move_to(Fridge_1)", "open(Fridge_1)", "pick(Milk_1)", "close(Fridge_1)"]
    separable = imp.improve(milk(), "Next time switch the coffee machine on as well.", kitchen)
    assert separable.plan.splitlines()[-2:] == ["move_to(CoffeeMachine_1)", "turn_on(CoffeeMachine_1)"]
    before = imp.improve(milk(), "Please turn on the coffee machine first next time.", kitchen)
    assert before.plan.splitlines()[:2] == ["move_to(CoffeeMachine_1)", "turn_on(CoffeeMachine_1)"]


def test_rules_move_closer_makes_a_recovery_lesson(memory):
    island = SceneIndex.from_scene(load_scene(scenes_dir().parent / "benchmark/dev/kitchen_island.scene.yaml"))
    out = learn_from_interaction(memory, far_cereal(), "You don't have to ask me for that. When something is too "
                                 "far away, just move closer to it yourself.", island, improver=RulesImprover(CFG))
    assert out.learned, out.reason
    ep = out.stored[0]
    assert ep.scope == "recovery" and ep.category == "IU1" and ep.action == "pick"
    assert ep.plan.splitlines() == ["move_to(CerealBox_1)", "pick(CerealBox_1)"]
    assert ep.roles == {"arg1": "CerealBox_1"} and ep.query == "pick(CerealBox_1)"


def test_discard_rule_no_problem(memory, room):
    out = learn_from_interaction(memory, delivery(), "Thanks, that was perfect.", room, improver=RulesImprover(CFG))
    assert not out.learned and "nothing to learn" in out.reason and len(memory) == 0


def test_discard_rule_same_as_what_was_done(memory, kitchen):
    out = learn_from_interaction(memory, milk(closed_after=True), "Next time close the fridge afterwards.", kitchen,
                                 improver=RulesImprover(CFG))
    assert not out.learned and "already did" in out.reason and len(memory) == 0


def test_unknown_object_is_not_learned_and_says_why(memory, room):
    out = learn_from_interaction(memory, delivery(), "Next time bring me a unicorn with it.", room,
                                 improver=RulesImprover(CFG))
    assert not out.learned and "what to bring" in out.reason and "unicorn" in out.reason


def test_a_plan_the_interpreter_rejects_is_not_stored(memory, room):
    # the plan names Glass_1, which the caller says is not a known name here
    names = [n for n in room.things if n != "Glass_1"]
    out = learn_from_interaction(memory, delivery(), "Next time, bring me a glass of water with my medicine.", room,
                                 improver=RulesImprover(CFG), known_names=names)
    assert not out.learned and len(memory) == 0
    assert "rejected" in out.reason and "undefined name 'Glass_1'" in out.reason


def test_a_memory_failure_is_a_reason_not_a_crash(room):
    class Broken:
        name = "broken"

        def encode(self, texts):
            raise OSError("disk gone")

    m = EpisodicMemory(":memory:", encoder=Broken(), seeds=None)
    out = learn_from_interaction(m, delivery(), "Next time, bring me a glass of water with my medicine.", room,
                                 improver=RulesImprover(CFG))
    assert not out.learned and "could not be stored" in out.reason and "disk gone" in out.reason


# --------------------------------------------------------------------------- LLM improver
GLASS_PLAN = ("```\nmove_to(MedicineCounter_1)\npick(Medicine_1)\nmove_to(Person_1)\nhandover(Medicine_1, Person_1)\n"
              "move_to(SideTable_1)\npick(Glass_1)\nmove_to(Person_1)\nhandover(Glass_1, Person_1)\n```")


def test_llm_improver_asks_the_three_questions_and_stores_the_plan(memory, room):
    llm = FakeLLM("The robot brought the medicine without water.",
                  "Next time, the robot should also bring a glass of water.", GLASS_PLAN)
    out = learn_from_interaction(memory, delivery(), "Next time bring me water with it.", room,
                                 improver=LLMImprover(llm))
    assert out.learned, out.reason
    assert out.backend == "fake-llm" and out.problem.startswith("The robot brought")
    assert out.stored[0].plan.splitlines()[-1] == "handover(Glass_1, Person_1)"
    prompt = ImprovePrompt.load()
    last = llm.calls[-1]
    users = [m["content"] for m in last if m["role"] == "user"]
    assert users[-3].endswith(prompt.questions[0]) and users[-2] == prompt.questions[1] and users[-1] == prompt.questions[2]
    assert "person: Next time bring me water with it." in users[-3]
    assert "robot: handover(Medicine_1, Person_1) -> done" in users[-3]
    assert "handover(object, person)" in last[0]["content"]           # the actions are in the system prompt
    assert len(llm.calls) == 3


def test_llm_no_problem_is_discarded_after_the_first_question(memory, room):
    llm = FakeLLM("No problem.")
    out = learn_from_interaction(memory, delivery(), "ok", room, improver=LLMImprover(llm))
    assert not out.learned and "nothing to learn" in out.reason and len(llm.calls) == 1 and len(memory) == 0


def test_llm_plan_equal_to_the_input_is_discarded(memory, room):
    same = "move_to(MedicineCounter_1)\npick(Medicine_1)\nmove_to(Person_1)\nhandover(Medicine_1, Person_1)"
    llm = FakeLLM("Something.", "Do better.", same)
    out = learn_from_interaction(memory, delivery(), "Next time do better.", room, improver=LLMImprover(llm))
    assert not out.learned and "already did" in out.reason and len(memory) == 0


@pytest.mark.parametrize("plan, why", [
    ("import os\nos.system('rm -rf /')", "imports are not allowed"),
    ("for x in things:\n    pick(x)", "loops"),
    ("pick(Unicorn_1)", "undefined name 'Unicorn_1'"),
    ("__import__('os').system('x')", "not allowed"),
])
def test_llm_plan_is_untrusted_and_checked(memory, room, plan, why):
    llm = FakeLLM("A problem.", "A fix.", plan)
    out = learn_from_interaction(memory, delivery(), "Next time do better.", room, improver=LLMImprover(llm))
    assert not out.learned and len(memory) == 0
    assert "rejected" in out.reason and why in out.reason


def test_llm_failure_is_a_reason(memory, room):
    llm = FakeLLM(RuntimeError("timeout"))
    out = learn_from_interaction(memory, delivery(), "Next time do better.", room, improver=LLMImprover(llm))
    assert not out.learned and "timeout" in out.reason
