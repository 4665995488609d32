"""The memory node's ROS-free parts: the interaction as a document (memory/learn's
interaction_json), recording the executor's ports as an interaction, a task plan as executor
steps, and MemoryService (list, get, forget, retrieve, plan_task, learn; a corrupt or locked
file runs on without learning)."""
from __future__ import annotations

import json
import sqlite3
import threading

import pytest

from raider_ros.agent.llm import LLMReply
from raider_ros.common.paths import scenes_dir
from raider_ros.executor.machine import DetectionOutcome, Executor, ExecutorConfig, Ports
from raider_ros.executor.task import TaskError, parse_roles, steps_from_plan
from raider_ros.memory.adapt import SceneIndex
from raider_ros.memory.dialogue import load_dialogue
from raider_ros.memory.episode import EpisodeError
from raider_ros.memory.interaction import Interaction, InteractionError
from raider_ros.memory.learning import LLMImprover
from raider_ros.memory.record import InteractionRecorder, split_query
from raider_ros.memory.service import MemoryService, database_path, default_database, scene_from_json
from raider_ros.memory.store import EpisodicMemoryError, UnknownEpisode
from raider_ros.memory.tasks import TaskPlanError
from raider_ros.recovery.plan import parse_plan
from raider_ros.sim.scene import load_scene, scene_to_dict
from test_memory_learning import delivery
from test_memory_store import WordEncoder

CORRECTION = "Thank you. Next time, bring me a glass of water with my medicine."
ROLES = {"item": "Medicine_1", "source": "MedicineCounter_1", "person": "Person_1"}


@pytest.fixture(scope="module")
def room_doc() -> dict:
    return scene_to_dict(load_scene(scenes_dir() / "assistive_learning.scene.yaml"))


@pytest.fixture(scope="module")
def room(room_doc) -> SceneIndex:
    return scene_from_json(json.dumps({**room_doc, "version": 3}))


@pytest.fixture
def service(tmp_path):
    s = MemoryService(str(tmp_path / "m" / "memory.sqlite"), encoder=WordEncoder())
    yield s
    s.close()


# --------------------------------------------------------------------------- the interaction document
def test_an_interaction_survives_its_json_document():
    it = delivery()
    it.utterances = ["thanks"]
    back = Interaction.from_json(it.to_json())
    assert back == it
    assert back.executed_plan().to_code() == it.executed_plan().to_code()


@pytest.mark.parametrize("doc, field", [
    ("[]", "expected a JSON object"),
    ('{"request": ""}', "interaction.request"),
    ('{"request": "x", "colour": 1}', "unknown field 'colour'"),
    ('{"request": "x", "roles": {"item": 3}}', "interaction.roles"),
    ('{"request": "x", "acts": [{"action": "pick", "args": ["A_1"], "ok": "yes"}]}', "interaction.acts[0].ok"),
    ('{"request": "x", "acts": [{"action": "pick", "args": ["A_1"], "ok": true, "recovery": 2}]}',
     "interaction.acts[0].recovery"),
    ('{"request": "x", "acts": [{"action": "pick", "args": "A_1", "ok": true}]}', "interaction.acts[0].args"),
    ('{"request": "x", "recoveries": [{"action": "pick"}]}', "interaction.recoveries[0].issue"),
    ("{not json", "not valid JSON"),
])
def test_a_bad_interaction_document_names_the_field(doc, field):
    with pytest.raises(InteractionError, match=field.replace("[", r"\[").replace("]", r"\]")):
        Interaction.from_json(doc)


# --------------------------------------------------------------------------- recording the executor
def test_split_query():
    assert split_query("handover(Medicine_1, Person_1)") == ("handover", ("Medicine_1", "Person_1"))
    assert split_query("approach(SideTable_1)") == ("approach", ("SideTable_1",))
    assert split_query("bring me the book") == ("bring me the book", ())


def test_the_recorder_writes_down_what_the_executor_did():
    """A two-step task: the chair blocks the way (a recovery that asks the person), then done."""
    plan = parse_plan("move_to(MedicineCounter_1)\npick(Medicine_1)")
    steps = steps_from_plan(plan)
    checks = {"approach(MedicineCounter_1)": [DetectionOutcome("unfeasibility", "the path is blocked by Chair_1"),
                                              DetectionOutcome("none")]}
    rec = InteractionRecorder("Please bring me my medicine.", "deliver", ROLES, scene="assistive_learning",
                              plan=plan.to_code(), plan_source="seed task/deliver-medicine",
                              source_of=lambda: "rules (no LLM)")

    def detect(query, _context):
        script = checks.get(query) or [DetectionOutcome("none")]
        return script.pop(0) if len(script) > 1 else script[0]

    ports = Ports(detect=detect,
                  plan_recovery=rec.plan_port(lambda *a: parse_plan('ask("Could you move the chair?")\n'
                                                                    "move_to(MedicineCounter_1)")),
                  skill=rec.skill_port(lambda name, args, cancel: (True, f"{name} done")),
                  ask=rec.ask_port(lambda q, t: "Sure, done."),
                  say=rec.say_port(lambda text: None),
                  feedback=rec.feedback_port(lambda *a: None))
    outcome = Executor(ports, ExecutorConfig()).run(steps)
    assert outcome.success
    it = rec.finish(outcome.success, outcome.reason)
    assert [(a.action, a.args, a.origin, a.recovery) for a in it.acts] == [
        ("ask", ("Could you move the chair?",), "recovery", 0),
        ("move_to", ("MedicineCounter_1",), "task", None),
        ("pick", ("Medicine_1",), "task", None)]
    (r,) = it.recoveries
    assert (r.action, r.args, r.issue, r.source) == ("approach", ("MedicineCounter_1",), "unfeasibility",
                                                     "rules (no LLM)")
    assert r.category and r.category != "none"
    assert it.executed_plan().to_code() == plan.to_code()
    assert it.success and it.plan_source == "seed task/deliver-medicine"


def test_what_the_executor_says_when_it_gives_up_is_not_recorded():
    rec = InteractionRecorder("x")
    rec.say_port(lambda t: None)("I cannot carry out pick(A_1)")
    assert rec.interaction.acts == []
    rec.recovery("pick(A_1)", "unfeasibility", "too far", None, 'say("I will move")')
    rec.say_port(lambda t: None)("I will move")
    assert [a.action for a in rec.interaction.acts] == ["say"]


# --------------------------------------------------------------------------- plans as executor steps
def test_a_task_plan_becomes_executor_steps():
    steps = steps_from_plan(parse_plan("move_to(SideTable_1)\npick(Glass_1)\nhandover(Glass_1, Person_1)"))
    assert [s.query for s in steps] == ["approach(SideTable_1)", "pick(Glass_1)", "handover(Glass_1, Person_1)"]
    assert [s.skill for s in steps] == ["move_to", "pick", "handover"]
    assert steps[2].skill_args(["Glass_2", "Person_9"]) == ["Glass_1", "Person_1"]    # already grounded
    assert [s.index for s in steps] == [0, 1, 2]


@pytest.mark.parametrize("text, why", [
    ('ask("Which one?")\npick(Glass_1)', "may only hold skill actions"),
    ("move_to(current_loc)", "expected scene ids"),
])
def test_a_task_plan_the_executor_cannot_run_is_refused(text, why):
    with pytest.raises(TaskError, match=why):
        steps_from_plan(parse_plan(text))


def test_roles():
    assert parse_roles(["item:Medicine_1", " person : Person_1"]) == {"item": "Medicine_1", "person": "Person_1"}
    for bad in (["item"], ["item:"], ["item:A_1", "item:B_1"]):
        with pytest.raises(TaskError, match="roles"):
            parse_roles(bad)


# --------------------------------------------------------------------------- the service
def test_the_default_database_is_per_user_and_overridable(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_database() == tmp_path / "xdg" / "raider_ros" / "memory.sqlite"
    assert database_path("") == str(default_database())
    monkeypatch.delenv("XDG_DATA_HOME")
    assert database_path("").endswith(".local/share/raider_ros/memory.sqlite")
    assert database_path("~/m.db").endswith("/m.db") and "~" not in database_path("~/m.db")
    assert database_path(":memory:") == ":memory:"


def test_a_scene_document_that_is_not_one_is_refused():
    for bad in ("nope", "[]", '{"objects": 3}'):
        with pytest.raises(ValueError, match="scene"):
            scene_from_json(bad)


def test_list_get_and_forget(service, room):
    seeds = service.list(kind="seed")
    assert seeds and service.learning and not service.error
    assert service.list(kind="lesson") == []
    with pytest.raises(ValueError, match="kind"):
        service.list(kind="lessons")
    with pytest.raises(EpisodeError, match="seed"):
        service.forget(seeds[0].id)
    with pytest.raises(UnknownEpisode):
        service.get(10_000)
    ans = service.learn(delivery(), CORRECTION, room, kind="learn")
    assert ans.stored and ans.ids, ans
    assert "remember" in ans.message and ans.improvement in ans.message
    got = service.get(ans.ids[0])
    assert got.kind == "lesson" and got.feedback == CORRECTION and "Glass_1" in got.plan
    assert [e.id for e in service.list(kind="lesson")] == ans.ids
    assert service.status()["lessons"] == 1
    assert service.forget(ans.ids[0]).id == ans.ids[0]
    assert service.list(kind="lesson") == []
    with pytest.raises(UnknownEpisode):
        service.forget(ans.ids[0])


def test_a_lesson_changes_the_plan_of_the_same_request_and_is_kept_on_disk(tmp_path, room):
    path = str(tmp_path / "memory.sqlite")
    s = MemoryService(path, encoder=WordEncoder())
    before = s.plan_task("Please bring me my medicine.", "deliver", ROLES, room)
    assert before.source == "seed task/deliver-medicine" and "Glass_1" not in before.plan.to_code()
    assert s.learn(delivery(), CORRECTION, room).stored          # the rules read it as a lesson
    s.close()
    s = MemoryService(path, encoder=WordEncoder())
    after = s.plan_task("Please bring me my medicine.", "deliver", ROLES, room)
    assert after.from_lesson and "handover(Glass_1, Person_1)" in after.plan.to_code()
    book = s.plan_task("Please bring me the book.", "deliver",
                       {"item": "Book_1", "source": "SideTable_1", "person": "Person_1"}, room)
    assert book.source == "seed task/deliver-medicine" and "Glass_1" not in book.plan.to_code()
    s.close()


def test_plan_task_refuses_bad_requests(service, room):
    with pytest.raises(ValueError, match="request"):
        service.plan_task(" ", "deliver", ROLES, room)
    with pytest.raises(ValueError, match="roles: not in the scene: item:Unicorn_1"):
        service.plan_task("Bring me the unicorn.", "deliver", {**ROLES, "item": "Unicorn_1"}, room)
    with pytest.raises(TaskPlanError, match="juggle"):
        service.plan_task("Juggle the glasses.", "juggle", ROLES, room)


def test_retrieve_checks_its_arguments(service):
    hits = service.retrieve(["Please bring me my medicine."], k=3, scope="task")
    assert len(hits) == 3 and all(h.episode.scope == "task" for h in hits)
    assert hits[0].episode.key == "task/deliver-medicine"
    for kw, field in (({"k": -1}, "k"), ({"k": 1000}, "k"), ({"scope": "plans"}, "scope"), ({"gamma": 2.0}, "gamma"),
                      ({"recent": -2}, "recent")):
        with pytest.raises(ValueError, match=field):
            service.retrieve(["x"], **kw)
    with pytest.raises(ValueError, match="instructions"):
        service.retrieve(["", "  "])


def test_feedback_that_is_not_a_correction_is_not_learned(service, room):
    ans = service.learn(delivery(), "Perfect, thank you.", room)
    assert not ans.stored and ans.kind == "none"
    assert ans.message == load_dialogue().say("not_feedback")
    assert not service.learn(delivery(), "  ", room).stored
    assert "feedback_kind" in service.learn(delivery(), CORRECTION, room, kind="angry").reason
    assert service.list(kind="lesson") == []


def test_an_improved_plan_the_interpreter_rejects_is_not_stored_and_the_person_is_told_why(tmp_path, room):
    class FakeLLM:
        name = "fake-llm"

        def __init__(self):
            self.replies = iter(["The robot forgot the water.", "Bring water too.",
                                 "import os\nmove_to(SideTable_1)"])

        def complete(self, messages, *, deadline):
            return LLMReply(next(self.replies), 10, 5)

    s = MemoryService(str(tmp_path / "m.sqlite"), encoder=WordEncoder(), improver=LLMImprover(FakeLLM()))
    ans = s.learn(delivery(), CORRECTION, room, kind="correction")
    assert not ans.stored and "rejected" in ans.reason and "import" in ans.reason
    assert ans.message.startswith("I could not learn from that:") and "rejected" in ans.message
    assert ans.backend == "fake-llm" and s.list(kind="lesson") == []
    s.close()


def test_a_corrupt_file_runs_on_without_learning(tmp_path, room):
    path = tmp_path / "memory.sqlite"
    path.write_bytes(b"this is not a database, it is a shopping list: milk, eggs" * 200)
    s = MemoryService(str(path), encoder=WordEncoder())
    assert not s.learning and "corrupt" in s.error and str(path) in s.error
    assert s.list(kind="seed")                                   # the seed examples still answer
    assert s.retrieve(["Please bring me my medicine."], k=1)[0].episode.key == "task/deliver-medicine"
    assert s.plan_task("Please bring me my medicine.", "deliver", ROLES, room).source.startswith("seed")
    ans = s.learn(delivery(), CORRECTION, room)
    assert not ans.stored and "cannot learn" in ans.message and "corrupt" in ans.message
    with pytest.raises(EpisodicMemoryError, match="cannot be forgotten"):
        s.forget(1)
    assert path.read_bytes().startswith(b"this is not a database")  # nothing was written to it
    s.close()


def test_a_locked_file_runs_on_without_learning(tmp_path):
    path = tmp_path / "memory.sqlite"
    MemoryService(str(path), encoder=WordEncoder()).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        s = MemoryService(str(path), encoder=WordEncoder(), busy_timeout_s=0.2)
        assert not s.learning and "locked" in s.error
        assert s.retrieve(["Please bring me my medicine."], k=1)
        s.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_learning_switched_off_keeps_the_file_unchanged(tmp_path, room):
    s = MemoryService(str(tmp_path / "m.sqlite"), encoder=WordEncoder(), learning=False)
    assert not s.learn(delivery(), CORRECTION, room).stored
    assert "switched off" in s.status()["error"] and s.list(kind="lesson") == []
    s.close()


def test_the_service_is_thread_safe_for_lookups(service, room):
    errors = []

    def look():
        try:
            for _ in range(5):
                service.retrieve(["Please bring me my medicine."], k=2)
                service.plan_task("Please bring me my medicine.", "deliver", ROLES, room)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=look) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
