"""The issue detector's request handling without rclpy: FIFO admission with a bounded queue,
cancel while waiting, and the wait for a fresh perception frame."""
from __future__ import annotations

import threading
import time

import pytest

from raider_ros.ros.goal_queue import FreshnessGate, GoalQueue, GraphStatus, QueueRefused


def test_callers_run_one_at_a_time_in_arrival_order():
    q = GoalQueue(capacity=8)
    order, running = [], []

    def caller(i):
        with q.turn():
            running.append(i)
            assert len(running) == 1           # never two at once
            order.append(i)
            time.sleep(0.005)
            running.remove(i)

    held = q.enter()                           # the running check; the callers queue behind it
    threads = []
    for i in range(5):
        t = threading.Thread(target=caller, args=(i,))
        t.start()
        threads.append(t)
        while q.waiting < i + 1:               # caller i is in the queue before i + 1 arrives
            time.sleep(0.001)
    q.leave(held)
    for t in threads:
        t.join(5)
    assert order == [0, 1, 2, 3, 4]


def test_a_full_queue_refuses_with_the_reason_and_recovers():
    q = GoalQueue(capacity=1)
    first = q.enter()                          # running
    waiting = threading.Thread(target=lambda: q.leave(q.enter()))
    waiting.start()
    while q.waiting < 1:
        time.sleep(0.001)
    with pytest.raises(QueueRefused, match=r"busy: 1 checks are already waiting \(queue_size 1\)"):
        q.enter()
    q.leave(first)
    waiting.join(5)
    assert not waiting.is_alive() and q.waiting == 0
    with q.turn():                             # usable again
        pass


def test_cancel_while_waiting_leaves_the_queue():
    q = GoalQueue(capacity=4)
    first = q.enter()
    cancel = threading.Event()
    out = {}

    def waiter():
        try:
            q.enter(cancel.is_set)
        except QueueRefused as e:
            out["error"] = str(e)

    t = threading.Thread(target=waiter)
    t.start()
    while q.waiting < 1:
        time.sleep(0.001)
    cancel.set()
    t.join(5)
    assert out["error"] == "cancelled while waiting in the queue" and q.waiting == 0
    q.leave(first)


def test_negative_capacity_is_rejected():
    with pytest.raises(ValueError, match="capacity"):
        GoalQueue(-1)


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
