"""ROS-free pieces of the issue detector's request handling, testable without rclpy.

* :class:`RequestQueue`: requests are served one at a time, in arrival order, by ONE worker
  thread of its own. Submitting never blocks the caller (a ROS callback): a request is either
  queued or refused at once with the reason (queue full). A waiting request can be cancelled,
  and one that waited past its deadline is answered with the reason instead of being run;
  :meth:`RequestQueue.sweep` answers those without waiting for the running one.
* :class:`GraphStatus` and :class:`FreshnessGate`: the scene graph's freshness (which camera
  frame and which world/truth version it reflects) and the wait until it reflects a frame
  taken after a request, with the reason when that does not happen in time. A gate that has
  found perception silent answers every later wait at once until a new status arrives.
"""
from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

Cancelled = Callable[[], bool]


class QueueRefused(Exception):
    """The request was not queued; ``str(exc)`` says why (queue full)."""


@dataclass
class Request:
    """One queued request. ``number`` counts arrivals from 1; times are time.monotonic()."""
    number: int
    payload: Any
    accepted_at: float
    deadline: float
    cancelled: Cancelled
    on_done: Callable[[Any], None]
    started_at: float | None = None
    finished: bool = field(default=False, repr=False)

    @property
    def waited_s(self) -> float:
        return (self.started_at or time.monotonic()) - self.accepted_at

    def left_s(self) -> float:
        return self.deadline - time.monotonic()


class RequestQueue:
    """FIFO served by a dedicated worker thread.

    ``handler(request) -> result`` runs one request; ``answer(request, reason) -> result``
    builds the answer for a request that is not run (cancelled while waiting, or past its
    deadline). Each request's ``on_done(result)`` is called exactly once, from the worker thread
    (or from :meth:`sweep`). ``capacity``: requests that may wait while one runs; ``deadline_s``:
    how long after its arrival a request may still start (waiting counts against it)."""

    def __init__(self, capacity: int, handler: Callable[[Request], Any],
                 answer: Callable[[Request, str], Any], deadline_s: float, name: str = "requests"):
        if capacity < 0:
            raise ValueError(f"queue capacity must be >= 0, got {capacity}")
        if deadline_s <= 0:
            raise ValueError(f"request deadline must be positive, got {deadline_s}")
        self.capacity, self.deadline_s = int(capacity), float(deadline_s)
        self.handler, self.answer, self.name = handler, answer, name
        self._cond = threading.Condition()
        self._waiting: deque[Request] = deque()
        self._running: Request | None = None
        self._numbers = itertools.count(1)
        self._stop = False
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ callers
    @property
    def waiting(self) -> int:
        with self._cond:
            return len(self._waiting)

    @property
    def running(self) -> Request | None:
        with self._cond:
            return self._running

    def submit(self, payload: Any, on_done: Callable[[Any], None], cancelled: Cancelled = lambda: False) -> Request:
        """Queue a request (returns it at once) or raise :class:`QueueRefused` with the reason."""
        with self._cond:
            if self._stop:
                raise QueueRefused(f"{self.name}: shutting down")
            busy = self._running is not None or bool(self._waiting)
            if busy and len(self._waiting) >= self.capacity:
                raise QueueRefused(f"busy: {len(self._waiting)} checks are already waiting behind the running one "
                                   f"(queue_size {self.capacity}); try again later")
            now = time.monotonic()
            req = Request(next(self._numbers), payload, now, now + self.deadline_s, cancelled, on_done)
            self._waiting.append(req)
            self._cond.notify_all()
            return req

    def sweep(self) -> int:
        """Answer every waiting request that was cancelled or is past its deadline; returns how
        many. Called periodically (a timer) so such callers never wait for the running one."""
        done = []
        with self._cond:
            for req in list(self._waiting):
                reason = self._not_run_reason(req)
                if reason:
                    self._waiting.remove(req)
                    done.append((req, reason))
        for req, reason in done:
            self._finish(req, self._safe_answer(req, reason))
        return len(done)

    # ------------------------------------------------------------------ the worker
    def start(self) -> "RequestQueue":
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name=f"{self.name}-worker", daemon=True)
                self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        """Stop taking requests; waiting ones are answered "shutting down"."""
        with self._cond:
            self._stop = True
            left = list(self._waiting)
            self._waiting.clear()
            self._cond.notify_all()
        for req in left:
            self._finish(req, self._safe_answer(req, f"{self.name}: shutting down"))
        if self._thread is not None:
            self._thread.join(timeout)

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._waiting and not self._stop:
                    self._cond.wait(0.5)
                if self._stop:
                    return
                req = self._waiting.popleft()
                reason = self._not_run_reason(req)
                if not reason:
                    req.started_at = time.monotonic()
                    self._running = req
            if reason:
                self._finish(req, self._safe_answer(req, reason))
                continue
            try:
                result = self.handler(req)
            except Exception as exc:  # noqa: BLE001 - a bug answers this request, never stops the queue
                result = self._safe_answer(req, f"internal error: {type(exc).__name__}: {exc}")
            with self._cond:
                self._running = None
            self._finish(req, result)

    def _not_run_reason(self, req: Request) -> str | None:
        try:
            if req.cancelled():
                return "cancelled while waiting in the queue"
        except Exception:  # noqa: BLE001 - a broken cancel hook counts as "not cancelled"
            pass
        if time.monotonic() >= req.deadline:
            return (f"waited {time.monotonic() - req.accepted_at:.1f} s in the queue, past the request deadline "
                    f"of {self.deadline_s:g} s (request_deadline_s); try again later")
        return None

    def _safe_answer(self, req: Request, reason: str) -> Any:
        try:
            return self.answer(req, reason)
        except Exception as exc:  # noqa: BLE001
            return f"{reason} (and the answer failed: {type(exc).__name__}: {exc})"

    @staticmethod
    def _finish(req: Request, result: Any) -> None:
        if req.finished:
            return
        req.finished = True
        req.on_done(result)


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
    """Holds the newest :class:`GraphStatus` and lets checks wait for a fresh one.

    Perception is *silent* when a status was received but none for ``silent_after_s``, or when a
    wait already failed and no status has arrived since: then a wait fails at once with the
    reason, so one detection of a dead perception serves every queued check."""

    def __init__(self, topic: str = "scene_graph/status", silent_after_s: float = 6.0,
                 missing_nodes: Callable[[], list[str]] | None = None):
        """``missing_nodes``: the perception nodes absent from the ROS graph now (the issue
        detector asks discovery); a failed wait's reason names them."""
        self.topic = topic
        self.silent_after_s = float(silent_after_s)
        self.missing_nodes = missing_nodes
        self._status = GraphStatus()
        self._cond = threading.Condition()
        self._updates = 0
        self._last_update = 0.0          # time.monotonic() of the last status
        self._failed: tuple[int, str] | None = None   # (updates when a wait failed, its reason)

    @property
    def status(self) -> GraphStatus:
        with self._cond:
            return self._status

    def update(self, status: GraphStatus) -> None:
        with self._cond:
            self._status = status
            self._updates += 1
            self._last_update = time.monotonic()
            self._cond.notify_all()

    def _silent(self) -> str | None:
        """The reason perception counts as silent now, or None (call with the lock held)."""
        if self._failed is not None and self._failed[0] == self._updates:
            return f"{self._failed[1]} (no {self.topic} since)"
        if self._updates and time.monotonic() - self._last_update > self.silent_after_s:
            return (f"perception went silent: no {self.topic} for {time.monotonic() - self._last_update:.1f} s "
                    "(is the scene_graph node or the camera down?)")
        return None

    def wait_fresh(self, since: float, timeout: float, cancelled: Cancelled = lambda: False) -> str | None:
        """Wait until the graph reflects a camera frame taken after ``since``. Returns None when
        it does, else the reason (cancelled, silent, no status at all, or stale)."""
        end = time.monotonic() + timeout
        with self._cond:
            while True:
                st = self._status
                if st.fresh_since(since):
                    return None
                if cancelled():
                    return "cancelled while waiting for a fresh perception frame"
                silent = self._silent()
                if silent:
                    return self._name_missing(silent)
                left = end - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(min(left, 0.1))
            if not st.received:
                reason = (f"perception is not running: no {self.topic} within {timeout:.1f} s "
                          "(is the scene_graph node up?)")
            elif st.frame_stamp >= since:
                reason = (f"perception is stale: {self.topic} reports a frame of world version {st.world_version} "
                          f"but the simulator truth of version {st.truth_version} after {timeout:.1f} s "
                          "(is sim/get_ground_truth answering?)")
            else:
                reason = (f"perception is stale: {self.topic} reports no camera frame newer than the "
                          f"request after {timeout:.1f} s (last frame {since - st.frame_stamp:.1f} s before it; "
                          "are the camera, object_detector, depth_distance, spatial_relations and scene_graph running?)")
            self._failed = (self._updates, reason)
            return self._name_missing(reason)

    def _name_missing(self, reason: str) -> str:
        """``reason`` with the perception nodes that discovery does not show now, if any."""
        if self.missing_nodes is None:
            return reason
        try:
            missing = list(self.missing_nodes())
        except Exception:  # noqa: BLE001 - naming the node is a help, never a second failure
            return reason
        if not missing:
            return reason
        return f"{reason}; not in the ROS graph now: {', '.join(missing)}"
