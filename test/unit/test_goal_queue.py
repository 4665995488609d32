"""The issue detector's request handling without rclpy: a FIFO served by one worker thread with
a bounded queue, cancel and deadline while waiting, and the wait for a fresh perception frame
(with one detection of a silent perception serving every later wait)."""
from __future__ import annotations

import threading
import time

import pytest

from raider_ros.ros.goal_queue import FreshnessGate, GraphStatus, QueueRefused, RequestQueue


class Recorder:
    """A RequestQueue whose handler records what ran, on which thread, and can be held."""

    def __init__(self, capacity=8, deadline_s=60.0):
        self.ran, self.threads, self.answers = [], set(), {}
        self.gate = threading.Event()
        self.gate.set()
        self.q = RequestQueue(capacity, self.handle, lambda req, why: f"not run: {why}", deadline_s).start()

    def handle(self, req):
        self.threads.add(threading.current_thread().name)
        self.gate.wait(10)
        self.ran.append(req.payload)
        return f"ran {req.payload}"

    def submit(self, payload, cancelled=lambda: False):
        done = threading.Event()

        def on_done(result):
            self.answers[payload] = result
            done.set()
        req = self.q.submit(payload, on_done, cancelled)
        return req, done


def test_requests_run_one_at_a_time_in_arrival_order_on_one_worker():
    r = Recorder()
    r.gate.clear()                              # hold the first so the others queue behind it
    subs = [r.submit(i) for i in range(6)]      # submit returns at once: callers never block
    assert [req.number for req, _ in subs] == [1, 2, 3, 4, 5, 6]
    r.gate.set()
    assert all(done.wait(10) for _, done in subs)
    assert r.ran == [0, 1, 2, 3, 4, 5] and r.threads == {"requests-worker"}
    assert r.answers == {i: f"ran {i}" for i in range(6)}
    r.q.stop()


def test_a_full_queue_refuses_at_once_with_the_reason_and_recovers():
    r = Recorder(capacity=2)
    r.gate.clear()
    first, _ = r.submit("a")
    while r.q.running is None:                  # "a" runs, the next two wait
        time.sleep(0.001)
    r.submit("b")
    r.submit("c")
    with pytest.raises(QueueRefused, match=r"busy: 2 checks are already waiting behind the running one \(queue_size 2\)"):
        r.submit("d")
    r.gate.set()
    while r.q.waiting or r.q.running:
        time.sleep(0.005)
    _, done = r.submit("e")                     # usable again
    assert done.wait(10) and r.ran == ["a", "b", "c", "e"]
    r.q.stop()


def test_cancelled_and_expired_waiting_requests_are_answered_by_sweep_without_running():
    r = Recorder(deadline_s=0.3)
    r.gate.clear()
    r.submit("running")
    while r.q.running is None:
        time.sleep(0.001)
    cancel = threading.Event()
    _, cancelled_done = r.submit("cancelled", cancel.is_set)
    _, expired_done = r.submit("expired")
    cancel.set()
    assert r.q.sweep() == 1 and cancelled_done.is_set()
    assert r.answers["cancelled"] == "not run: cancelled while waiting in the queue"
    deadline = time.monotonic() + 10            # the waiting one passes its deadline; sweep answers it
    while not expired_done.is_set() and time.monotonic() < deadline:
        r.q.sweep()
        time.sleep(0.05)
    assert "past the request deadline of 0.3 s" in r.answers["expired"]
    r.gate.set()
    r.q.stop()
    assert r.ran == ["running"]


def test_a_failing_handler_answers_its_request_and_the_queue_goes_on():
    answers = []
    q = RequestQueue(4, lambda req: 1 / req.payload, lambda req, why: why, 10.0).start()
    done = threading.Event()
    q.submit(0, answers.append)
    q.submit(2, lambda res: (answers.append(res), done.set()))
    assert done.wait(10)
    assert answers[0].startswith("internal error: ZeroDivisionError") and answers[1] == 0.5
    q.stop()


def test_stop_answers_the_waiting_requests():
    r = Recorder()
    r.gate.clear()
    r.submit("a")
    while r.q.running is None:
        time.sleep(0.001)
    _, done = r.submit("b")
    threading.Timer(0.1, r.gate.set).start()
    r.q.stop()
    assert done.is_set() and "shutting down" in r.answers["b"]


def test_bad_settings_are_rejected():
    with pytest.raises(ValueError, match="capacity"):
        RequestQueue(-1, print, print, 1.0)
    with pytest.raises(ValueError, match="deadline"):
        RequestQueue(1, print, print, 0.0)


def test_fresh_frame_wait_returns_when_a_newer_frame_with_its_truth_arrives():
    gate = FreshnessGate()
    gate.update(GraphStatus(frame_stamp=10.0, world_version=3, truth_version=3))
    assert gate.wait_fresh(9.5, timeout=0.1) is None                   # already fresh
    timer = threading.Timer(0.05, gate.update, [GraphStatus(frame_stamp=12.0, world_version=4, truth_version=4)])
    timer.start()
    assert gate.wait_fresh(11.0, timeout=2.0) is None
    # a newer frame whose world the truth has not caught up with is not fresh
    gate.update(GraphStatus(frame_stamp=13.0, world_version=5, truth_version=4))
    assert "perception is stale" in gate.wait_fresh(12.5, timeout=0.05)


def test_no_status_at_all_names_the_scene_graph_node():
    reason = FreshnessGate("scene_graph/status").wait_fresh(1.0, timeout=0.05)
    assert reason.startswith("perception is not running: no scene_graph/status within 0.1 s")


def test_stale_status_says_how_old_and_what_to_check():
    gate = FreshnessGate()
    gate.update(GraphStatus(frame_stamp=5.0, world_version=1, truth_version=1))
    reason = gate.wait_fresh(8.0, timeout=0.05)
    assert "last frame 3.0 s before it" in reason and "object_detector" in reason


def test_cancel_ends_the_fresh_frame_wait():
    gate = FreshnessGate()
    t0 = time.monotonic()
    assert gate.wait_fresh(1.0, timeout=5.0, cancelled=lambda: True) == \
        "cancelled while waiting for a fresh perception frame"
    assert time.monotonic() - t0 < 1.0


def test_one_failed_wait_serves_every_later_wait_until_a_status_arrives():
    gate = FreshnessGate(silent_after_s=60.0)
    first = gate.wait_fresh(1.0, timeout=0.2)
    assert first.startswith("perception is not running")
    again = gate.wait_fresh(1.0, timeout=60.0)             # answered from the first failure ("since")
    assert again.startswith("perception is not running") and again.endswith("(no scene_graph/status since)")
    gate.update(GraphStatus(frame_stamp=2.0, world_version=1, truth_version=1))
    assert gate.wait_fresh(1.5, timeout=1.0) is None        # a status arrived: waits normally again


def test_a_status_gone_silent_fails_a_wait_at_once():
    gate = FreshnessGate(silent_after_s=0.05)
    gate.update(GraphStatus(frame_stamp=1.0, world_version=1, truth_version=1))
    time.sleep(0.1)
    reason = gate.wait_fresh(5.0, timeout=30.0)
    assert reason.startswith("perception went silent: no scene_graph/status for")


def test_a_failed_wait_names_the_perception_nodes_missing_from_the_graph():
    gate = FreshnessGate(missing_nodes=lambda: ["depth_distance"])
    gate.update(GraphStatus(frame_stamp=10.0, world_version=1, truth_version=1))
    reason = gate.wait_fresh(12.5, timeout=0.05)
    assert "perception is stale" in reason and reason.endswith("not in the ROS graph now: depth_distance")
    # nothing missing: the reason as before; a failing lookup never replaces the reason
    assert "not in the ROS graph" not in FreshnessGate(missing_nodes=list).wait_fresh(1.0, timeout=0.05)

    def broken():
        raise RuntimeError("graph query failed")
    assert "not in the ROS graph" not in FreshnessGate(missing_nodes=broken).wait_fresh(1.0, timeout=0.05)
