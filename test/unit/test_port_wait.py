"""raider_ros.ros.port_wait: an answer, a timeout naming the port, or the server gone."""
from __future__ import annotations

import threading
import time
from concurrent.futures import Future

import pytest

from raider_ros.ros.port_wait import wait_answer


def test_the_answer_when_it_comes():
    f: Future = Future()
    threading.Timer(0.05, f.set_result, args=("answer",)).start()
    assert wait_answer(f, 5.0, "detect_issue") == "answer"


def test_an_answer_already_there_needs_no_wait():
    f: Future = Future()
    f.set_result(3)
    assert wait_answer(f, 0.0, "x", alive=lambda: False) == 3


def test_no_answer_within_the_timeout_names_the_port():
    f: Future = Future()
    t0 = time.monotonic()
    with pytest.raises(TimeoutError, match=r"^plan_recovery: no answer within 0.3 s"):
        wait_answer(f, 0.3, "plan_recovery")
    assert 0.25 < time.monotonic() - t0 < 2.0


def test_a_server_gone_while_waiting_fails_at_once_naming_it():
    f: Future = Future()
    gone = threading.Event()
    threading.Timer(0.2, gone.set).start()
    t0 = time.monotonic()
    with pytest.raises(ConnectionError, match=r"^human/ask: the server went away while the request was open"):
        wait_answer(f, 30.0, "human/ask", alive=lambda: not gone.is_set())
    assert time.monotonic() - t0 < 2.0


def test_an_error_of_the_request_itself_is_raised():
    f: Future = Future()
    f.set_exception(ValueError("bad request"))
    with pytest.raises(ValueError, match="bad request"):
        wait_answer(f, 1.0, "x")
