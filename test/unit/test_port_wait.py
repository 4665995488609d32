"""raider_ros.ros.port_wait: an answer, a timeout naming the port, or the server gone."""
from __future__ import annotations

import threading
import time
from concurrent.futures import Future

import pytest

from raider_ros.ros.port_wait import ServerGone, ask_once_more, wait_answer


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


def _gone(what="execute_skill"):
    f: Future = Future()
    return f, (lambda fut: wait_answer(fut, 5.0, what, alive=lambda: False))


def test_a_request_lost_with_its_server_is_sent_once_more_when_a_server_is_back():
    # the respawn race: the request went to the dead server only, then it left DDS
    sent, notes = [], []
    answered: Future = Future()
    answered.set_result("accepted")
    futures = [Future(), answered]

    def send():
        sent.append(1)
        return futures[len(sent) - 1]
    alive = iter([False])           # the first wait sees no server; the second is answered at once
    got = ask_once_more(send, lambda f: wait_answer(f, 5.0, "execute_skill", alive=lambda: next(alive, True)),
                        lambda: True, "execute_skill", notes.append)
    assert got == "accepted" and len(sent) == 2
    assert notes and "sent once more" in notes[0] and notes[0].startswith("execute_skill")


def test_no_server_back_names_the_port_and_sends_nothing_more():
    sent = []
    f, wait = _gone()

    def send():
        sent.append(1)
        return f
    with pytest.raises(ServerGone, match=r"^execute_skill: the server went away.*no server came back"):
        ask_once_more(send, wait, lambda: False, "execute_skill")
    assert len(sent) == 1


def test_a_second_loss_is_not_retried_again():
    sent, backs = [], []
    f, wait = _gone("human/ask")

    def send():
        sent.append(1)
        return f

    def back():
        backs.append(1)
        return True
    with pytest.raises(ServerGone, match=r"^human/ask: the server went away"):
        ask_once_more(send, wait, back, "human/ask")
    assert len(sent) == 2 and len(backs) == 1


def test_other_failures_are_not_retried():
    sent = []

    def send():
        sent.append(1)
        return Future()
    with pytest.raises(TimeoutError):
        ask_once_more(send, lambda f: wait_answer(f, 0.1, "plan_recovery"), lambda: True, "plan_recovery")
    assert len(sent) == 1
    assert issubclass(ServerGone, ConnectionError)       # callers catching ConnectionError still do
