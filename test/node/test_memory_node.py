"""The memory node in a private Context (with the packaged MiniLM model), the world played by a
fake sim/get_ground_truth: list, get, forget, retrieve, plan_task and learn over ROS; a lesson
changes the next plan of a similar request and not of a dissimilar one; an improved plan the
interpreter rejects is not stored and the answer says why; a corrupt database file leaves the
node running WITHOUT learning, answering from the seed examples.

Then the whole wiring without perception: plan_executor runs a request planned by the memory
node, asks the scripted person for feedback, sends the interaction to memory/learn and says the
answer; the next request like it is carried out with the lesson (the glass brought too)."""
from __future__ import annotations

import json
from collections import Counter

import yaml
from rclpy.action import ActionServer
from raider_ros.ros.actions import ActionClient
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import String

from raider_ros.action import ExecuteSkill, ExecuteTask
from raider_ros.common.paths import scenes_dir
from raider_ros.memory.interaction import Act, Interaction, Recovery
from raider_ros.nodes.human_interface import HumanInterfaceNode
from raider_ros.nodes.memory import MemoryNode
from raider_ros.nodes.plan_executor import PlanExecutorNode
from raider_ros.nodes.recovery_planner import RecoveryPlannerNode
from raider_ros.ros.qos import LATCHED
from raider_ros.sim.scene import load_scene, scene_to_dict
from raider_ros.srv import (
    ApplySetup, DetectIssue, GetGroundTruth, MemoryForget, MemoryGet, MemoryLearn, MemoryList, MemoryPlanTask,
    MemoryRetrieve,
)
from support.ros import call, params, private_context, spinning, wait_future, wait_until

CORRECTION = "Thank you. Next time, bring me a glass of water with my medicine."
ROLES = ["item:Medicine_1", "source:MedicineCounter_1", "person:Person_1"]
BOOK = ["item:Book_1", "source:SideTable_1", "person:Person_1"]
T = 120.0          # generous: the model loads on a shared, busy CPU


def room_json() -> str:
    return json.dumps(scene_to_dict(load_scene(scenes_dir() / "assistive_learning.scene.yaml")))


class FakeWorld(Node):
    """sim/get_ground_truth with the assistive_learning room; for the executor also detect_issue
    (no issue), execute_skill (every skill succeeds, counted) and sim/apply_setup."""

    def __init__(self, context):
        super().__init__("fake_world", context=context)
        self.truth = room_json()
        self.skills: list[tuple[str, tuple]] = []
        self.calls: Counter = Counter()
        g = ReentrantCallbackGroup()
        self.create_service(GetGroundTruth, "sim/get_ground_truth", self._truth, callback_group=g)
        self.create_service(DetectIssue, "detect_issue", self._detect, callback_group=g)
        self.create_service(ApplySetup, "sim/apply_setup", self._setup, callback_group=g)
        self.action = ActionServer(self, ExecuteSkill, "execute_skill", self._skill, callback_group=g)

    def _truth(self, _req, res):
        self.calls["truth"] += 1
        res.success, res.truth_json, res.scene_name = True, self.truth, "assistive_learning"
        return res

    def _detect(self, req, res):
        self.calls["detect"] += 1
        res.status, res.issue = "ok", "none"
        return res

    def _setup(self, _req, res):
        res.success = True
        return res

    def _skill(self, goal_handle):
        self.skills.append((goal_handle.request.skill, tuple(goal_handle.request.args)))
        goal_handle.succeed()
        return ExecuteSkill.Result(success=True, message="ok")


class Client(Node):
    def __init__(self, context):
        super().__init__("memory_client", context=context)
        self.list = self.create_client(MemoryList, "memory/list")
        self.get = self.create_client(MemoryGet, "memory/get")
        self.forget = self.create_client(MemoryForget, "memory/forget")
        self.retrieve = self.create_client(MemoryRetrieve, "memory/retrieve")
        self.plan = self.create_client(MemoryPlanTask, "memory/plan_task")
        self.learn = self.create_client(MemoryLearn, "memory/learn")
        self.status: list[dict] = []
        self.dialogue: list[str] = []
        self.create_subscription(String, "memory/status", lambda m: self.status.append(json.loads(m.data)), LATCHED)
        self.create_subscription(String, "human/dialogue", lambda m: self.dialogue.append(m.data), 50)


def delivery_json() -> str:
    """The medicine delivery as the executor records it: the chair cleared by asking, then done."""
    it = Interaction("Please bring me my medicine.", "deliver",
                     {"item": "Medicine_1", "source": "MedicineCounter_1", "person": "Person_1"},
                     "assistive_learning", "move_to(MedicineCounter_1)\npick(Medicine_1)\nmove_to(Person_1)\n"
                     "handover(Medicine_1, Person_1)", "seed task/deliver-medicine")
    it.acts = [Act("ask", ("The chair is in my way. Could you move it aside, please?",), True, "Sure.",
                   "recovery", 0),
               Act("move_to", ("MedicineCounter_1",), True), Act("pick", ("Medicine_1",), True),
               Act("move_to", ("Person_1",), True), Act("handover", ("Medicine_1", "Person_1"), True)]
    it.recoveries = [Recovery("approach", ("MedicineCounter_1",), "unfeasibility", "IU2",
                              "the path is blocked by Chair_1", None,
                              'ask("The chair is in my way. Could you move it aside, please?")', "rules (no LLM)")]
    it.success = True
    return it.to_json()


def plan_of(client, request: str, roles=ROLES):
    return call(client.plan, MemoryPlanTask.Request(request=request, task="deliver", roles=roles), T)


def test_list_retrieve_plan_learn_forget_over_ros(tmp_path):
    with private_context() as ctx:
        world = FakeWorld(ctx)
        memory = MemoryNode(context=ctx, parameter_overrides=params(database=str(tmp_path / "memory.sqlite"),
                                                                    warm_up=False))
        client = Client(ctx)
        with spinning(ctx, world, memory, client, threads=6):
            seeds = call(client.list, MemoryList.Request(kind="seed"), T)
            assert seeds.success and seeds.learning and len(seeds.episodes) >= 10
            assert wait_until(lambda: client.status and client.status[-1]["learning"], T, what="memory/status")
            seed = next(e for e in seeds.episodes if json.loads(e.body).get("key") == "task/deliver-medicine")
            refused = call(client.forget, MemoryForget.Request(id=seed.id), T)
            assert not refused.success and "seed" in refused.message
            bad = call(client.list, MemoryList.Request(kind="lessons"), T)
            assert not bad.success and "kind" in bad.message

            hits = call(client.retrieve, MemoryRetrieve.Request(instructions=["Please bring me my medicine."], k=3,
                                                                scope="task"), T)
            assert hits.success and len(hits.episodes) == 3 and hits.episodes[0].id == seed.id
            assert hits.episodes[0].score >= hits.episodes[1].score >= hits.episodes[2].score
            assert not call(client.retrieve, MemoryRetrieve.Request(instructions=["x"], k=-1), T).success

            before = plan_of(client, "Please bring me my medicine.")
            assert before.success and before.source == "seed task/deliver-medicine", before.message
            assert [s.action for s in before.steps] == ["move_to", "pick", "move_to", "handover"]
            assert json.loads(before.scene_json)["name"] == "assistive_learning"

            learned = call(client.learn, MemoryLearn.Request(interaction_json=delivery_json(), feedback=CORRECTION,
                                                             feedback_kind="learn", scene_json=before.scene_json), T)
            assert learned.stored and len(learned.ids) == 1, learned.reason
            assert "remember" in learned.message and learned.backend == "rules (no LLM)"
            assert wait_until(lambda: client.status[-1]["lessons"] == 1, T, what="status after learning")

            similar = plan_of(client, "I need my medicine, could you get it for me?")
            assert similar.success and similar.source == f"lesson {learned.ids[0]}", (similar.source, similar.skipped)
            assert "handover(Glass_1, Person_1)" in similar.plan_text
            book = plan_of(client, "Please bring me the book.", BOOK)
            assert book.source == "seed task/deliver-medicine" and "Glass_1" not in book.plan_text
            assert any("not like" in s for s in book.skipped), book.skipped

            got = call(client.get, MemoryGet.Request(id=learned.ids[0]), T)
            assert got.success and got.episode.kind == "lesson" and got.episode.feedback == CORRECTION
            assert json.loads(got.episode.body)["runs"][0]["source"] == "seed task/deliver-medicine"
            assert not call(client.get, MemoryGet.Request(id=9999), T).success

            unread = call(client.learn, MemoryLearn.Request(interaction_json="{", feedback=CORRECTION), T)
            assert not unread.stored and "JSON" in unread.reason and unread.message

            gone = call(client.forget, MemoryForget.Request(id=learned.ids[0]), T)
            assert gone.success and gone.episode.id == learned.ids[0]
            assert plan_of(client, "I need my medicine, could you get it for me?").source.startswith("seed")
            assert call(client.list, MemoryList.Request(kind="lesson"), T).episodes == []


def test_a_rejected_improved_plan_is_not_stored_and_the_answer_says_why(tmp_path):
    fixture = tmp_path / "improver.yaml"
    fixture.write_text(yaml.safe_dump({"format": "raider-llm-script/1", "responses": [
        "The robot did not bring water.", "Bring a glass of water too.",
        "import os\nmove_to(SideTable_1)\npick(Glass_1)"]}))
    with private_context() as ctx:
        world = FakeWorld(ctx)
        memory = MemoryNode(context=ctx, parameter_overrides=params(
            database=str(tmp_path / "memory.sqlite"), improver="scripted", fixture=str(fixture), warm_up=False))
        client = Client(ctx)
        with spinning(ctx, world, memory, client, threads=6):
            ans = call(client.learn, MemoryLearn.Request(interaction_json=delivery_json(), feedback=CORRECTION,
                                                         feedback_kind="correction"), T)
            assert not ans.stored and "rejected" in ans.reason and "import" in ans.reason
            assert ans.message.startswith("I could not learn from that") and "rejected" in ans.message
            assert ans.backend.startswith("scripted")
            assert world.calls["truth"] >= 1                        # no scene given: it asked the world
            assert call(client.list, MemoryList.Request(kind="lesson"), T).episodes == []


def test_a_corrupt_database_runs_on_without_learning(tmp_path):
    db = tmp_path / "memory.sqlite"
    db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 8192)
    with private_context() as ctx:
        world = FakeWorld(ctx)
        memory = MemoryNode(context=ctx, parameter_overrides=params(database=str(db), warm_up=False))
        client = Client(ctx)
        with spinning(ctx, world, memory, client, threads=6):
            status = wait_until(lambda: client.status and client.status[-1], T, what="memory/status")
            assert status["learning"] is False and str(db) in status["error"] and status["seeds"] >= 10
            listed = call(client.list, MemoryList.Request(), T)
            assert listed.success and not listed.learning and "not learning" in listed.message
            hits = call(client.retrieve, MemoryRetrieve.Request(instructions=["Please bring me my medicine."], k=1), T)
            assert hits.success and not hits.learning and hits.episodes[0].kind == "seed"
            assert plan_of(client, "Please bring me my medicine.").source == "seed task/deliver-medicine"
            ans = call(client.learn, MemoryLearn.Request(interaction_json=delivery_json(), feedback=CORRECTION), T)
            assert not ans.stored and "cannot learn" in ans.message
    assert db.read_bytes()[16:32] == b"\xff" * 16                   # the file was left as it was


SCENARIO = {"format": "raider-scenario/1", "name": "learning", "order": "any", "entries": [
    {"match": {"keywords": ["differently", "next time"]}, "answer": CORRECTION},
    {"match": {"keywords": ["differently", "next time"]}, "answer": "Perfect, thank you.", "times": 5},
]}


def test_the_executor_learns_from_the_persons_feedback_and_the_next_request_changes(tmp_path):
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    with private_context() as ctx:
        world = FakeWorld(ctx)
        memory = MemoryNode(context=ctx, parameter_overrides=params(database=str(tmp_path / "memory.sqlite")))
        planner = RecoveryPlannerNode(context=ctx)
        human = HumanInterfaceNode(context=ctx, parameter_overrides=params(backend="scripted", scenario=str(scenario),
                                                                           names_for_people=False))
        # a quarter of skill_timeout_s is the wait for the skill server to be discovered (5 s here)
        executor = PlanExecutorNode(context=ctx, parameter_overrides=params(skill_timeout_s=20.0))
        client = Client(ctx)
        with spinning(ctx, world, memory, planner, human, executor, client, threads=10):
            ac = ActionClient(client, ExecuteTask, "execute_task")
            assert ac.wait_for_server(timeout_sec=30)
            assert client.plan.wait_for_service(timeout_sec=30)

            def run(request: str, roles):
                handle = wait_future(ac.send_goal_async(ExecuteTask.Goal(request=request, task_kind="deliver",
                                                                         roles=roles)), 30)
                assert handle.accepted
                return wait_future(handle.get_result_async(), 2 * T).result

            first = run("Please bring me my medicine.", ROLES)
            assert first.success, first.message
            assert first.plan_source == "seed task/deliver-medicine"
            assert first.lesson.startswith("learned lesson"), first.lesson
            assert any(line.startswith("ROBOT: Thank you, I will remember that") for line in client.dialogue), \
                client.dialogue
            assert world.skills == [("move_to", ("MedicineCounter_1",)), ("pick", ("Medicine_1",)),
                                    ("move_to", ("Person_1",)), ("handover", ("Medicine_1", "Person_1"))]
            (lesson,) = call(client.list, MemoryList.Request(kind="lesson"), T).episodes
            assert lesson.feedback == CORRECTION
            body = json.loads(lesson.body)
            assert body["dialogue"][0] == ["person", "Please bring me my medicine."]

            world.skills.clear()
            second = run("I need my medicine, could you get it for me?", ROLES)
            assert second.success and second.plan_source == f"lesson {lesson.id}", (second.plan_source, second.message)
            assert ("handover", ("Glass_1", "Person_1")) in world.skills
            assert ("handover", ("Medicine_1", "Person_1")) in world.skills
            assert second.lesson == ""                                  # "Perfect, thank you." teaches nothing

            world.skills.clear()
            book = run("Please bring me the book.", BOOK)
            assert book.success and book.plan_source == "seed task/deliver-medicine"
            assert world.skills == [("move_to", ("SideTable_1",)), ("pick", ("Book_1",)),
                                    ("move_to", ("Person_1",)), ("handover", ("Book_1", "Person_1"))]
            assert call(client.list, MemoryList.Request(kind="lesson"), T).episodes[0].id == lesson.id
