"""State summaries over ROS (RACCOON): message conversion and the publisher every node uses.

Every module publishes its :class:`~raider_ros.state_qa.summary.StateSummary` on the one topic
``state/summaries`` (raider_ros/msg/StateSummary) whenever its state changes; the state_qa
node keeps them. A node needs two lines::

    self.summaries = StateSummaryPublisher(self)                       # in __init__
    self.summaries.publish(lambda: summarize_issue_check(query, res))  # where the state changes

``publish`` takes a summary, a list of them, or a callable returning either. It never raises
and never blocks on anything but the summarizer itself. :class:`SummaryGate` (ROS-free) decides
what goes out:

* **only on change**: a module's summary whose text and facts equal the last one published for
  that module is dropped (stamps do not count);
* **throttled**: at most one evaluation per ``min_interval_s``; a call inside the interval is
  kept as *pending* (a newer call replaces it) and published by the timer when the interval is
  over, so the last state always goes out. A callable is evaluated only then, so a costly
  summary (a scene graph at house scale) costs at most once per interval.

The topic is reliable and transient-local with a history of ``HISTORY_DEPTH`` per publisher, so
a state_qa node that starts late still receives each module's latest summaries.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Iterable, Sequence

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Header

from raider_ros.msg import StateFact, StateSummary as StateSummaryMsg
from raider_ros.state_qa.modules import StateQAError
from raider_ros.state_qa.summary import StateSummary

TOPIC = "state/summaries"
HISTORY_DEPTH = 20
SUMMARY_QOS = QoSProfile(depth=HISTORY_DEPTH, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
DEFAULT_MIN_INTERVAL_S = 0.5

Summaries = StateSummary | Sequence[StateSummary] | None
Source = Summaries | Callable[[], Summaries]


# --------------------------------------------------------------------------- conversion
def stamp_to_msg(stamp: float):
    from builtin_interfaces.msg import Time
    sec = int(stamp // 1)
    nanosec = int(round((stamp - sec) * 1e9))
    if nanosec >= 1_000_000_000:
        sec, nanosec = sec + 1, nanosec - 1_000_000_000
    return Time(sec=max(0, sec), nanosec=max(0, nanosec))


def summary_to_msg(summary: StateSummary, source: str = "") -> StateSummaryMsg:
    return StateSummaryMsg(header=Header(stamp=stamp_to_msg(summary.stamp)), module=summary.module,
                           source=source, text=summary.text,
                           facts=[StateFact(key=k, value=v) for k, v in summary.facts])


def msg_to_summary(msg: StateSummaryMsg) -> StateSummary:
    """The core summary of a message; :class:`StateQAError` names what is wrong (an empty
    module, ...). Sizes are bounded by the core (long texts cut, extra facts dropped)."""
    stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    who = f"state summary from {msg.source or 'an unnamed node'}"
    try:
        return StateSummary.from_dict({"module": msg.module, "stamp": stamp, "text": msg.text,
                                       "facts": [(f.key, f.value) for f in msg.facts]}, source=who)
    except StateQAError as exc:
        raise StateQAError(f"{who}: {exc}") from None


# --------------------------------------------------------------------------- the gate (ROS-free)
def _as_list(value: Any) -> list[StateSummary]:
    if value is None:
        return []
    if isinstance(value, StateSummary):
        return [value]
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        out = list(value)
        bad = [type(v).__name__ for v in out if not isinstance(v, StateSummary)]
        if bad:
            raise TypeError(f"expected StateSummary items, got {bad[0]}")
        return out
    raise TypeError(f"expected a StateSummary, a list of them or a callable, got {type(value).__name__}")


class SummaryGate:
    """What to publish, and when (no ROS). ``offer(source)`` returns the summaries to publish
    now (possibly none: throttled or unchanged); ``flush()`` (called by a timer) returns those
    of a pending offer whose interval is over. ``clock`` is monotonic seconds."""

    def __init__(self, min_interval_s: float = DEFAULT_MIN_INTERVAL_S, clock: Callable[[], float] = time.monotonic):
        if not isinstance(min_interval_s, (int, float)) or min_interval_s < 0:
            raise ValueError(f"state summaries: min_interval_s must be >= 0 seconds, got {min_interval_s!r}")
        self.min_interval_s = float(min_interval_s)
        self._clock = clock
        self._lock = threading.Lock()
        self._last_eval: float | None = None
        self._pending: Source = None
        self._has_pending = False
        self._last: dict[str, tuple] = {}
        self.offered = self.evaluated = self.published = self.unchanged = 0

    @property
    def pending(self) -> bool:
        return self._has_pending

    def offer(self, source: Source) -> list[StateSummary]:
        with self._lock:
            self.offered += 1
            now = self._clock()
            if self._last_eval is not None and now - self._last_eval < self.min_interval_s:
                self._pending, self._has_pending = source, True
                return []
            self._last_eval = now
            self._pending, self._has_pending = None, False
            return self._evaluate(source)

    def flush(self) -> list[StateSummary]:
        with self._lock:
            if not self._has_pending:
                return []
            now = self._clock()
            if self._last_eval is not None and now - self._last_eval < self.min_interval_s:
                return []
            source, self._pending, self._has_pending = self._pending, None, False
            self._last_eval = now
            return self._evaluate(source)

    def _evaluate(self, source: Source) -> list[StateSummary]:
        """Called with the lock held: one summarizer runs at a time, in order."""
        self.evaluated += 1
        value = source() if callable(source) else source
        out = []
        for s in _as_list(value):
            key = (s.text, s.facts)
            if self._last.get(s.module) == key:
                self.unchanged += 1
                continue
            self._last[s.module] = key
            out.append(s)
        self.published += len(out)
        return out

    def forget(self) -> None:
        """Publish the next summary of every module even when unchanged (e.g. after a reset)."""
        with self._lock:
            self._last.clear()


# --------------------------------------------------------------------------- the ROS helper
class StateSummaryPublisher:
    """One per node: publishes the node's summaries on ``state/summaries`` through a
    :class:`SummaryGate`. Summaries are stamped with the node's clock when they go out."""

    def __init__(self, node: Any, *, min_interval_s: float = DEFAULT_MIN_INTERVAL_S, topic: str = TOPIC):
        self.node = node
        self.gate = SummaryGate(min_interval_s)
        self._source = node.get_name()
        self._pub = node.create_publisher(StateSummaryMsg, topic, SUMMARY_QOS)
        self._timer = node.create_timer(max(0.05, min_interval_s), self._flush,
                                        callback_group=MutuallyExclusiveCallbackGroup())

    def publish(self, source: Source) -> int:
        """Offer the node's current state; returns how many summaries went out now."""
        try:
            return self._send(self.gate.offer(source))
        except Exception as exc:  # noqa: BLE001 - a summarizer bug must not disturb the node's work
            self._warn(exc)
            return 0

    def _flush(self) -> None:
        if not self.gate.pending:
            return
        try:
            self._send(self.gate.flush())
        except Exception as exc:  # noqa: BLE001
            self._warn(exc)

    def _send(self, summaries: list[StateSummary]) -> int:
        if not summaries:
            return 0
        now = self.node.get_clock().now().nanoseconds * 1e-9
        for s in summaries:
            self._pub.publish(summary_to_msg(s.with_stamp(now), self._source))
        return len(summaries)

    def _warn(self, exc: Exception) -> None:
        self.node.get_logger().warning(f"state summary not published: {type(exc).__name__}: {exc}",
                                       throttle_duration_sec=10.0)


__all__ = ["TOPIC", "SUMMARY_QOS", "SummaryGate", "StateSummaryPublisher", "StateQAError", "msg_to_summary",
           "summary_to_msg", "stamp_to_msg"]
