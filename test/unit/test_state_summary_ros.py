"""State summaries over ROS without a running ROS: message conversion both ways (bounds and
errors kept from the core) and the publisher's gate (only on change, throttled, the last state
always flushed, a costly summarizer evaluated at most once per interval)."""
from __future__ import annotations

import math

import pytest

from raider_ros.msg import StateFact, StateSummary as StateSummaryMsg
from raider_ros.ros.state_summary import SummaryGate, msg_to_summary, stamp_to_msg, summary_to_msg
from raider_ros.state_qa.modules import StateQAError
from raider_ros.state_qa.summary import MAX_FACTS, MAX_TEXT_CHARS, StateSummary


def _s(module="robot", text="I hold nothing.", facts=(("holding", "nothing"),), stamp=100.0):
    return StateSummary(module, stamp, text, tuple(facts))


# --------------------------------------------------------------------------- conversion
def test_round_trip_keeps_module_text_facts_order_and_stamp():
    s = _s(facts=(("pose", "x 1.00 m"), ("holding", "Medicine_1"), ("object:Chair_1", "chair, in view")),
           stamp=1712345678.123456)
    msg = summary_to_msg(s, source="sim_world")
    assert msg.module == "robot" and msg.source == "sim_world" and msg.text == s.text
    assert [(f.key, f.value) for f in msg.facts] == list(s.facts)
    back = msg_to_summary(msg)
    assert back.module == s.module and back.text == s.text and back.facts == s.facts
    assert math.isclose(back.stamp, s.stamp, abs_tol=1e-6)


@pytest.mark.parametrize("stamp", [0.0, 0.5, 1.999999999, 1712345678.9999999])
def test_stamps_convert_to_valid_time_messages(stamp):
    t = stamp_to_msg(stamp)
    assert 0 <= t.nanosec < 1_000_000_000
    assert math.isclose(t.sec + t.nanosec * 1e-9, stamp, abs_tol=1e-6)


def test_a_message_without_module_is_refused_by_name():
    msg = StateSummaryMsg(module="  ", source="bad_node", text="x")
    with pytest.raises(StateQAError, match="bad_node.*module"):
        msg_to_summary(msg)


def test_a_message_with_an_empty_fact_key_is_refused():
    msg = StateSummaryMsg(module="robot", source="n", text="x", facts=[StateFact(key="", value="v")])
    with pytest.raises(StateQAError, match="key"):
        msg_to_summary(msg)


def test_oversized_messages_are_bounded_by_the_core():
    msg = StateSummaryMsg(module="world_model", source="n", text="y" * 100_000,
                          facts=[StateFact(key=f"k{i}", value="v") for i in range(500)])
    s = msg_to_summary(msg)
    assert len(s.text) <= MAX_TEXT_CHARS
    assert len(s.facts) == MAX_FACTS and s.facts[-1][0] == "facts_dropped"


# --------------------------------------------------------------------------- the gate
class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def test_only_changes_go_out_and_stamps_do_not_count():
    gate = SummaryGate(0.0, clock=Clock())
    assert gate.offer(_s(stamp=1.0)) == [_s(stamp=1.0)]
    assert gate.offer(_s(stamp=2.0)) == []                 # same text and facts, later stamp
    changed = _s(text="I hold Medicine_1.", facts=(("holding", "Medicine_1"),), stamp=3.0)
    assert gate.offer(changed) == [changed]
    assert gate.unchanged == 1 and gate.published == 2


def test_modules_are_compared_separately_in_one_offer():
    gate = SummaryGate(0.0, clock=Clock())
    world, people = _s("world_model", "2 objects"), _s("people", "nobody")
    assert gate.offer([world, people]) == [world, people]
    people2 = _s("people", "Person_1 (Adriana)")
    assert gate.offer([world, people2]) == [people2]


def test_throttled_offers_are_kept_and_the_latest_is_flushed():
    clock = Clock()
    gate = SummaryGate(1.0, clock=clock)
    calls = []

    def summary(text):
        def make():
            calls.append(text)
            return _s(text=text)
        return make

    assert [s.text for s in gate.offer(summary("a"))] == ["a"]
    clock.t += 0.3
    assert gate.offer(summary("b")) == [] and gate.pending
    clock.t += 0.3
    assert gate.offer(summary("c")) == []                  # replaces b
    assert gate.flush() == []                              # the interval is not over yet
    clock.t += 0.5
    assert [s.text for s in gate.flush()] == ["c"]
    assert calls == ["a", "c"]                             # b was never computed
    assert not gate.pending and gate.flush() == []


def test_a_costly_summarizer_runs_at_most_once_per_interval():
    clock = Clock()
    gate = SummaryGate(1.0, clock=clock)
    runs = []
    for i in range(100):                                   # 100 offers over 5 s (20 Hz)
        gate.offer(lambda i=i: runs.append(i) or _s(text=f"frame {i}"))
        clock.t += 0.05
        gate.flush()
    assert 5 <= len(runs) <= 6, runs


def test_an_unchanged_flush_publishes_nothing():
    clock = Clock()
    gate = SummaryGate(1.0, clock=clock)
    gate.offer(_s())
    clock.t += 0.1
    gate.offer(_s())
    clock.t += 1.0
    assert gate.flush() == [] and gate.unchanged == 1


def test_forget_publishes_the_same_state_again():
    gate = SummaryGate(0.0, clock=Clock())
    gate.offer(_s())
    gate.forget()
    assert gate.offer(_s()) == [_s()]


@pytest.mark.parametrize("bad", [42, "text", [object()]])
def test_wrong_values_raise_type_errors(bad):
    gate = SummaryGate(0.0, clock=Clock())
    with pytest.raises(TypeError):
        gate.offer(bad)


def test_none_and_empty_lists_publish_nothing():
    gate = SummaryGate(0.0, clock=Clock())
    assert gate.offer(None) == [] and gate.offer([]) == [] and gate.offer(lambda: None) == []


def test_negative_interval_is_refused():
    with pytest.raises(ValueError, match="min_interval_s"):
        SummaryGate(-1.0)
