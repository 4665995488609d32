"""The agent's tools as ROS service calls (scene_graph/call_tool).

``RosToolExecutor.call`` is made from the agent's worker threads while the node spins on a
MultiThreadedExecutor: it sends the request with ``call_async`` and waits on the future with
an event, bounded by the agent's deadline. It never spins the node itself, so it is safe to
use from inside an action or service callback.
"""
from __future__ import annotations

import json
import threading
import time
from typing import Any, Sequence

from raider_ros.common.limits import tool_args_problem
from raider_ros.common.tool_contract import ToolExecutorBase, ToolResult
from raider_ros.srv import CallTool


class RosToolExecutor(ToolExecutorBase):
    def __init__(self, node, service: str = "scene_graph/call_tool", callback_group=None,
                 call_timeout_s: float = 5.0):
        self.node = node
        self.service = service
        self.call_timeout_s = call_timeout_s
        self.client = node.create_client(CallTool, service, callback_group=callback_group)

    def available(self) -> bool:
        return self.client.service_is_ready()

    def call(self, name: str, args: Sequence[Any], *, deadline: float) -> ToolResult:
        budget = min(deadline - time.monotonic(), self.call_timeout_s)
        if budget <= 0:
            return ToolResult.fail(f"time limit reached before {name} was called")
        if not self.client.service_is_ready():
            # give discovery a moment (a restarted node), within the budget
            end = time.monotonic() + min(budget, 1.0)
            while not self.client.service_is_ready() and time.monotonic() < end:
                time.sleep(0.02)
            if not self.client.service_is_ready():
                return ToolResult.unavailable(f"perception service {self.service} is not available "
                                              f"(is the scene_graph node running?)")
        texts = [_arg_text(a) for a in args]
        problem = tool_args_problem(str(name), texts)    # ROS would cut a NUL short; size is bounded
        if problem:
            return ToolResult.fail(f"argument refused: {problem}")
        req = CallTool.Request(tool=str(name), args=texts)
        future = self.client.call_async(req)
        done = threading.Event()
        future.add_done_callback(lambda _f: done.set())
        if not done.wait(max(0.0, min(deadline - time.monotonic(), self.call_timeout_s))):
            future.cancel()
            if deadline - time.monotonic() <= 0:
                return ToolResult.fail(f"time limit reached before {self.service} answered {name}")
            return ToolResult.unavailable(f"no answer from {self.service} for {name} within "
                                          f"{self.call_timeout_s:.1f} s (perception node stopped?)")
        res = future.result()
        if res is None:
            return ToolResult.unavailable(f"the call to {self.service} for {name} failed")
        if res.success:
            try:
                data = json.loads(res.result)
            except json.JSONDecodeError:
                data = res.result
            return ToolResult(True, res.result, data)
        data = None
        if res.result:
            try:
                data = json.loads(res.result)
            except json.JSONDecodeError:
                data = None
        return ToolResult(False, res.result or res.error, data, res.error or "tool call failed")

    def destroy(self) -> None:
        self.node.destroy_client(self.client)


def _arg_text(a: Any) -> str:
    return a if isinstance(a, str) else json.dumps(a)
