"""Exact-time grouping of messages that belong to one camera frame (ROS-free).

The simulator stamps RGB, depth, instance ids, CameraInfo, camera pose and instance labels
of one render with the same time; ``StampSync`` hands a complete group to its callback once
every key has arrived for a stamp, and drops stale partial groups.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable, Iterable


class StampSync:
    def __init__(self, keys: Iterable[str], callback: Callable[[dict[str, Any]], None], max_pending: int = 8):
        self.keys = frozenset(keys)
        self.callback = callback
        self.max_pending = max_pending
        self._pending: "OrderedDict[Hashable, dict[str, Any]]" = OrderedDict()
        self._lock = threading.Lock()
        self.dropped = 0

    def add(self, key: str, stamp: Hashable, msg: Any) -> None:
        if key not in self.keys:
            raise KeyError(f"unknown key {key!r}; expected one of {sorted(self.keys)}")
        complete = None
        with self._lock:
            group = self._pending.setdefault(stamp, {})
            group[key] = msg
            if len(group) == len(self.keys):
                complete = self._pending.pop(stamp)
                # everything older than a complete frame is stale
                for old in [s for s in self._pending if _older(s, stamp)]:
                    del self._pending[old]
                    self.dropped += 1
            while len(self._pending) > self.max_pending:
                self._pending.popitem(last=False)
                self.dropped += 1
        if complete is not None:
            self.callback(complete)


def _older(a: Hashable, b: Hashable) -> bool:
    try:
        return a < b  # type: ignore[operator]
    except TypeError:
        return False
