"""The episodic memory seen from another node: what a :class:`~raider_ros.memory.advisor.MemoryAdvisor`
needs, over ROS.

* :class:`RemoteMemory` - ``retrieve(...)`` like :meth:`EpisodicMemory.retrieve
  <raider_ros.memory.store.EpisodicMemory.retrieve>`, answered by the memory node's
  ``memory/retrieve``. A node that is down, slow or answers with an error raises
  :class:`~raider_ros.memory.store.EpisodicMemoryError`, which the advisor catches: the planner
  then goes on without the memory (fixed examples, the rules).
* :class:`GroundTruthScene` - a callable returning the current world as a
  :class:`~raider_ros.memory.adapt.SceneIndex` (from ``sim/get_ground_truth``), so a lesson's
  ids can be rebound; None when the service does not answer.

Both are called from inside a service callback of a node spun by a MultiThreadedExecutor:
they send the request with ``call_async`` and wait for the answer on an event with a time
limit, never spinning the node themselves. The node must give their clients a callback group
other callbacks can run beside (a ReentrantCallbackGroup).
"""
from __future__ import annotations

import threading
from typing import Any, Sequence

from raider_ros.memory.adapt import SceneIndex
from raider_ros.memory.episode import Episode, EpisodeError
from raider_ros.memory.service import scene_from_json
from raider_ros.memory.store import EpisodicMemoryError, Retrieved
from raider_ros.srv import GetGroundTruth, MemoryRetrieve


def wait_for(future: Any, timeout_s: float) -> Any:
    """The future's result, waited for on an event (the executor's threads complete it);
    None when it did not complete in time."""
    done = threading.Event()
    future.add_done_callback(lambda _f: done.set())
    if not done.wait(timeout_s):
        return None
    return future.result()


class RemoteMemory:
    """``retrieve`` over ``memory/retrieve``."""

    def __init__(self, node: Any, *, timeout_s: float = 10.0, callback_group: Any = None,
                 service: str = "memory/retrieve"):
        self.client = node.create_client(MemoryRetrieve, service, callback_group=callback_group)
        self.path = service
        self.timeout_s = float(timeout_s)
        self.learning: bool | None = None            # what the memory node said last

    def retrieve(self, instructions: str | Sequence[str], *, k: int = 8, gamma: float | None = None,
                 recent: int | None = None, scope: str | None = None, kind: str | None = None,
                 task: str | None = None, category: str | None = None, action: str | None = None,
                 request_embedding: Any = None) -> list[Retrieved]:
        if request_embedding is not None:
            raise EpisodicMemoryError(self.path, "io", "a request embedding cannot be sent; give the instructions")
        texts = [instructions] if isinstance(instructions, str) else list(instructions)
        if not self.client.service_is_ready():
            raise EpisodicMemoryError(self.path, "io", "the memory node does not answer (is it running?)")
        req = MemoryRetrieve.Request(instructions=[str(t) for t in texts], k=int(k), scope=scope or "",
                                     kind=kind or "", task=task or "", category=category or "", action=action or "",
                                     recent=int(recent or 0), gamma=float(gamma or 0.0))
        res = wait_for(self.client.call_async(req), self.timeout_s)
        if res is None:
            raise EpisodicMemoryError(self.path, "io", f"no answer within {self.timeout_s:g} s")
        if not res.success:
            raise EpisodicMemoryError(self.path, "io", res.message or "the memory node refused the request")
        self.learning = bool(res.learning)
        out = []
        for m in res.episodes:
            try:
                ep = Episode.from_body(m.body, episode_id=int(m.id), created=float(m.created))
            except EpisodeError as exc:
                raise EpisodicMemoryError(self.path, "io", f"the memory node sent an unreadable example: {exc}") \
                    from None
            out.append(Retrieved(ep, float(m.score), m.matched))
        return out


class GroundTruthScene:
    """``scene() -> SceneIndex | None`` from ``sim/get_ground_truth`` (the simulator, or a
    robot's knowledge-base node)."""

    def __init__(self, node: Any, *, timeout_s: float = 5.0, callback_group: Any = None,
                 service: str = "sim/get_ground_truth"):
        self.client = node.create_client(GetGroundTruth, service, callback_group=callback_group)
        self.timeout_s = float(timeout_s)
        self.logger = node.get_logger()

    def __call__(self) -> SceneIndex | None:
        scene, _text, error = self.fetch()
        if error:
            self.logger.warning(f"no scene for the memory's lessons: {error}", throttle_duration_sec=30.0)
        return scene

    def fetch(self) -> tuple[SceneIndex | None, str, str]:
        """(scene, its JSON document, '') or (None, '', why)."""
        if not self.client.wait_for_service(timeout_sec=min(self.timeout_s, 1.0)):
            return None, "", f"{self.client.srv_name} is not available"
        res = wait_for(self.client.call_async(GetGroundTruth.Request()), self.timeout_s)
        if res is None or not res.success:
            return None, "", f"{self.client.srv_name}: " + ("no answer" if res is None else res.message)
        try:
            return scene_from_json(res.truth_json), res.truth_json, ""
        except ValueError as exc:
            return None, "", f"{self.client.srv_name}: {exc}"
