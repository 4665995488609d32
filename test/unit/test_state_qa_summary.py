"""State summaries and their history: validation, size bounds, transport, time windows."""
from __future__ import annotations

import threading

import pytest

from raider_ros.state_qa.modules import StateQAError, load_catalog
from raider_ros.state_qa.summary import (MAX_FACTS, MAX_TEXT_CHARS, MAX_VALUE_CHARS, StateSummary, SummaryHistory,
                                         make_summary)


def s(module: str, stamp: float, text: str = "", **facts: str) -> StateSummary:
    return StateSummary(module, stamp, text or f"{module} at {stamp}", tuple(facts.items()))


def test_module_list_is_the_papers_ten_classes():
    cat = load_catalog()
    assert len(cat.classes) == 10 and cat.classes[-2:] == ("unknown", "toxic")
    assert set(cat.names) == {"world_model", "people", "issue_detector", "recovery_planner", "plan_executor",
                              "human_interface", "robot", "safety_monitor"}
    assert cat.title("world_model") == "world model" and cat.is_module("robot") and not cat.is_module("toxic")


@pytest.mark.parametrize("kwargs, message", [
    (dict(module="", stamp=1.0, text="x"), "module must be a non-empty name"),
    (dict(module="robot", stamp=float("nan"), text="x"), "stamp must be finite"),
    (dict(module="robot", stamp=True, text="x"), "stamp must be finite"),
    (dict(module="robot", stamp=1.0, text=None), "text must be a string"),
    (dict(module="robot", stamp=1.0, text="x", facts=(("holding",),)), "not a key/value pair"),
    (dict(module="robot", stamp=1.0, text="x", facts=(("", "v"),)), "the key must be non-empty"),
    (dict(module="robot", stamp=1.0, text="x", facts=(("holding", 3),)), "the value must be text"),
])
def test_bad_summaries_are_refused_with_the_reason(kwargs, message):
    with pytest.raises(StateQAError, match=message):
        StateSummary(**kwargs)


def test_sizes_are_bounded_and_first_key_wins():
    facts = [(f"k{i}", "v" * 5000) for i in range(MAX_FACTS + 20)] + [("k0", "second value")]
    sm = StateSummary("robot", 1.0, "t " * 5000, tuple(facts))
    assert len(sm.text) <= MAX_TEXT_CHARS and sm.text.endswith("...")
    assert len(sm.facts) == MAX_FACTS and sm.facts[-1] == ("facts_dropped", "21")
    assert all(len(v) <= MAX_VALUE_CHARS for _, v in sm.facts)
    assert sm.fact("k0").startswith("vvv")


def test_roundtrip_and_fact_lookup():
    sm = make_summary("world_model", "I see a cup.", [("visible_objects", "Cup_1"), ("object:Cup_1", "cup"),
                                                      ("skipped", None), ("count", 1)], stamp=5.0)
    assert sm.facts == (("visible_objects", "Cup_1"), ("object:Cup_1", "cup"), ("count", "1"))
    assert sm.facts_named("object") == [("object:Cup_1", "Cup_1", "cup")]
    again = StateSummary.from_dict(sm.to_dict())
    assert again == sm
    assert StateSummary.from_dict({"module": "robot", "stamp": 1, "text": "x", "facts": {"a": "b"}}).facts == (("a", "b"),)
    assert "- object:Cup_1: cup" in sm.render()
    with pytest.raises(StateQAError, match="missing stamp"):
        StateSummary.from_dict({"module": "robot", "text": "x"})
    with pytest.raises(StateQAError, match=r"facts\[0\]"):
        StateSummary.from_dict({"module": "robot", "stamp": 1, "text": "x", "facts": [42]})


def test_history_keeps_the_latest_and_a_bounded_past():
    h = SummaryHistory(max_per_module=3)
    for t in range(10):
        h.add(s("robot", float(t)))
    h.add(s("people", 4.0))
    assert [x.stamp for x in h.past("robot")] == [7.0, 8.0, 9.0]
    assert h.latest("robot").stamp == 9.0 and h.latest("nobody") is None
    assert len(h) == 4 and h.modules() == ["people", "robot"]
    assert set(h.latest_all()) == {"robot", "people"}


def test_late_summary_goes_into_the_past_and_same_stamp_replaces():
    h = SummaryHistory()
    h.add(s("robot", 5.0, "five"))
    h.add(s("robot", 3.0, "three"))
    h.add(s("robot", 5.0, "five again"))
    assert [x.text for x in h.past("robot")] == ["three", "five again"]
    assert h.latest("robot").text == "five again"
    assert h.at("robot", 4.0).text == "three" and h.at("robot", 2.0) is None


def test_age_bound_drops_old_entries_but_keeps_each_modules_latest():
    h = SummaryHistory(max_age_s=10.0)
    h.add(s("people", 1.0))
    for t in (2.0, 30.0, 35.0):
        h.add(s("robot", t))
    assert [x.stamp for x in h.past("robot")] == [30.0, 35.0]
    assert h.latest("people").stamp == 1.0          # still the people module's state


def test_time_windows_and_what_happened():
    h = SummaryHistory()
    h.extend([s("robot", 1.0, "at start"), s("robot", 2.0, "at start"), s("robot", 3.0, "moved"),
              s("people", 2.5, "nobody"), s("robot", 9.0, "picked")])
    assert [(x.module, x.stamp) for x in h.window(2.0, 3.0)] == [("robot", 2.0), ("people", 2.5), ("robot", 3.0)]
    assert [x.stamp for x in h.window(None, 1.5)] == [1.0]
    assert [x.stamp for x in h.window(8.0, None, modules=["robot"])] == [9.0]
    # unchanged texts are not news; the first in the window is compared with the one before it
    assert [x.text for x in h.what_happened(2.0)] == ["nobody", "moved", "picked"]
    assert [x.text for x in h.what_happened()] == ["at start", "nobody", "moved", "picked"]
    with pytest.raises(StateQAError, match="ends"):
        h.window(5.0, 1.0)


def test_history_refuses_bad_input():
    with pytest.raises(StateQAError, match="max_per_module"):
        SummaryHistory(max_per_module=0)
    with pytest.raises(StateQAError, match="max_age_s"):
        SummaryHistory(max_age_s=-1)
    h = SummaryHistory(modules=["robot"])
    with pytest.raises(StateQAError, match="unknown module 'people'"):
        h.add(s("people", 1.0))
    with pytest.raises(StateQAError, match="expected a StateSummary"):
        h.add({"module": "robot"})


def test_history_is_thread_safe():
    h = SummaryHistory(max_per_module=50)

    def writer(k: int):
        for t in range(200):
            h.add(s(f"m{k}", float(t)))
            h.window(t - 5.0, float(t))

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert all(len(h.past(f"m{k}")) == 50 and h.latest(f"m{k}").stamp == 199.0 for k in range(4))
