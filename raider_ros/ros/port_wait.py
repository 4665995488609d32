"""ROS-free waiting for an answer on a port (a service response, an action goal's acceptance),
testable without rclpy: the answer, or an error naming the port - no answer within the
timeout, or the server gone while the request was open.

A node killed without a goodbye leaves DDS discovery after the participant lease (~4 s with
config/fastdds.xml), so ``alive()`` (rclpy's ``service_is_ready`` / ``server_is_ready``)
turns false long before a generous timeout would expire.

A node respawned at once after a kill has the opposite race: until the old participant's lease
runs out, DDS lists both, so a request can go to the dead server only (the new one not yet
matched) and then see every server vanish. ``ask_once_more`` sends such a request again, once,
when a server is there again: the request was never answered, so no server acted on it.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable


class ServerGone(ConnectionError):
    """The server left while a request to it was open; the request was not answered."""


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
            raise ServerGone(f"{what}: the server went away while the request was open "
                                  "(its node stopped?); the request was not answered")
    return future.result()


def ask_once_more(send: Callable[[], Any], wait: Callable[[Any], Any], server_back: Callable[[], bool],
                  what: str, note: Callable[[str], None] | None = None) -> Any:
    """``wait(send())``; when the server leaves before answering (ServerGone) and ``server_back()``
    (which waits for a server, e.g. ``wait_for_service``) finds one again, the request is sent
    once more. A second loss, or no server back, raises ServerGone naming the port."""
    try:
        return wait(send())
    except ServerGone as first:
        if not server_back():
            raise ServerGone(f"{first} and no server came back") from first
        if note is not None:
            note(f"{what}: the server left before answering (a respawned node?); the request is sent once more")
        return wait(send())
