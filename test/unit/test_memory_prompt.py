"""Dynamic prompts and lesson reuse: the recovery prompt's examples from the memory, the
rules writer using a matching lesson, the task planner choosing between lessons and seeds,
and rebinding a stored plan to another scene."""
from __future__ import annotations

import pytest

from raider_ros.agent.llm import LLMReply
from raider_ros.common.paths import data_dir, scenes_dir
from raider_ros.memory.adapt import AdaptError, SceneIndex, adapt_plan, applicable
from raider_ros.memory.advisor import MemoryAdvisor
from raider_ros.memory.episode import query_line
from raider_ros.memory.config import LearningConfig
from raider_ros.memory.episode import Episode
from raider_ros.memory.store import EpisodicMemory
from raider_ros.memory.tasks import TaskPlanError, TaskPlanner, TaskRequest
from raider_ros.recovery.planner import RecoveryPlanner
from raider_ros.recovery.prompt import RecoveryPrompt
from raider_ros.recovery.rules_writer import RecoveryHints, RulesRecoveryWriter
from raider_ros.sim.scene import load_scene
from test_memory_store import WordEncoder

CFG = LearningConfig.load()
DEV = data_dir() / "benchmark" / "dev"


def scene(name: str) -> SceneIndex:
    p = scenes_dir() / f"{name}.scene.yaml"
    return SceneIndex.from_scene(load_scene(p if p.is_file() else DEV / f"{name}.scene.yaml"))


@pytest.fixture
def memory():
    m = EpisodicMemory(":memory:", encoder=WordEncoder())       # with the seed examples
    yield m
    m.close()


def closer_lesson(m: EpisodicMemory) -> Episode:
    expl = "cannot pick CerealBox_1: it is out of reach"
    return m.add(Episode(scope="recovery", kind="lesson", category="IU1", action="pick", query="pick(CerealBox_1)",
                         issue="unfeasibility", explanation=expl,
                         instructions=("Get me the cereal box.", "Don't ask me, just move closer to it yourself.",
                                       query_line("pick(CerealBox_1)", "unfeasibility", expl, None)),
                         plan="move_to(CerealBox_1)\npick(CerealBox_1)", roles={"arg1": "CerealBox_1"},
                         types={"CerealBox_1": "CerealBox"}))


class FakeLLM:
    name = "fake-llm"

    def __init__(self, reply: str):
        self.reply, self.calls = reply, []

    def complete(self, messages, *, deadline):
        self.calls.append(messages)
        return LLMReply(self.reply)


# --------------------------------------------------------------------------- the recovery prompt
def test_fixed_examples_without_memory():
    p = RecoveryPrompt.load()
    fixed = (data_dir() / "prompts/recovery/examples.md").read_text().strip()
    assert p.system.endswith(fixed) and not p.head.endswith(fixed) and p.system.startswith(p.head)
    assert p.messages("pick(A_1)", "unfeasibility", "x", None)[0]["content"] == p.system
    llm = FakeLLM("pick(A_1)")
    RecoveryPlanner(llm).plan("pick(A_1)", "unfeasibility", "x")
    assert llm.calls[0][0]["content"] == p.system


def test_llm_gets_its_examples_from_the_memory(memory):
    lesson = closer_lesson(memory)
    llm = FakeLLM("move_to(Bread_1)\npick(Bread_1)")
    planner = RecoveryPlanner(llm, memory=MemoryAdvisor(memory, config=CFG))
    planner.plan("pick(Bread_1)", "unfeasibility", "cannot pick Bread_1: it is out of reach", None,
                 instructions=("Get me the bread.",))
    system = llm.calls[0][0]["content"]
    head = RecoveryPrompt.load().head
    assert system.startswith(head) and "## Examples" in system
    examples = system[len(head):]
    assert examples.count("corrective actions:") == CFG.k
    # the most similar example (the lesson) comes last, next to the query
    last = examples.rsplit("corrective actions:", 1)
    assert last[1].strip() == lesson.plan
    assert "what the person said: Get me the cereal box. Don't ask me" in last[0]
    assert "query: pick(CerealBox_1), issue: unfeasibility" in last[0]


def test_prompt_examples_are_ranked_by_similarity(memory):
    adv = MemoryAdvisor(memory, config=CFG)
    text = adv.prompt_examples("pick(Milk_1)", "unfeasibility", "the milk is inside Fridge_1, which is closed", None)
    blocks = text.split("\n\n")
    assert blocks[-1].startswith(query_line("pick(Milk_1)", "unfeasibility",
                                            "the milk is inside Fridge_1, which is closed", None))


# --------------------------------------------------------------------------- rules writer + lessons
def test_rules_writer_uses_a_matching_lesson(memory):
    lesson = closer_lesson(memory)
    adv = MemoryAdvisor(memory, config=CFG, scene=scene("kitchen_island"))
    planner = RecoveryPlanner("rules", memory=adv)
    expl = "cannot pick Bread_1: it is out of reach (2.1 m from the camera, the arm reaches 1.10 m)"
    plan = planner.plan("pick(Bread_1)", "unfeasibility", expl, None, hints=RecoveryHints(grounding=("Bread_1",)),
                        instructions=("Get me the bread.",))
    assert plan.to_code() == "move_to(Bread_1)\npick(Bread_1)"
    assert planner.last.source == f"lesson {lesson.id}"
    # without the memory: the category's rule asks the person
    plain = RecoveryPlanner("rules").plan("pick(Bread_1)", "unfeasibility", expl, None,
                                          hints=RecoveryHints(grounding=("Bread_1",)))
    assert plain.steps[0].action == "ask" and "closer" in plain.steps[0].args[0].value


def test_rules_writer_ignores_lessons_of_another_situation(memory):
    closer_lesson(memory)
    adv = MemoryAdvisor(memory, config=CFG, scene=scene("kitchen_island"))
    w = RulesRecoveryWriter(lessons=adv)
    # another category (closed), another action (turn_on), a dissimilar request
    closed = w.write("pick(Bread_1)", "unfeasibility", "it is inside Cupboard_1, whose door is closed",
                     instructions=("Get me the bread.",))
    assert w.last_source == w.name and "open(Cupboard_1)" in closed
    w.write("turn_on(Toaster_1)", "unfeasibility", "it is out of reach", instructions=("Get me the bread.",))
    assert w.last_source == w.name
    w.write("pick(Bread_1)", "unfeasibility", "it is out of reach", instructions=("Slice tomatoes quickly now",))
    assert w.last_source == w.name and "below" in adv.last_skipped[0]
    # the lesson's object has no counterpart here: the plan would not fit
    adv.set_scene(scene("bedroom"))
    w.write("pick(Bread_1)", "unfeasibility", "it is out of reach", instructions=("Get me the bread.",))
    assert w.last_source == w.name and "no Bread_1 here" in adv.last_skipped[0]


def test_writer_refuses_an_object_without_lesson_plan():
    with pytest.raises(ValueError, match="lesson_plan"):
        RulesRecoveryWriter(lessons=object())


# --------------------------------------------------------------------------- task planner
def glass_lesson(m: EpisodicMemory) -> Episode:
    return m.add(Episode(
        scope="task", kind="lesson", task="deliver",
        instructions=("Please bring me my medicine.", "Next time, bring me a glass of water with my medicine."),
        plan="move_to(MedicineCounter_1)\npick(Medicine_1)\nmove_to(Person_1)\nhandover(Medicine_1, Person_1)\n"
             "move_to(SideTable_1)\npick(Glass_1)\nmove_to(Person_1)\nhandover(Glass_1, Person_1)",
        roles={"item": "Medicine_1", "source": "MedicineCounter_1", "person": "Person_1"},
        types={"Medicine_1": "Medicine", "MedicineCounter_1": "MedicineCounter", "Person_1": "Person",
               "SideTable_1": "SideTable", "Glass_1": "Glass"},
        carriers={"Glass_1": "SideTable_1", "Medicine_1": "MedicineCounter_1"}))


def test_task_planner_lesson_or_seed(memory):
    room = scene("assistive_learning")
    lesson = glass_lesson(memory)
    planner = TaskPlanner(memory, CFG)
    med = planner.plan(TaskRequest("Could you bring me my medicine?", "deliver",
                                   {"item": "Medicine_1", "source": "MedicineCounter_1", "person": "Person_1"}), room)
    assert med.source == f"lesson {lesson.id}" and med.from_lesson and med.role_score == 1.0
    assert med.plan.to_code().splitlines()[-1] == "handover(Glass_1, Person_1)"
    book = planner.plan(TaskRequest("Please bring me the book.", "deliver",
                                    {"item": "Book_1", "source": "SideTable_1", "person": "Person_1"}), room)
    assert book.source == "seed task/deliver-medicine" and "not like the request's" in book.skipped[0]
    assert book.plan.to_code().splitlines() == ["move_to(SideTable_1)", "pick(Book_1)", "move_to(Person_1)",
                                                "handover(Book_1, Person_1)"]
    fetch = planner.plan(TaskRequest("Get me my medicine", "fetch", {"item": "Medicine_1",
                                                                     "source": "MedicineCounter_1"}), room)
    assert fetch.source == "seed task/fetch-apple"
    with pytest.raises(TaskPlanError, match="no example of the task 'dance'"):
        planner.plan(TaskRequest("Dance!", "dance", {"item": "Book_1"}), room)


def test_task_lesson_is_rebound_in_another_room(memory):
    glass_lesson(memory)
    hospital = scene("hospital_room")
    got = TaskPlanner(memory, CFG).plan(TaskRequest("Please bring me my medicine.", "deliver", {
        "item": "PillBottle_1", "source": "OverbedTable_1", "person": "Person_2"}), hospital)
    # pills are not medicine by their type name: the objects are not alike, the seed is used
    assert got.episode.kind == "seed"


# --------------------------------------------------------------------------- adapting
def test_adapt_rebinds_roles_types_and_carriers():
    hospital = scene("hospital_room")
    plan = ("move_to(MedicineCounter_1)\npick(Medicine_1)\nmove_to(Person_1)\nhandover(Medicine_1, Person_1)\n"
            "move_to(SideTable_1)\npick(Glass_1)\nsay(\"Here is Glass_1.\")")
    text, mapping = adapt_plan(plan, hospital, roles_from={"item": "Medicine_1", "source": "MedicineCounter_1",
                                                           "person": "Person_1"},
                               roles_to={"item": "PillBottle_1", "source": "OverbedTable_1", "person": "Person_2"},
                               types={"Glass_1": "Glass", "SideTable_1": "SideTable"},
                               carriers={"Glass_1": "SideTable_1"})
    assert mapping["Glass_1"] == "WaterGlass_1"            # same head noun, "water glass"
    assert mapping["SideTable_1"] == "OverbedTable_1"      # what carries the glass here
    assert text.splitlines()[-1] == 'say("Here is WaterGlass_1.")'
    assert applicable(text, hospital) is None
    with pytest.raises(AdaptError, match="needs a person"):
        adapt_plan(plan, hospital, roles_from={"person": "Person_1"}, roles_to={})
    with pytest.raises(AdaptError, match="a medicine counter"):
        adapt_plan("move_to(MedicineCounter_1)", scene("bedroom"), roles_from={}, roles_to={},
                   types={"MedicineCounter_1": "MedicineCounter"})


def test_applicable_checks_what_actions_need():
    room = scene("assistive_learning")
    assert applicable("move_to(SideTable_1)\npick(Glass_1)", room) is None
    assert "is not openable" in applicable("open(SideTable_1)", room)
    assert "is not a person" in applicable("pick(Book_1)\nhandover(Book_1, Chair_1)", room)
    assert "no Fridge_1 here" in applicable("open(Fridge_1)", room)
    assert applicable("move_to(free_table)\nplace(free_table)", room) is None
