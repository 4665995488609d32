"""The memory node as its own process, beside sim_world (the scene lessons are bound to), over
DDS: a lesson learned over memory/learn changes the plan of the next similar request; the node
is killed with SIGKILL right after memory/learn answered, restarted on the same file, and the
lesson is there (listed, and used for the next request). A second process started on a corrupt
file answers from the seed examples without learning."""
from __future__ import annotations

import json
import os
import signal
import time

from raider_ros.memory.interaction import Act, Interaction
from raider_ros.ros.graph import NodeGraph
from raider_ros.srv import MemoryLearn, MemoryList, MemoryPlanTask
from support.graph import GraphClient

T = 300.0         # the model loads in each memory process, on a shared and busy CPU
CORRECTION = "Thank you. Next time, bring me a glass of water with my medicine."
ROLES = ["item:Medicine_1", "source:MedicineCounter_1", "person:Person_1"]


def delivery_json() -> str:
    it = Interaction("Please bring me my medicine.", "deliver",
                     {"item": "Medicine_1", "source": "MedicineCounter_1", "person": "Person_1"},
                     "assistive_learning", "move_to(MedicineCounter_1)\npick(Medicine_1)\nmove_to(Person_1)\n"
                     "handover(Medicine_1, Person_1)", "seed task/deliver-medicine",
                     [Act("move_to", ("MedicineCounter_1",), True), Act("pick", ("Medicine_1",), True),
                      Act("move_to", ("Person_1",), True), Act("handover", ("Medicine_1", "Person_1"), True)],
                     success=True)
    return it.to_json()


def call(client: GraphClient, srv, name: str, request, timeout: float = T, attempt_s: float = 60.0):
    """Call, retrying while the service is not (yet, or again) there. ``attempt_s``: how long one
    request may go unanswered before it is sent again (only for requests that may be repeated:
    a request sent while DDS still matched the killed server is lost, not late)."""
    c = client.node.create_client(srv, name)
    end = time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            if not c.wait_for_service(timeout_sec=1.0):
                continue
            future = c.call_async(request)
            stop = min(end, time.monotonic() + attempt_s)
            while not future.done() and time.monotonic() < stop:
                time.sleep(0.05)
            if future.done() and future.result() is not None:
                return future.result()
            future.cancel()
        raise TimeoutError(f"{name}: no answer within {timeout:.0f} s")
    finally:
        client.node.destroy_client(c)


def plan(client, request="I need my medicine, could you get it for me?"):
    return call(client, MemoryPlanTask, "memory/plan_task", MemoryPlanTask.Request(request=request, task="deliver",
                                                                                      roles=ROLES))


def test_a_lesson_survives_sigkill_right_after_memory_learn_answered(tmp_path):
    db = tmp_path / "memory.sqlite"
    with NodeGraph(tmp_path / "logs") as graph:
        graph.start("sim_world", {"scene": "assistive_learning", "skill_duration_s": 0.0})
        graph.start("memory", {"database": str(db)})
        client = GraphClient(graph)
        try:
            before = plan(client)
            assert before.success and before.source == "seed task/deliver-medicine", before.message
            learned = call(client, MemoryLearn, "memory/learn", MemoryLearn.Request(
                interaction_json=delivery_json(), feedback=CORRECTION, scene_json=before.scene_json))
            proc = graph.nodes["memory"].process
            os.killpg(proc.pid, signal.SIGKILL)               # right after the answer, no clean shutdown
            proc.wait(30)
            assert proc.returncode == -signal.SIGKILL
            assert learned.stored and learned.ids, learned.reason
            graph.stop("memory")

            graph.start("memory", {"database": str(db)})
            graph.wait_up("memory", T)       # DDS still lists the killed process's services for a while
            lessons = call(client, MemoryList, "memory/list", MemoryList.Request(kind="lesson"), attempt_s=10.0)
            assert lessons.learning and [e.id for e in lessons.episodes] == list(learned.ids)
            assert lessons.episodes[0].feedback == CORRECTION
            after = plan(client)
            assert after.source == f"lesson {learned.ids[0]}", (after.source, list(after.skipped))
            assert "handover(Glass_1, Person_1)" in after.plan_text
            book = call(client, MemoryPlanTask, "memory/plan_task", MemoryPlanTask.Request(
                request="Please bring me the book.", task="deliver",
                roles=["item:Book_1", "source:SideTable_1", "person:Person_1"]))
            assert book.source == "seed task/deliver-medicine" and "Glass_1" not in book.plan_text
            graph.check_alive()
        finally:
            client.close()


def test_a_corrupt_file_leaves_the_node_running_without_learning(tmp_path):
    db = tmp_path / "memory.sqlite"
    db.write_text("not a database\n" * 100)
    with NodeGraph(tmp_path / "logs") as graph:
        graph.start("sim_world", {"scene": "assistive_learning", "skill_duration_s": 0.0})
        node = graph.start("memory", {"database": str(db)})
        client = GraphClient(graph)
        try:
            listed = call(client, MemoryList, "memory/list", MemoryList.Request())
            assert not listed.learning and "corrupt" in listed.message and listed.episodes
            assert plan(client).source == "seed task/deliver-medicine"
            ans = call(client, MemoryLearn, "memory/learn", MemoryLearn.Request(
                interaction_json=delivery_json(), feedback=CORRECTION))
            assert not ans.stored and "cannot learn" in ans.message
            graph.check_alive()
            log = node.log_path.read_text()
            assert "WITHOUT learning" in log and str(db) in log
        finally:
            client.close()
    assert db.read_text() == "not a database\n" * 100
