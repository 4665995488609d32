"""issue_detector in the running graph (separate processes, DDS): the action with feedback,
the service, the explanation and transcript topics, queued concurrent goals, cancel, and
every failure (unreachable / 429 / 500 / hanging / garbage LLM, perception node stopped)
ending the goal with status error and a reason naming the cause within the deadline. The world
is the project's galley kitchen (data/scenes/kitchen.scene.yaml)."""
from __future__ import annotations

import threading
import time

import pytest

from raider_ros.action import DetectIssue
from raider_ros.common.geometry import carries
from raider_ros.common.paths import scenes_dir
from raider_ros.perception.oracle import OracleGeometry
from raider_ros.sim.scene import load_scene
from raider_ros.msg import IssueReport, Transcript
from raider_ros.ros.graph import NodeGraph
from raider_ros.srv import DetectIssue as DetectIssueSrv
from support.fake_openai_server import FakeOpenAIServer
from support.graph import PERCEPTION, GraphClient

KITCHEN = scenes_dir() / "kitchen.scene.yaml"
TIME_LIMIT = 6.0


def test_the_kitchen_makes_the_expected_answers_true():
    """What the answers below rest on, from the scene and the oracle: one apple, pickupable,
    within reach and free; two mugs; no pear; a counter top that is not pickupable."""
    scene = load_scene(KITCHEN)
    geo = OracleGeometry(scene)
    assert [o.id for o in scene.objects if o.type == "Apple"] == ["Apple_1"]
    apple = scene.object("Apple_1")
    assert apple.has("pickupable") and scene.robot.holding is None
    assert geo.distance("Apple_1") <= scene.robot.reach - 0.1
    lo, hi = geo.boxes["Apple_1"]
    assert not [e for e in geo.entities if e != "Apple_1" and not carries(*geo.boxes[e], lo, hi)
                and (geo.answer(e, "blocking", "Apple_1").holds or geo.answer(e, "blocking", "Apple_1").borderline)]
    assert sorted(o.id for o in scene.objects if o.type == "Mug") == ["Mug_1", "Mug_2"]
    assert not [o for o in scene.objects if o.type == "Pear"]
    assert not scene.object("CounterTop_1").has("pickupable")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    server = FakeOpenAIServer(default={"content": "Step 1 - Ground: looking.\ncall_tool{\"tool\": \"robot_holding\", \"args\": []}"})
    server.start()
    with NodeGraph(tmp_path_factory.mktemp("logs")) as graph:
        graph.start("sim_world", {"scene": str(KITCHEN), "skill_duration_s": 0.0})
        for name in PERCEPTION:
            graph.start(name, {"preload_user_info": False} if name == "scene_graph" else None)
        graph.start("issue_detector", {"backend": "rules"})
        graph.start("issue_detector", name="llm_detector", namespace="/llm", params={
            "backend": "openai", "base_url": server.url, "model": "fake-model", "api_key_env": "RAIDER_TEST_NO_KEY",
            "time_limit_s": TIME_LIMIT, "request_timeout_s": 1.0, "max_retries": 1,
            "tool_service": "/scene_graph/call_tool", "status_topic": "/scene_graph/status"})
        client = GraphClient(graph)
        reports: list = []
        transcripts: list = []
        client.node.create_subscription(IssueReport, "issue_detector/explanations", reports.append, 10)
        client.node.create_subscription(Transcript, "issue_detector/transcripts", transcripts.append, 10)
        try:
            client.wait_refreshed(client.apply(""), timeout=60)
            yield client, graph, server, reports, transcripts
        finally:
            client.close()
            server.stop()


def _goal(client, query: str, action: str = "detect_issue", context: str = "", timeout: float = 60.0):
    ac = client.action_client(DetectIssue, action)
    assert ac.wait_for_server(timeout_sec=20)
    feedback: list = []
    done = threading.Event()
    box: dict = {}

    def on_result(f):
        box["result"] = f.result().result
        done.set()

    def on_goal(f):
        box["handle"] = f.result()
        f.result().get_result_async().add_done_callback(on_result)

    ac.send_goal_async(DetectIssue.Goal(query=query, context=context),
                       feedback_callback=lambda m: feedback.append(m.feedback)).add_done_callback(on_goal)
    return ac, box, done, feedback


def _wait(done, box, timeout=60.0):
    assert done.wait(timeout), "no result"
    return box["result"]


def test_action_answers_with_feedback_and_topics(env):
    client, _graph, _srv, reports, transcripts = env
    ac, box, done, feedback = _goal(client, "pick(Apple)")
    res = _wait(done, box)
    assert (res.status, res.issue, list(res.grounding)) == ("ok", "none", ["Apple_1"]), res.error
    assert res.backend == "rules (no LLM)" and res.llm_turns >= 1 and res.tool_calls >= 1
    deadline = time.monotonic() + 5  # feedback travels on its own topic and may trail the result
    while time.monotonic() < deadline and not any(f.tool and f.result for f in feedback):
        time.sleep(0.05)
    assert {f.stage for f in feedback} >= {"answer"} and any(f.tool and f.result for f in feedback)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any(r.query == "pick(Apple)" for r in reports):
        time.sleep(0.05)
    report = next(r for r in reports if r.query == "pick(Apple)")
    assert report.issue == "none" and "apple" in report.explanation.lower()
    assert any(t.query == "pick(Apple)" and t.roles[0] == "system" for t in transcripts)


def test_service_and_natural_language(env):
    client = env[0]
    r = client.call(DetectIssueSrv, "detect_issue", query="Can you pick up the mug?", timeout=60)
    assert r.status == "ok" and r.issue == "ambiguity"
    assert set(r.grounding) == {"Mug_1", "Mug_2"}


def test_concurrent_goals_are_queued_not_dropped(env):
    client = env[0]
    queries = ["pick(Apple)", "pick(CounterTop)", "Could you pick up the pear?"]
    goals = [_goal(client, q) for q in queries]
    results = [_wait(done, box, 120) for _ac, box, done, _fb in goals]
    assert [r.status for r in results] == ["ok"] * 3, [r.error for r in results]
    assert [r.issue for r in results] == ["none", "unfeasibility", "unfeasibility"]


@pytest.mark.parametrize("spec, cause", [
    ({"status": 429, "retry_after": 0.1}, "429"),
    ({"status": 500}, "500"),
    ({"garbage": True}, "garbage or off-protocol"),
    ({"hang": True}, "timeout"),
])
def test_llm_failures_end_with_status_error_naming_the_cause(env, spec, cause):
    client, _graph, server, *_ = env
    server.default = spec
    t0 = time.monotonic()
    ac, box, done, _ = _goal(client, "pick(Apple)", action="/llm/detect_issue")
    res = _wait(done, box, TIME_LIMIT + 10)
    elapsed = time.monotonic() - t0
    assert res.status == "error" and res.issue == ""
    assert cause in res.error.lower() or cause in res.error, res.error
    assert elapsed < TIME_LIMIT + 3.0


def test_unreachable_llm(env, tmp_path):
    client, graph, *_ = env
    graph.start("issue_detector", name="dead_llm_detector", namespace="/dead", params={
        "backend": "openai", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "RAIDER_TEST_NO_KEY",
        "time_limit_s": TIME_LIMIT, "request_timeout_s": 1.0, "max_retries": 1,
        "tool_service": "/scene_graph/call_tool", "status_topic": "/scene_graph/status"})
    ac, box, done, _ = _goal(client, "pick(Apple)", action="/dead/detect_issue")
    res = _wait(done, box, TIME_LIMIT + 15)
    assert res.status == "error" and "unreachable" in res.error.lower(), res.error
    graph.stop("dead_llm_detector")


def test_cancel_a_running_goal(env):
    client, _graph, server, *_ = env
    server.default = {"hang": True}
    ac, box, done, _ = _goal(client, "pick(Apple)", action="/llm/detect_issue")
    deadline = time.monotonic() + 10
    while "handle" not in box and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.5)
    box["handle"].cancel_goal_async()
    res = _wait(done, box, TIME_LIMIT + 5)
    assert res.status == "error" and "cancel" in res.error.lower()


def test_perception_node_stopped_mid_query(env):
    client, graph, *_ = env
    graph.stop("scene_graph")
    t0 = time.monotonic()
    r = client.call(DetectIssueSrv, "detect_issue", query="pick(Apple)", timeout=40)
    assert r.status == "error" and "scene_graph" in r.error, r.error
    assert time.monotonic() - t0 < 20.0
