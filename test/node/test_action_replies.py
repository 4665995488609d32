"""raider_ros.ros.actions.ActionClient: every goal reply and every result reply reaches its future,
also when replies come back at once and the client's executor has several threads (rclpy 7.1's
client could drop a reply that arrived before the future was recorded; ros2/rclpy#1123)."""
from __future__ import annotations

import threading

import pytest
from rclpy.action import ActionServer
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from raider_ros.action import ExecuteSkill
from raider_ros.ros.actions import ActionClient
from support.ros import private_context, spinning

GOALS = 300


def run_burst(client_cls, goals: int = GOALS, wait_s: float = 60.0) -> tuple[int, int]:
    """Goals sent one after another from the test thread (the next once the last was accepted,
    so the service queues never overflow) to a server that finishes each at once, the result
    asked for as soon as a goal is accepted; returns (goal replies, results) within ``wait_s``."""
    with private_context() as ctx:
        server_node, client_node = Node("burst_server", context=ctx), Node("burst_client", context=ctx)

        def execute(handle):
            handle.succeed()
            return ExecuteSkill.Result(success=True, message=handle.request.skill)
        ActionServer(server_node, ExecuteSkill, "burst_skill", execute_callback=execute,
                     callback_group=ReentrantCallbackGroup())
        client = client_cls(client_node, ExecuteSkill, "burst_skill", callback_group=ReentrantCallbackGroup())
        lock, counts, all_done = threading.Lock(), {"goal": 0, "result": 0}, threading.Event()
        accepted = threading.Semaphore(0)

        def count(what):
            with lock:
                counts[what] += 1
                if counts["result"] == goals:
                    all_done.set()

        def on_goal(f):
            count("goal")
            f.result().get_result_async().add_done_callback(lambda _r: count("result"))
            accepted.release()
        with spinning(ctx, server_node, client_node, threads=8):
            assert client.wait_for_server(timeout_sec=10)
            for i in range(goals):
                client.send_goal_async(ExecuteSkill.Goal(skill=f"s{i}", args=[])).add_done_callback(on_goal)
                if not accepted.acquire(timeout=10):
                    break                               # a goal reply was lost
            all_done.wait(wait_s)
            with lock:
                return counts["goal"], counts["result"]


def test_every_goal_and_result_reply_of_a_burst_arrives():
    assert run_burst(ActionClient) == (GOALS, GOALS)



class ReplyFirst:
    """Stands in for the client's rcl handle: sending a result request makes its reply arrive at
    once, handled by another thread (what a fast server and a second executor thread do), before
    the sender has recorded its future. Other calls go to the real handle."""

    def __init__(self, client, real):
        self.client, self.real, self.handled = client, real, threading.Event()

    def __getattr__(self, name):
        return getattr(self.real, name)

    def send_result_request(self, request):
        import asyncio
        seq = 7
        reply = ExecuteSkill.Impl.GetResultService.Response()
        threading.Thread(target=lambda: (asyncio.run(self.client.execute({"result": (seq, reply)})),
                                         self.handled.set()), daemon=True).start()
        self.handled.wait(0.5)          # rclpy's client: handled (and dropped) now; ours: blocked
        return seq


@pytest.mark.parametrize("cls, arrives", [(ActionClient, True), ("rclpy", False)], ids=["raider_ros", "rclpy"])
def test_a_result_reply_that_comes_before_its_future_is_recorded(cls, arrives):
    from rclpy.action import ActionClient as RclpyActionClient
    from rclpy.action.client import ClientGoalHandle
    cls = RclpyActionClient if cls == "rclpy" else cls
    with private_context() as ctx:
        node = Node("race_client", context=ctx)
        client = cls(node, ExecuteSkill, "race_skill")
        fake = ReplyFirst(client, client._client_handle)
        client._client_handle = fake
        try:
            handle = ClientGoalHandle(client, ExecuteSkill.Impl.SendGoalService.Request().goal_id,
                                      ExecuteSkill.Impl.SendGoalService.Response(accepted=True))
            future = client._get_result_async(handle)
            fake.handled.wait(5.0)
            assert future.done() is arrives     # the stock client's future never completes
        finally:
            client._client_handle = fake.real
            client.destroy()
            node.destroy_node()
