"""ROS-free waiting for an answer on a port (a service response, an action goal's acceptance),
testable without rclpy: the answer, or an error naming the port - no answer within the
timeout, or the server gone while the request was open.

A node killed without a goodbye leaves DDS discovery after the participant lease (~4 s with
config/fastdds.xml), so ``alive()`` (rclpy's ``service_is_ready`` / ``server_is_ready``)
turns false long before a generous timeout would expire.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable


def wait_answer(future: Any, timeout: float, what: str, alive: Callable[[], bool] | None = None,
                poll_s: float = 0.1) -> Any:
    """``future.result()`` once ``future`` (anything with ``add_done_callback`` and ``result``)
    is done; TimeoutError after ``timeout`` seconds, ConnectionError as soon as ``alive()`` is
    false while waiting."""
    done = threading.Event()
    future.add_done_callback(lambda _f: done.set())
    end = time.monotonic() + timeout
    while not done.wait(min(poll_s, max(0.0, end - time.monotonic()))):
        if time.monotonic() >= end:
            raise TimeoutError(f"{what}: no answer within {timeout:g} s")
        if alive is not None and not alive():
            raise ConnectionError(f"{what}: the server went away while the request was open "
                                  "(its node stopped?); the request was not answered")
    return future.result()
