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
from dataclasses import fields

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import Header, String

from raider_ros.action import DetectIssue
from raider_ros.agent.factory import DetectorSettings, build_detector
from raider_ros.agent.flow import AgentResult
from raider_ros.msg import IssueReport, SceneGraphStatus, Transcript
from raider_ros.ros import conversions as conv
from raider_ros.ros.goal_queue import FreshnessGate, GoalQueue, QueueRefused
from raider_ros.ros.params import Param, declare
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
    Param("queue_size", 8, "Goals that may wait while one runs; more are ended with status error"),
    Param("fresh_frame_timeout_s", 8.0, "A check waits for a perception frame newer than the request; "
                                        "none within this time ends it with status error [s]"),
)


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
        self.queue = GoalQueue(self.p["queue_size"])
        self.freshness = FreshnessGate(self.p["status_topic"])
        self.pub_report = self.create_publisher(IssueReport, "issue_detector/explanations", 10)
        self.pub_transcript = self.create_publisher(Transcript, "issue_detector/transcripts", 10)
        self.summaries = StateSummaryPublisher(self, min_interval_s=0.0)   # every check, for state_qa
        self.create_subscription(SceneGraphStatus, self.p["status_topic"],
                                 lambda m: self.freshness.update(conv.msg_to_status(m)), LATCHED, callback_group=group)
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

    # ------------------------------------------------------------------ running one check
    def _check(self, query: str, context: str, on_event=None, cancel=lambda: False) -> AgentResult:
        since = self.get_clock().now().nanoseconds * 1e-9
        try:
            with self.queue.turn(cancel):
                timeout = self.p["fresh_frame_timeout_s"]
                stale = self.freshness.wait_fresh(since, timeout, cancel) if timeout > 0 else None
                if stale is not None:
                    res = AgentResult(status="error", backend=self.backend_name, error=stale)
                else:
                    res = self.agent.run(query, context or None, on_event=on_event, cancel=cancel)
        except QueueRefused as exc:
            return AgentResult(status="error", backend=self.backend_name, error=str(exc))
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
        self.summaries.publish(lambda: summarize_issue_check(query, res, context=context))
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
        target.warnings = [f"{w.number} {w.title}" for w in res.warnings]
        target.tools_used = [c.name for c in res.tool_calls]
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
