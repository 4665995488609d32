"""Scene-graph retrieval as a ROS service call (scene_graph/retrieve), with the signature of
:func:`raider_ros.retrieval.agent.local_retrieve`, for the issue detector and the recovery
planner. Called from worker threads while the node spins on a MultiThreadedExecutor: it
waits on the future with an event and never spins the node itself."""
from __future__ import annotations

import threading
import time
from typing import Sequence

from raider_ros.retrieval.agent import subgraph_from_json
from raider_ros.retrieval.retriever import RetrievalError, Subgraph
from raider_ros.srv import Retrieve


class RosRetrieve:
    def __init__(self, node, service: str = "scene_graph/retrieve", callback_group=None, timeout_s: float = 30.0):
        self.service, self.timeout_s = service, timeout_s
        self.client = node.create_client(Retrieve, service, callback_group=callback_group)

    def __call__(self, task: str, context: str = "", *, mode: str | None = None, full: bool = False,
                 self_query: Sequence[str] = ()) -> Subgraph:
        end = time.monotonic() + self.timeout_s
        while not self.client.service_is_ready() and time.monotonic() < min(end, time.monotonic() + 2.0):
            time.sleep(0.02)
        if not self.client.service_is_ready():
            raise RuntimeError(f"retrieval service {self.service} is not available (is the scene_graph node running?)")
        future = self.client.call_async(Retrieve.Request(task=task, context=context or "", mode=mode or "",
                                                         full_graph=bool(full), self_query=[str(t) for t in self_query]))
        done = threading.Event()
        future.add_done_callback(lambda _f: done.set())
        if not done.wait(max(0.0, end - time.monotonic())):
            future.cancel()
            raise RuntimeError(f"no answer from {self.service} within {self.timeout_s:g} s")
        res = future.result()
        if res is None:
            raise RuntimeError(f"the call to {self.service} failed")
        if not res.success:
            raise RetrievalError(res.error or "retrieval failed")
        return subgraph_from_json(res.subgraph_json)
