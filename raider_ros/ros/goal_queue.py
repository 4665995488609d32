"""ROS-free pieces of the issue detector's request handling, testable without rclpy.

* :class:`GoalQueue`: checks run one at a time in arrival order; past ``capacity`` waiting
  callers a new one is refused at once with the reason; a waiting caller can cancel.
* :class:`GraphStatus` and :class:`FreshnessGate`: the scene graph's freshness (which camera
  frame and which world/truth version it reflects) and the wait until it reflects a frame
  taken after a request, with the reason when that does not happen in time.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

Cancelled = Callable[[], bool]


class QueueRefused(Exception):
    """The caller did not get a turn; ``str(exc)`` says why (queue full, cancelled)."""


class GoalQueue:
    """FIFO admission: ``with queue.turn(cancelled): ...`` runs the body when it is this
    caller's turn. Raises :class:`QueueRefused` when ``capacity`` callers already wait or the
    caller cancels while waiting."""

    def __init__(self, capacity: int):
        if capacity < 0:
            raise ValueError(f"queue capacity must be >= 0, got {capacity}")
        self.capacity = capacity
        self._cond = threading.Condition()
        self._tickets: list[int] = []
        self._next = 0

    @property
    def waiting(self) -> int:
        """Callers waiting behind the running one."""
        with self._cond:
            return max(0, len(self._tickets) - 1)

    def enter(self, cancelled: Cancelled = lambda: False) -> int:
        with self._cond:
            if len(self._tickets) > self.capacity:
                raise QueueRefused(f"busy: {len(self._tickets) - 1} checks are already waiting "
                                   f"(queue_size {self.capacity}); try again later")
            ticket = self._next
            self._next += 1
            self._tickets.append(ticket)
            while self._tickets[0] != ticket:
                if cancelled():
                    self._tickets.remove(ticket)
                    self._cond.notify_all()
                    raise QueueRefused("cancelled while waiting in the queue")
                self._cond.wait(0.1)
            return ticket

    def leave(self, ticket: int) -> None:
        with self._cond:
            self._tickets.remove(ticket)
            self._cond.notify_all()

    def turn(self, cancelled: Cancelled = lambda: False) -> "_Turn":
        return _Turn(self, cancelled)


class _Turn:
    def __init__(self, queue: GoalQueue, cancelled: Cancelled):
        self.queue, self.cancelled, self.ticket = queue, cancelled, -1

    def __enter__(self) -> int:
        self.ticket = self.queue.enter(self.cancelled)
        return self.ticket

    def __exit__(self, *exc) -> None:
        self.queue.leave(self.ticket)


@dataclass(frozen=True)
class GraphStatus:
    """What the scene graph reflects (the fields of raider_ros/msg/SceneGraphStatus)."""
    frame_stamp: float = 0.0       # seconds; 0 = no frame yet
    world_version: int = -1
    truth_version: int = -1
    objects: int = 0
    people: int = 0

    @property
    def received(self) -> bool:
        return self.world_version >= 0 or self.frame_stamp > 0

    def fresh_since(self, since: float) -> bool:
        """Reflects a frame taken at or after ``since`` and the truth of that frame's world."""
        return self.frame_stamp >= since and self.truth_version >= self.world_version


class FreshnessGate:
    """Holds the newest :class:`GraphStatus` and lets checks wait for a fresh one."""

    def __init__(self, topic: str = "scene_graph/status"):
        self.topic = topic
        self._status = GraphStatus()
        self._cond = threading.Condition()

    @property
    def status(self) -> GraphStatus:
        with self._cond:
            return self._status

    def update(self, status: GraphStatus) -> None:
        with self._cond:
            self._status = status
            self._cond.notify_all()

    def wait_fresh(self, since: float, timeout: float, cancelled: Cancelled = lambda: False) -> str | None:
        """Wait until the graph reflects a camera frame taken after ``since``. Returns None when
        it does, else the reason (cancelled, no status at all, or stale), naming what to check."""
        end = time.monotonic() + timeout
        with self._cond:
            while True:
                st = self._status
                if st.fresh_since(since):
                    return None
                if cancelled():
                    return "cancelled while waiting for a fresh perception frame"
                left = end - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(min(left, 0.1))
        if not st.received:
            return (f"perception is not running: no {self.topic} within {timeout:.1f} s "
                    "(is the scene_graph node up?)")
        return (f"perception is stale: {self.topic} reports no camera frame newer than the "
                f"request after {timeout:.1f} s (last frame {since - st.frame_stamp:.1f} s before it; "
                "are the camera, object_detector, depth_distance, spatial_relations and scene_graph running?)")
