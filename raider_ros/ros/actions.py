"""``ActionClient``: rclpy's action client with the reply race closed.

rclpy 7.1 (Jazzy) sends a goal, cancel or result request and only then records the future that
waits for its reply; on a MultiThreadedExecutor the reply can be taken and looked up by another
thread in between, is dropped ("Ignoring unexpected result response"), and the future never
completes (ros2/rclpy#1123, #1308; fixed upstream after the wheels this project installs). Seen
here as a task whose executor had aborted it but whose client waited for ever, and a skill result
that never arrived (CI, test_faults and test_skills_dds). Every action client of the project is
this one: sending and recording happen under one lock, and replies are looked up under it."""
from __future__ import annotations

import threading

from rclpy.action import ActionClient as _RclpyActionClient

_REPLIES = ("goal", "cancel", "result")


class ActionClient(_RclpyActionClient):
    def __init__(self, *args, **kwargs):
        self._reply_lock = threading.RLock()    # re-entrant: a done callback may send the next request
        super().__init__(*args, **kwargs)

    def send_goal_async(self, *args, **kwargs):
        with self._reply_lock:
            return super().send_goal_async(*args, **kwargs)

    def _cancel_goal_async(self, *args, **kwargs):
        with self._reply_lock:
            return super()._cancel_goal_async(*args, **kwargs)

    def _get_result_async(self, *args, **kwargs):
        with self._reply_lock:
            return super()._get_result_async(*args, **kwargs)

    async def execute(self, taken_data):
        replies = {k: v for k, v in taken_data.items() if k in _REPLIES}
        rest = {k: v for k, v in taken_data.items() if k not in _REPLIES}
        if replies:
            # rclpy's handling of replies only looks up and completes futures: it never suspends,
            # so the lock is not held across a suspension
            with self._reply_lock:
                await super().execute(replies)
        if rest:                                    # feedback (user callbacks) and status
            await super().execute(rest)
