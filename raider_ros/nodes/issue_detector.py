"""issue_detector: RAIDER's agent as a ROS 2 action server (and a service).

Action ``detect_issue`` (raider_ros/action/DetectIssue): goal = query + optional context;
feedback = the stage (ground / ask / answer / issue), each tool call with its result, each
flow-manager warning; result = issue, explanation, grounding, status, counts, tokens, time,
the transcript, and the request's place in the queue (request_number, queued_s). Service
``detect_issue`` does the same for simple clients. Every result is published on
``issue_detector/explanations`` and every transcript on ``issue_detector/transcripts``.

Request handling: every goal and service call is answered, in arrival order, or refused with
a reason - none is lost. Callbacks never block: they validate the request (size limits,
``max_query_chars`` / ``max_context_chars``; a NUL is refused), put it in a queue served by one
worker thread of its own, and await its answer as rclpy coroutines, so waiting requests hold
no executor thread and the running check always gets its tool replies. Past ``queue_size``
waiting requests a new one is answered at once with status error "busy: ...". A request that
has not started ``request_deadline_s`` after it arrived is answered with status error (waiting
counts); a started check gets ``time_limit_s`` but never past that deadline. A goal cancelled
while waiting is answered at once. The tools are the scene_graph node's services.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, fields
from typing import Any, Callable

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from std_msgs.msg import Header, String

from raider_ros.action import DetectIssue
from raider_ros.agent.factory import DetectorSettings
from raider_ros.retrieval.agent import build_retrieval_detector
from raider_ros.ros.retrieve_client import RosRetrieve
from raider_ros.agent.flow import AgentResult
from raider_ros.msg import IssueReport, SceneGraphStatus, Transcript
from raider_ros.ros import conversions as conv
from raider_ros.common import limits
from raider_ros.ros.goal_queue import FreshnessGate, QueueRefused, Request, RequestQueue
from raider_ros.ros.params import Param, declare
from raider_ros.ros.safety_client import SafetyClient, skill_call, unfeasibility_for
from raider_ros.ros.spin import StartupError, run_node
from raider_ros.ros.state_summary import StateSummaryPublisher
from raider_ros.ros.tool_client import RosToolExecutor
from raider_ros.srv import DetectIssue as DetectIssueSrv
from raider_ros.ros.qos import LATCHED
from raider_ros.state_qa.summarizers import summarize_issue_check

_D = DetectorSettings()
_DESCRIPTIONS = {
    "backend": "LLM backend: rules (offline reasoner, no LLM) | openai (any OpenAI-compatible endpoint) | scripted",
    "method": "raider | llm_visual_obs (full scene description, no tools) | precond (action-model checks)",
    "toolset": "Tools offered to the agent: household | assistive | preferences (data/toolsets)",
    "procedure": "Prompt procedure: QGEN_GRND (Ground, Ask & Answer, Issue) or an ablation: QGEN | GRND | BASIC",
    "time_limit_s": "Hard time limit of one check [s]",
    "max_turns": "Most LLM turns of one check",
    "reach_m": "Arm reach [m]: stated in the prompt's constraints and used by the rules backend",
    "handover_distance_m": "Handover distance [m]: stated in the prompt's constraints and used by the rules backend",
    "include_objects_in_sight": "The first user message lists the objects in sight (object_detection asked "
                                "before the first turn), as in the paper",
    "model": "openai: model name ('' = $RAIDER_LLM_MODEL, else gpt-4o-2024-05-13)",
    "base_url": "openai: endpoint base URL ('' = $RAIDER_LLM_BASE_URL, else the SDK default); vLLM, Ollama and llama.cpp servers work",
    "api_key_env": "openai: name of the environment variable holding the API key",
    "seed": "openai: sampling seed (temperature is 0)",
    "request_timeout_s": "openai: timeout of one HTTP request [s]",
    "max_retries": "openai: retries of a failed request (429, 5xx), within the time limit",
    "tool_protocol": "text (call_tool{...} lines, as in the paper) | native (the API's tool calling)",
    "fixture": "scripted: file of recorded responses",
}
PARAMS = tuple(Param(f.name, getattr(_D, f.name), _DESCRIPTIONS[f.name]) for f in fields(DetectorSettings)
               if f.name in _DESCRIPTIONS) + (
    Param("tool_service", "scene_graph/call_tool", "Service that answers the agent's tool calls"),
    Param("scene_graph_topic", "scene_graph/json", "Scene graph JSON (for the llm_visual_obs baseline)"),
    Param("status_topic", "scene_graph/status", "Scene graph status (which camera frame the graph reflects)"),
    Param("queue_size", 8, "Requests (goals and service calls) that may wait while one runs; more are "
                           "answered at once with status error 'busy'"),
    Param("request_deadline_s", 60.0, "A request not started this long after it arrived is answered with "
                                      "status error (time waiting in the queue counts); a started check "
                                      "never runs past it either [s]"),
    Param("fresh_frame_timeout_s", 8.0, "A check waits for a perception frame newer than the request; "
                                        "none within this time ends it with status error [s]"),
    Param("perception_silent_s", 6.0, "No scene-graph status for this long: perception counts as down and checks "
                                      "fail at once with the reason, instead of each waiting fresh_frame_timeout_s [s]"),
    Param("perception_nodes", ["sim_world", "object_detector", "depth_distance", "spatial_relations", "scene_graph"],
          "Nodes perception depends on; a check that fails for stale or silent perception names those "
          "that are not in the ROS graph"),
    Param("max_query_chars", limits.MAX_QUERY_CHARS, "Longest query accepted; a longer one is refused at once"),
    Param("max_context_chars", limits.MAX_CONTEXT_CHARS, "Longest context accepted; a longer one is refused at once"),
    Param("max_transcript_chars", limits.MAX_TRANSCRIPT_CHARS,
          "Most characters of a transcript returned and published (the longest messages are cut)"),
    Param("retrieval", "off", "Scene graph in the first message: off | full (every object) | rag (the task's "
                              "subgraph, the whole graph on request) | rag-strict (never the whole graph)"),
    Param("retrieve_service", "scene_graph/retrieve", "Service that retrieves the task-relevant subgraph"),
    Param("safety_prefix", "safety_monitor", "Safety Chip asked first about structured queries such as "
                                             "pick(Knife_1): a forbidden action is an unfeasibility citing the rule "
                                             "('' = never ask)"),
    Param("safety_timeout_s", 2.0, "Longest wait for the Safety Chip's answer; without one the agent checks as usual [s]"),
)


@dataclass
class _Check:
    query: str
    context: str
    since: float                                   # ROS time of arrival [s] (fresh-frame wait)
    on_event: Callable[[str, dict], None] | None = None


def request_qos(queue_size: int) -> QoSProfile:
    """Reliable, deep enough for a burst of requests and of immediate answers (the default
    depth of 10 drops requests beyond it): KEEP_LAST max(100, 4 x (queue_size + 1))."""
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=max(100, 4 * (int(queue_size) + 1)),
                      reliability=ReliabilityPolicy.RELIABLE)


class IssueDetectorNode(Node):
    def __init__(self, **kwargs):
        super().__init__("issue_detector", **kwargs)
        self.p = declare(self, PARAMS)
        group = ReentrantCallbackGroup()
        self.tools = RosToolExecutor(self, self.p["tool_service"], callback_group=group)
        self._graph_json: dict | None = None
        try:
            settings = DetectorSettings.from_mapping({k: v for k, v in self.p.items() if k in _DESCRIPTIONS})
            retrieve = RosRetrieve(self, self.p["retrieve_service"], callback_group=group) \
                if self.p["retrieval"] != "off" else None
            self.agent = build_retrieval_detector(settings, self.tools, retrieve, self.p["retrieval"],
                                                  scene_graph=lambda: self._graph_json)
        except (ValueError, OSError) as exc:
            raise StartupError(self.get_name(), str(exc)) from None
        self.backend_name = getattr(getattr(self.agent, "llm", None), "name", settings.method)
        self.freshness = FreshnessGate(self.p["status_topic"], silent_after_s=self.p["perception_silent_s"],
                                       missing_nodes=self._missing_perception_nodes)
        self.pub_report = self.create_publisher(IssueReport, "issue_detector/explanations", 10)
        self.pub_transcript = self.create_publisher(Transcript, "issue_detector/transcripts", 10)
        self.summaries = StateSummaryPublisher(self, min_interval_s=0.0)   # every check, for state_qa
        self.create_subscription(SceneGraphStatus, self.p["status_topic"],
                                 lambda m: self.freshness.update(conv.msg_to_status(m)), LATCHED, callback_group=group)
        if settings.method == "llm_visual_obs":
            self.create_subscription(String, self.p["scene_graph_topic"], self._on_graph, LATCHED, callback_group=group)
        try:
            self.requests = RequestQueue(self.p["queue_size"], self._run_check, self._not_run,
                                         self.p["request_deadline_s"], name="issue_detector")
        except ValueError as exc:
            raise StartupError(self.get_name(), str(exc)) from None
        qos = request_qos(self.p["queue_size"])
        self._action = ActionServer(self, DetectIssue, "detect_issue", execute_callback=self._on_execute,
                                    goal_callback=lambda _g: GoalResponse.ACCEPT,
                                    cancel_callback=lambda _g: CancelResponse.ACCEPT, callback_group=group,
                                    goal_service_qos_profile=qos, result_service_qos_profile=qos,
                                    cancel_service_qos_profile=qos)
        self.create_service(DetectIssueSrv, "detect_issue", self._on_service, qos_profile=qos, callback_group=group)
        self.create_timer(0.2, self.requests.sweep, callback_group=group)
        self.requests.start()
        self.safety = SafetyClient(self, self.p["safety_prefix"], callback_group=group,
                                   timeout_s=self.p["safety_timeout_s"], wait_for_service=False) \
            if self.p["safety_prefix"] else None
        self.get_logger().info(f"issue detector ready: method {settings.method}, backend {self.backend_name}, "
                               f"toolset {settings.toolset}, queue_size {self.p['queue_size']}, "
                               f"request_deadline_s {self.p['request_deadline_s']:g}")

    def _missing_perception_nodes(self) -> list[str]:
        present = set(self.get_node_names())
        return [n for n in self.p["perception_nodes"] if n not in present]

    def _on_graph(self, msg: String) -> None:
        try:
            self._graph_json = json.loads(msg.data).get("graph")
        except (ValueError, AttributeError):
            self.get_logger().warning("scene graph JSON could not be read", throttle_duration_sec=10.0)

    # ------------------------------------------------------------------ running one check
    def _safety_answer(self, query: str) -> AgentResult | None:
        """An action the Safety Chip forbids is an unfeasibility citing the rule, without running
        the agent; any other answer (or none) leaves the check to the agent."""
        action = skill_call(query) if self.safety is not None else None
        if action is None:
            return None
        try:
            found = unfeasibility_for(self.safety.check_action(action))
        except (RuntimeError, TimeoutError) as exc:
            self.get_logger().warning(f"no Safety Chip answer ({exc}); the agent checks alone", throttle_duration_sec=30.0)
            return None
        if found is None:
            return None
        return AgentResult(issue=found[0], explanation=found[1], status="ok",
                           backend=f"{self.backend_name} + safety_monitor")

    # ------------------------------------------------------------------ the queue
    def _submit(self, query: str, context: str, on_event=None, cancel: Callable[[], bool] = lambda: False) -> Future:
        """Validate and queue a request; the returned future completes with its (AgentResult,
        Request or None). Never blocks."""
        future = Future(executor=self.executor)
        problem = limits.request_problem(query, context, max_query=self.p["max_query_chars"],
                                         max_context=self.p["max_context_chars"])
        if problem:
            future.set_result((self._error(f"request refused: {problem}"), None))
            return future
        box: dict[str, Any] = {}

        def done(res: AgentResult) -> None:
            future.set_result((res, box.get("request")))
            if self.executor is not None:
                self.executor.wake()     # the awaiting callback resumes without other traffic

        check = _Check(query, context, self.get_clock().now().nanoseconds * 1e-9, on_event)
        try:
            box["request"] = self.requests.submit(check, done, cancel)
        except QueueRefused as exc:
            future.set_result((self._error(str(exc)), None))
        return future

    def _error(self, reason: str) -> AgentResult:
        return AgentResult(status="error", backend=self.backend_name, error=reason)

    def _not_run(self, req: Request, reason: str) -> AgentResult:
        res = self._error(reason)
        self._publish(req.payload.query, req.payload.context, res)
        return res

    def _run_check(self, req: Request) -> AgentResult:
        """One check, on the queue's worker thread, within the request's deadline."""
        check: _Check = req.payload
        forbidden = self._safety_answer(check.query)
        timeout = min(self.p["fresh_frame_timeout_s"], req.left_s()) if forbidden is None else 0
        stale = self.freshness.wait_fresh(check.since, timeout, req.cancelled) if timeout > 0 else None
        if forbidden is not None:
            res = forbidden
        elif stale is not None:
            res = self._error(stale)
        elif req.left_s() <= 0:
            res = self._error(f"the request deadline of {self.p['request_deadline_s']:g} s passed before the check "
                              "started (request_deadline_s)")
        else:
            res = self.agent.run(check.query, check.context or None, on_event=check.on_event, cancel=req.cancelled,
                                 time_limit_s=req.left_s())
        res.backend = res.backend or self.backend_name
        res.transcript = limits.cap_transcript(res.transcript, self.p["max_transcript_chars"])
        self._publish(check.query, check.context, res)
        return res

    def _publish(self, query: str, context: str, res: AgentResult) -> None:
        header = Header(stamp=self.get_clock().now().to_msg())
        self.pub_report.publish(IssueReport(
            header=header, query=query, context=context, issue=res.issue or "", explanation=res.explanation,
            grounding=list(res.grounding), status=res.status, error=res.error or "", backend=res.backend,
            elapsed_s=float(res.elapsed_s)))
        self.pub_transcript.publish(Transcript(header=header, query=query,
                                               roles=[m.get("role", "") for m in res.transcript],
                                               contents=[str(m.get("content", "")) for m in res.transcript]))
        self.summaries.publish(lambda: summarize_issue_check(query, res, context=context))
        outcome = f"{res.issue}: {res.explanation}" if res.status == "ok" else f"error: {res.error}"
        self.get_logger().info(f"{query!r} -> {outcome} ({res.elapsed_s:.2f} s)")

    @staticmethod
    def _fill(target, res: AgentResult, req: Request | None = None):
        target.issue = res.issue or ""
        target.explanation = res.explanation
        target.grounding = [str(g) for g in res.grounding]
        target.status = res.status
        target.error = res.error or ""
        target.backend = res.backend
        target.llm_turns = int(res.llm_turns)
        target.tool_calls = len(res.tool_calls)
        target.prompt_tokens = int(res.prompt_tokens)
        target.completion_tokens = int(res.completion_tokens)
        target.elapsed_s = float(res.elapsed_s)
        target.transcript_json = json.dumps(res.transcript)
        if req is not None:
            target.request_number = int(req.number)
            target.queued_s = float(req.waited_s)
        target.warnings = [f"{w.number} {w.title}" for w in res.warnings]
        target.tools_used = [c.name for c in res.tool_calls]
        return target

    # ------------------------------------------------------------------ action and service
    async def _on_execute(self, goal_handle):
        req = goal_handle.request

        def on_event(stage: str, payload: dict) -> None:
            fb = DetectIssue.Feedback()
            if stage in ("tool_call", "tool_result"):
                fb.stage = "answer"
                fb.tool = str(payload.get("name", ""))
                fb.args = [str(a) for a in payload.get("args", [])]
                fb.result = str(payload.get("result", payload.get("text", ""))) if stage == "tool_result" else ""
                fb.tool_success = bool(payload.get("success", False))
                fb.message = f"{stage.replace('_', ' ')} {fb.tool}{fb.args}"
            elif stage == "warning":
                fb.stage = "answer"
                fb.warning = f"WARNING {payload.get('number')} ({payload.get('title')}): {payload.get('message', '')}"
                fb.message = fb.warning
            else:
                fb.stage = stage if stage in ("ground", "ask", "answer", "issue") else "answer"
                fb.message = str(payload.get("text") or payload.get("explanation") or "")[:500]
            goal_handle.publish_feedback(fb)

        res, request = await self._submit(req.query, req.context, on_event,
                                          cancel=lambda: goal_handle.is_cancel_requested)
        result = self._fill(DetectIssue.Result(), res, request)
        if goal_handle.is_cancel_requested:
            goal_handle.canceled()
        elif res.status == "ok":
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    async def _on_service(self, req, response):
        res, request = await self._submit(req.query, req.context)
        return self._fill(response, res, request)

    def destroy_node(self):
        self.requests.stop()
        self._action.destroy()
        return super().destroy_node()


def main(args=None) -> int:
    return run_node(IssueDetectorNode, args=args, threads=8)
