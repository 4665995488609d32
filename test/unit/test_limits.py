"""Size limits and NUL refusal (raider_ros/common/limits.py), and where they apply without ROS:
the tool layer refuses long or NUL arguments without echoing them, and a transcript is cut to
its limit keeping every message."""
from __future__ import annotations

import json

import pytest

from raider_ros.common import limits
from raider_ros.perception.scene_graph import SceneGraph
from raider_ros.perception.provider import TruthProvider
from raider_ros.perception.toolbox import ToolBox
from raider_ros.perception.user_info import UserInfoRetriever
from scene_graph_fixtures import TRUTH, kitchen_result


def test_request_problems_name_field_size_and_limit():
    assert limits.request_problem("pick(Apple)", "the red one") is None
    assert limits.request_problem("x" * 1001, "") == "the query is 1,001 characters long; the limit is 1,000"
    assert limits.request_problem("pick(Apple)", "y" * 5000).startswith("the context is 5,000 characters long")
    assert "NUL character at position 11" in limits.request_problem("pick(Apple)\x00 and more")
    assert limits.request_problem(42).startswith("the query must be text")


def test_tool_argument_problems_never_repeat_the_argument():
    huge = "Mug_1" * 100_000
    reason = limits.tool_args_problem("get_obj_state", [huge])
    assert reason == "get_obj_state: argument 1 is 500,000 characters long; the limit is 256"
    assert "NUL" in limits.tool_args_problem("dist_to_target", ["Mug_1\x00; rm"])
    assert "9 arguments" in limits.tool_args_problem("x", ["a"] * 9)


def test_the_tool_layer_refuses_long_and_nul_arguments_without_echoing_them():
    provider = TruthProvider(TRUTH)
    graph = SceneGraph()
    graph.update(kitchen_result(), provider, stamp=1.0)
    tb = ToolBox(graph, provider)
    r = tb.call("get_obj_state", ["Mug_1" * 2_000_000])            # 10 MB
    assert not r.success and r.error.startswith("argument refused: get_obj_state: argument 1 is 10,000,000")
    assert len(r.error) < 200 and r.data is None
    r = tb.call("get_obj_state", {"obj": "Mug_1\x00"})
    assert not r.success and "NUL" in r.error
    assert tb.call("get_obj_state", ["Mug_1"]).success


def test_a_transcript_is_cut_to_its_limit_keeping_every_message():
    msgs = [{"role": "system", "content": "s" * 500}, {"role": "user", "content": "q" * 100},
            {"role": "assistant", "content": "a" * 300_000}, {"role": "user", "content": "r" * 300_000}]
    cut = limits.cap_transcript(msgs, 100_000)
    assert [m["role"] for m in cut] == ["system", "user", "assistant", "user"]
    assert cut[0]["content"] == msgs[0]["content"] and cut[1]["content"] == msgs[1]["content"]
    assert sum(len(m["content"]) for m in cut) <= 100_000 + 200
    assert "characters cut: transcript limit 100,000" in cut[2]["content"]
    assert limits.cap_transcript(msgs[:2], 100_000) == msgs[:2]
    assert len(json.dumps(cut)) < 110_000


def test_a_user_information_call_while_the_model_loads_answers_loading_then_the_answer():
    import threading
    release, loading = threading.Event(), threading.Event()

    def slow_encoder(texts):
        loading.set()
        # loads until the test releases it (a bound only so that a failed test cannot leave it
        # waiting for ever; 30 s was once reached on a loaded CI machine and made the load "finish")
        release.wait(600)
        return [[1.0, 0.0] if "banana" in t else [0.0, 1.0] for t in texts]

    provider = TruthProvider(TRUTH)
    graph = SceneGraph()
    graph.update(kitchen_result(), provider, stamp=1.0)
    retriever = UserInfoRetriever(entries=["The user loves bananas.", "The mug is blue."], encoder=slow_encoder)
    tb = ToolBox(graph, provider, {"user_info_wait_s": 0.2}, user_info=retriever)
    tb.preload_user_info()
    assert loading.wait(30)          # the load is under way (it holds the retriever's load lock)
    r = tb.call("retrieve_user_information", ["favourite fruit banana"])
    assert not r.success and r.error.startswith("loading: the user-information model is still loading")
    assert r.data == {"error": "loading", "retry_after_s": 2.0}
    release.set()
    assert retriever.wait_ready(30)
    r = tb.call("retrieve_user_information", ["favourite fruit banana"])
    assert r.success and r.data["answer"] == "The user loves bananas."
