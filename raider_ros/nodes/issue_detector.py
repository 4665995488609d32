"""issue_detector: RAIDER's agent as a ROS 2 action server (and a service).

Action ``detect_issue`` (raider_ros/action/DetectIssue): goal = query + optional context;
feedback = the stage (ground / ask / answer / issue), each tool call with its result, each
flow-manager warning; result = issue, explanation, grounding, status, counts, tokens, time
and the transcript. Service ``detect_issue`` does the same for simple clients. Every result
is published on ``issue_detector/explanations`` and every transcript on
``issue_detector/transcripts``. Goals run one at a time in arrival order; past ``queue_size``
waiting goals a new one ends at once with status error and the reason. The tools are the
scene_graph node's services.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import fields

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Header, String

from raider_ros.action import DetectIssue
from raider_ros.agent.factory import DetectorSettings, build_detector
from raider_ros.agent.flow import AgentResult
from raider_ros.msg import IssueReport, Transcript
from raider_ros.ros.params import Param, declare
from raider_ros.ros.spin import StartupError, run_node
from raider_ros.ros.tool_client import RosToolExecutor
from raider_ros.srv import DetectIssue as DetectIssueSrv

_D = DetectorSettings()
_DESCRIPTIONS = {
    "backend": "LLM backend: rules (offline reasoner, no LLM) | openai (any OpenAI-compatible endpoint) | scripted",
    "method": "raider | llm_visual_obs (full scene description, no tools) | precond (action-model checks)",
    "toolset": "Tools offered to the agent: household | assistive | preferences (data/toolsets)",
    "procedure": "Prompt procedure: QGEN_GRND (Ground, Ask & Answer, Issue) or an ablation: QGEN | GRND | BASIC",
    "time_limit_s": "Hard time limit of one check [s]",
    "max_turns": "Most LLM turns of one check",
    "reach_m": "Arm reach stated in the prompt's constraints [m]",
    "handover_distance_m": "Handover distance stated in the prompt's constraints [m]",
    "model": "openai: model name",
    "base_url": "openai: endpoint base URL ('' = the SDK default); vLLM, Ollama and llama.cpp servers work",
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
    Param("queue_size", 8, "Goals that may wait while one runs; more are ended with status error"),
    Param("fresh_frame_timeout_s", 3.0, "A check waits for a perception frame newer than the request; "
                                        "none within this time ends it with status error [s]"),
)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


class _FifoQueue:
    """Runs callers one at a time in arrival order; refuses when too many wait."""

    def __init__(self, size: int):
        self.size = size
        self._cond = threading.Condition()
        self._tickets: list[int] = []
        self._next = 0

    def enter(self, cancelled) -> int | None:
        with self._cond:
            if len(self._tickets) > self.size:
                return None
            ticket = self._next
            self._next += 1
            self._tickets.append(ticket)
            while self._tickets[0] != ticket:
                if cancelled():
                    self._tickets.remove(ticket)
                    self._cond.notify_all()
                    return -1
                self._cond.wait(0.1)
            return ticket

    def leave(self, ticket: int) -> None:
        with self._cond:
            self._tickets.remove(ticket)
            self._cond.notify_all()

    @property
    def waiting(self) -> int:
        return max(0, len(self._tickets) - 1)


class IssueDetectorNode(Node):
    def __init__(self, **kwargs):
        super().__init__("issue_detector", **kwargs)
        self.p = declare(self, PARAMS)
        group = ReentrantCallbackGroup()
        self.tools = RosToolExecutor(self, self.p["tool_service"], callback_group=group)
        self._graph_json: dict | None = None
        try:
            settings = DetectorSettings.from_mapping({k: v for k, v in self.p.items() if k in _DESCRIPTIONS})
            self.agent = build_detector(settings, self.tools, scene_graph=lambda: self._graph_json)
        except (ValueError, OSError) as exc:
            raise StartupError(self.get_name(), str(exc)) from None
        self.backend_name = getattr(getattr(self.agent, "llm", None), "name", settings.method)
        self.queue = _FifoQueue(self.p["queue_size"])
        self.pub_report = self.create_publisher(IssueReport, "issue_detector/explanations", 10)
        self.pub_transcript = self.create_publisher(Transcript, "issue_detector/transcripts", 10)
        self._status: dict = {}
        self._status_cond = threading.Condition()
        self.create_subscription(String, self.p["status_topic"], self._on_status, LATCHED, callback_group=group)
        if settings.method == "llm_visual_obs":
            self.create_subscription(String, self.p["scene_graph_topic"], self._on_graph, LATCHED, callback_group=group)
        self._action = ActionServer(self, DetectIssue, "detect_issue", execute_callback=self._on_execute,
                                    goal_callback=lambda _g: GoalResponse.ACCEPT,
                                    cancel_callback=lambda _g: CancelResponse.ACCEPT, callback_group=group)
        self.create_service(DetectIssueSrv, "detect_issue", self._on_service, callback_group=group)
        self.get_logger().info(f"issue detector ready: method {settings.method}, backend {self.backend_name}, "
                               f"toolset {settings.toolset}")

    def _on_graph(self, msg: String) -> None:
        try:
            self._graph_json = json.loads(msg.data).get("graph")
        except (ValueError, AttributeError):
            self.get_logger().warning("scene graph JSON could not be read", throttle_duration_sec=10.0)

    def _on_status(self, msg: String) -> None:
        try:
            status = json.loads(msg.data)
        except ValueError:
            return
        with self._status_cond:
            self._status = status
            self._status_cond.notify_all()

    def _wait_fresh(self, since: float, cancel) -> str | None:
        """Wait until the scene graph reflects a camera frame taken after ``since`` (and the
        provider's truth of that frame's world): what the robot checks is what is there now.
        Returns the reason when it does not happen in time."""
        timeout = self.p["fresh_frame_timeout_s"]
        end = time.monotonic() + timeout
        with self._status_cond:
            while True:
                st = self._status
                if st.get("frame_stamp", 0.0) >= since and st.get("truth_version", -1) >= st.get("world_version", 0):
                    return None
                left = end - time.monotonic()
                if cancel():
                    return "cancelled while waiting for a fresh perception frame"
                if left <= 0:
                    break
                self._status_cond.wait(min(left, 0.1))
        if not st:
            return (f"perception is not running: no scene_graph/status within {timeout:.1f} s "
                    "(is the scene_graph node up?)")
        return (f"perception is stale: {self.p['status_topic']} reports no camera frame newer than the "
                f"request after {timeout:.1f} s (last frame {since - st.get('frame_stamp', 0.0):.1f} s before it; "
                "are the camera, object_detector, depth_distance, spatial_relations and scene_graph running?)")

    # ------------------------------------------------------------------ running one check
    def _check(self, query: str, context: str, on_event=None, cancel=lambda: False) -> AgentResult:
        since = self.get_clock().now().nanoseconds * 1e-9
        ticket = self.queue.enter(cancel)
        if ticket is None:
            return AgentResult(status="error", backend=self.backend_name,
                               error=f"busy: {self.queue.waiting} checks are already waiting (queue_size "
                                     f"{self.p['queue_size']}); try again later")
        if ticket == -1:
            return AgentResult(status="error", backend=self.backend_name, error="cancelled while waiting in the queue")
        try:
            stale = self._wait_fresh(since, cancel) if self.p["fresh_frame_timeout_s"] > 0 else None
            if stale is not None:
                res = AgentResult(status="error", backend=self.backend_name, error=stale)
            else:
                res = self.agent.run(query, context or None, on_event=on_event, cancel=cancel)
        finally:
            self.queue.leave(ticket)
        res.backend = res.backend or self.backend_name
        self._publish(query, context, res)
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
        outcome = f"{res.issue}: {res.explanation}" if res.status == "ok" else f"error: {res.error}"
        self.get_logger().info(f"{query!r} -> {outcome} ({res.elapsed_s:.2f} s)")

    @staticmethod
    def _fill(target, res: AgentResult):
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
        return target

    # ------------------------------------------------------------------ action and service
    def _on_execute(self, goal_handle):
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

        res = self._check(req.query, req.context, on_event, cancel=lambda: goal_handle.is_cancel_requested)
        result = self._fill(DetectIssue.Result(), res)
        if goal_handle.is_cancel_requested:
            goal_handle.canceled()
        elif res.status == "ok":
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    def _on_service(self, req, res):
        return self._fill(res, self._check(req.query, req.context))

    def destroy_node(self):
        self._action.destroy()
        return super().destroy_node()


def main(args=None) -> int:
    return run_node(IssueDetectorNode, args=args, threads=8)
