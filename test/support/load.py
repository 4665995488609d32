"""Load on the graph's request services: a burst of N simultaneous requests to one target,
each answer (or rejection) recorded with its latency and completion order.

``TARGETS`` is the table of services the load test and bench/bench_load.py run; a later
service (check_action, ask_robot) joins by adding a row::

    LoadTarget(name="detect_issue-action", kind="action", interface=DetectIssue, endpoint="detect_issue",
               request=lambda i: DetectIssue.Goal(query=f"pick(Apple) #{i}"),
               status=lambda r: r.status, reason=lambda r: r.error, number=lambda r: r.request_number,
               node="issue_detector", params=lambda fixture: {...})

``status(result)`` is "ok" for a served request, anything else with a non-empty ``reason``
for one refused or failed; ``number(result)`` is the server's arrival number (0 = refused
before queueing), which must grow with completion order for the served ones. A service without
a queue of its own (``queued`` false: check_action and ask_robot answer each request on the
executor's threads, with no arrival number) returns 0; ``expect(i, result)`` names what is
wrong with answer ``i`` (a verdict that is not the one its request must get), '' when nothing;
``ready(client)`` is true once the node can answer (the safety monitor has a world state).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml
from raider_ros.ros.actions import ActionClient
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

from raider_ros.action import DetectIssue
from raider_ros.common.paths import scenes_dir
from raider_ros.srv import AskRobot, CheckAction, ListConstraints
from raider_ros.srv import DetectIssue as DetectIssueSrv
from support.graph import PERCEPTION

# clients sending a burst need request/response queues as deep as the burst (default: 10)
BURST_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=200, reliability=ReliabilityPolicy.RELIABLE)


def scripted_fixture(directory: Path, delay_s: float = 0.05) -> Path:
    """A scripted LLM for pick(Apple) checks: two turns, each after ``delay_s`` of 'thinking'."""
    path = Path(directory) / "load_llm.yaml"
    path.write_text(yaml.safe_dump({
        "format": "raider-llm-script/1", "name": "load", "delay_s": float(delay_s),
        "scripts": [{"query": "pick(Apple)", "turns": [
            'Step 1 - GROUND: the apple.\ncall_tool{"tool": "robot_holding", "args": []}',
            '{"final_response": "none", "explanation": "The gripper is free and Apple_1 is within reach.", '
            '"grounding": ["Apple_1"]}']}]}))
    return path


@dataclass
class LoadTarget:
    name: str
    kind: str                                   # action | service
    interface: Any
    endpoint: str
    request: Callable[[int], Any]
    status: Callable[[Any], str]
    reason: Callable[[Any], str]
    number: Callable[[Any], int]
    node: str                                   # executable serving it
    params: Callable[[Path], dict]              # node parameters (given a fixture directory)
    queued: bool = True                         # the node queues requests (queue_size, busy, arrival numbers)
    expect: Callable[[int, Any], str] | None = None     # what is wrong with answer i ('' = nothing)
    ready: Callable[[Any], bool] | None = None          # the node can answer (given a GraphClient)


def _detector_params(fixture_dir: Path) -> dict:
    return {"backend": "scripted", "fixture": str(scripted_fixture(fixture_dir)), "queue_size": 64,
            "request_deadline_s": 120.0}


# the Safety Chip (issue 12): one constraint; even requests break it, odd ones do not
SAFETY_CONSTRAINTS = {"format": "raider-constraints/1", "constraints": [
    {"ltl": "G !pick(knife)", "text": "Never pick up the knife."}]}
CHECK_ACTIONS = ("pick(Knife_1)", "pick(Apple_1)")
CHECK_VERDICTS = ("unsafe", "safe")


def _safety_params(fixture_dir: Path) -> dict:
    path = Path(fixture_dir) / "load_constraints.yaml"
    path.write_text(yaml.safe_dump(SAFETY_CONSTRAINTS))
    return {"constraints_file": str(path)}


def _check_action_expect(i: int, r: Any) -> str:
    want = CHECK_VERDICTS[i % 2]
    return "" if r.verdict == want else f"check_action {r.action or CHECK_ACTIONS[i % 2]}: {r.verdict}, expected {want}"


def _safety_ready(client) -> bool:
    r = client.call(ListConstraints, "safety_monitor/list_constraints", timeout=30)
    return bool(r.has_state and len(r.constraints) == 1)


# state Q&A (issue 14): a question about the robot's state, answered from the summaries
ASK_STATUSES_ANSWERED = ("ok", "partial", "unknown")


def _ask_status(r: Any) -> str:
    return "ok" if r.status in ASK_STATUSES_ANSWERED and r.answer.strip() else (r.status or "no status")


def _ask_ready(client) -> bool:
    r = client.call(AskRobot, "ask_robot", timeout=60, question="What are you holding?")
    return r.status in ("ok", "partial")       # the robot's summary has arrived


TARGETS: list[LoadTarget] = [
    LoadTarget("detect_issue-action", "action", DetectIssue, "detect_issue",
               lambda i: DetectIssue.Goal(query=f"pick(Apple) #{i}"),
               lambda r: r.status, lambda r: r.error, lambda r: r.request_number,
               "issue_detector", _detector_params),
    LoadTarget("detect_issue-service", "service", DetectIssueSrv, "detect_issue",
               lambda i: DetectIssueSrv.Request(query=f"pick(Apple) #{i}"),
               lambda r: r.status, lambda r: r.error, lambda r: r.request_number,
               "issue_detector", _detector_params),
    LoadTarget("check_action-service", "service", CheckAction, "safety_monitor/check_action",
               lambda i: CheckAction.Request(action=CHECK_ACTIONS[i % 2]),
               lambda r: "ok" if r.verdict in ("safe", "pending", "unsafe") else r.verdict,
               lambda r: r.error or r.explanation, lambda r: 0,
               "safety_monitor", _safety_params, queued=False, expect=_check_action_expect, ready=_safety_ready),
    LoadTarget("ask_robot-service", "service", AskRobot, "ask_robot",
               lambda i: AskRobot.Request(question=("What are you holding?", "Where are you?",
                                                    "What do you see?")[i % 3]),
               _ask_status, lambda r: r.note or r.answer, lambda r: 0,
               "state_qa", lambda _d: {"backend": "rules"}, queued=False, ready=_ask_ready),
]


def wait_ready(client, timeout_s: float = 180.0) -> None:
    """Every row's node can answer (``ready``), or TimeoutError naming the row."""
    for t in TARGETS:
        if t.ready is None:
            continue
        end = time.monotonic() + timeout_s
        while True:
            try:
                if t.ready(client):
                    break
            except Exception:                   # noqa: BLE001 - not up yet (no service, timeout)
                pass
            if time.monotonic() > end:
                raise TimeoutError(f"{t.name}: {t.node} not ready within {timeout_s:.0f} s")
            time.sleep(1.0)


def start_graph(graph, fixture_dir: Path) -> None:
    """The kitchen simulator, perception, and every node serving a row of TARGETS."""
    graph.start("sim_world", {"scene": str(scenes_dir() / "kitchen.scene.yaml"), "skill_duration_s": 0.0})
    for name in PERCEPTION:
        graph.start(name, {"preload_user_info": False} if name == "scene_graph" else None)
    started = set()
    for t in TARGETS:
        if t.node not in started:
            graph.start(t.node, t.params(fixture_dir))
            started.add(t.node)


def start_detector(graph, namespace: str, fixture: Path, **params) -> None:
    """One more issue_detector under ``namespace`` using the main scene_graph's tools."""
    graph.start("issue_detector", name=f"{namespace.strip('/')}_detector", namespace=namespace, params={
        "backend": "scripted", "fixture": str(fixture), "tool_service": "/scene_graph/call_tool",
        "status_topic": "/scene_graph/status", **params})


@dataclass
class Outcome:
    index: int
    sent: float
    accepted: bool | None = None                # action goals: accepted by the server
    result: Any = None
    done: float | None = None                   # time.monotonic() of the answer

    @property
    def latency_s(self) -> float | None:
        return None if self.done is None else self.done - self.sent


@dataclass
class BurstReport:
    target: str
    outcomes: list[Outcome] = field(default_factory=list)

    def lost(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.result is None]

    def served(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.result is not None and o.accepted is not False]

    def describe(self, t: LoadTarget) -> str:
        kinds: dict[str, int] = {}
        for o in self.outcomes:
            key = "lost" if o.result is None else (t.status(o.result) if t.status(o.result) == "ok"
                                                   else f"error: {t.reason(o.result)[:60]}")
            kinds[key] = kinds.get(key, 0) + 1
        return f"{self.target}: " + "; ".join(f"{n} x {k}" for k, n in sorted(kinds.items()))


def burst(node, target: LoadTarget, n: int, timeout_s: float, namespace: str = "") -> BurstReport:
    """Send ``n`` requests at once from ``node`` (spun elsewhere) and wait until every one is
    answered or ``timeout_s`` passes."""
    endpoint = f"{namespace}/{target.endpoint}" if namespace else target.endpoint
    report = BurstReport(target.name)
    lock = threading.Lock()
    remaining = threading.Semaphore(0)
    if target.kind == "service":
        client = node.create_client(target.interface, endpoint, qos_profile=BURST_QOS)
        if not client.wait_for_service(timeout_sec=30):
            raise TimeoutError(f"{endpoint}: no service")
    else:
        client = ActionClient(node, target.interface, endpoint, goal_service_qos_profile=BURST_QOS,
                              result_service_qos_profile=BURST_QOS, cancel_service_qos_profile=BURST_QOS)
        if not client.wait_for_server(timeout_sec=30):
            raise TimeoutError(f"{endpoint}: no action server")

    def finish(o: Outcome, result: Any) -> None:
        with lock:
            if o.done is None:
                o.result, o.done = result, time.monotonic()
        remaining.release()

    for i in range(n):
        o = Outcome(i, time.monotonic())
        report.outcomes.append(o)
        if target.kind == "service":
            client.call_async(target.request(i)).add_done_callback(lambda f, o=o: finish(o, f.result()))
        else:
            def on_goal(f, o=o):
                handle = f.result()
                o.accepted = bool(handle is not None and handle.accepted)
                if not o.accepted:
                    finish(o, "rejected")
                    return
                handle.get_result_async().add_done_callback(lambda rf, o=o: finish(o, rf.result().result))
            client.send_goal_async(target.request(i)).add_done_callback(on_goal)
    end = time.monotonic() + timeout_s
    for _ in range(n):
        if not remaining.acquire(timeout=max(0.0, end - time.monotonic())):
            break
    return report


def check_report(report: BurstReport, t: LoadTarget) -> list[str]:
    """Problems: lost requests, answers without a reason, served requests (status ok) out of
    queue order."""
    problems = [f"request {o.index} got no answer" for o in report.lost()]
    for o in report.outcomes:
        if o.result is None or o.result == "rejected":
            if o.result == "rejected":
                problems.append(f"request {o.index}: goal rejected without a reason")
            continue
        if t.status(o.result) != "ok" and not t.reason(o.result).strip():
            problems.append(f"request {o.index}: status {t.status(o.result)!r} without a reason")
        elif t.status(o.result) == "ok" and t.expect is not None and t.expect(o.index, o.result):
            problems.append(f"request {o.index}: wrong answer: {t.expect(o.index, o.result)}")
    served = sorted((o for o in report.outcomes if o.result not in (None, "rejected") and t.status(o.result) == "ok"),
                    key=lambda o: o.done)
    numbers = [t.number(o.result) for o in served]
    if numbers != sorted(numbers):
        problems.append(f"served out of queue order: arrival numbers in completion order {numbers}")
    return problems


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    v = sorted(values)
    k = (len(v) - 1) * q / 100.0
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)
