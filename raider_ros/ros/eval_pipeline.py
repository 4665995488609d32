"""The evaluation harness's ROS pipeline: every case goes through the running node graph.

``RosPipeline`` starts (or, with ``start_graph=False``, joins) sim_world, the perception nodes,
scene_graph and issue_detector. For a case it loads the case's scene into the simulator when
it changes, applies the case's setup (reset first), waits until the scene graph has folded
in a frame and the provider's truth of that world version, then calls ``detect_issue``.
"""
from __future__ import annotations

import atexit
import json
import threading
import time
from typing import Any

import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from raider_ros.agent.factory import DetectorSettings, build_detector, make_backend
from raider_ros.common.tool_contract import NoTools
from raider_ros.evaluation.runner import DetectOutcome, RecoveryOutcome
from raider_ros.msg import SceneGraphStatus
from raider_ros.ros.conversions import msg_to_status
from raider_ros.ros.goal_queue import GraphStatus
from raider_ros.ros.graph import NodeGraph, wait_for_services
from raider_ros.ros.qos import LATCHED
from raider_ros.sim.scene import Scene, dump_scene
from raider_ros.srv import ApplySetup, DetectIssue, LoadScene, PlanRecovery

GRAPH = ("sim_world", "object_detector", "depth_distance", "spatial_relations", "scene_graph", "issue_detector")


class PipelineError(RuntimeError):
    pass


class RosPipeline:
    def __init__(self, backend: str = "rules", *, start_graph: bool = True, detector_params: dict | None = None,
                 sim_params: dict | None = None, log_dir: str | None = None, call_timeout_s: float = 60.0,
                 refresh_timeout_s: float = 20.0):
        self.call_timeout_s = call_timeout_s
        self.refresh_timeout_s = refresh_timeout_s
        self.detector_params = {"backend": backend, **(detector_params or {})}
        try:   # the issue detector would refuse these at start: say so now, in one line
            settings = DetectorSettings.from_mapping({k: v for k, v in self.detector_params.items()
                                                      if k in DetectorSettings.__dataclass_fields__})
            if settings.method == "llm_visual_obs" and settings.backend == "rules":
                build_detector(settings, NoTools())
            elif settings.backend != "rules" and settings.method != "precond":
                make_backend(settings)       # a missing API key or fixture, named before any node starts
        except ValueError as exc:
            raise PipelineError(str(exc)) from None
        self.name = settings.label()
        self.toolset = str(self.detector_params.get("toolset", "household"))
        self.graph = NodeGraph(log_dir) if start_graph else None
        self._scene_key: str | None = None
        self._status = GraphStatus()
        self._status_cond = threading.Condition()
        if self.graph is not None:
            self.graph.start("sim_world", {"skill_duration_s": 0.0, **(sim_params or {})})
            for name in GRAPH[1:-1]:
                self.graph.start(name)
            self.graph.start("issue_detector", self.detector_params)
            planner = {k: v for k, v in self.detector_params.items()
                       if k in ("backend", "model", "base_url", "api_key_env", "fixture")}
            if settings.method != "raider" or planner.get("backend") == "scripted":
                planner = {"backend": "rules"}   # baselines and recorded detector replies: the offline planner
            self.graph.start("recovery_planner", planner)
            atexit.register(self.close)
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = Node("evaluation_client", context=self.context)
        self.load = self.node.create_client(LoadScene, "sim/load_scene")
        self.setup = self.node.create_client(ApplySetup, "sim/apply_setup")
        self.detect_client = self.node.create_client(DetectIssue, "detect_issue")
        self.plan_client = self.node.create_client(PlanRecovery, "plan_recovery")
        self._detect_clients = {self.toolset: self.detect_client}
        self.node.create_subscription(SceneGraphStatus, "scene_graph/status", self._on_status, LATCHED)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._spin = threading.Thread(target=self._spin_loop, daemon=True)
        self._spin.start()
        try:
            wait_for_services(self.node, [self.load, self.setup, self.detect_client], 60.0, self.graph)
        except Exception:
            self.close()
            raise

    def _spin_loop(self) -> None:
        while self.context.ok():
            try:
                self.executor.spin_once(timeout_sec=0.1)
            except Exception:  # noqa: BLE001 - context shut down under us
                break

    def _on_status(self, msg: SceneGraphStatus) -> None:
        with self._status_cond:
            self._status = msg_to_status(msg)
            self._status_cond.notify_all()

    def _call(self, client, request, attempts: int = 3):
        """Call and wait; the scene and setup calls are idempotent (the scene as text, the setup
        with reset), so a request that got no answer is sent again, ``attempts`` times within
        ``call_timeout_s`` in all: a reply to a request sent right after the server appeared in
        discovery can be lost (the server may not yet know this client's reply reader)."""
        end = time.monotonic() + self.call_timeout_s
        per_attempt = self.call_timeout_s / max(1, attempts)
        while True:
            if self.graph is not None:
                self.graph.check_alive()
            future = client.call_async(request)
            done = threading.Event()
            future.add_done_callback(lambda _f: done.set())
            if done.wait(min(per_attempt, max(0.0, end - time.monotonic()))):
                return future.result()
            client.remove_pending_request(future)
            if time.monotonic() >= end:
                raise PipelineError(f"{client.srv_name}: no answer within {self.call_timeout_s:.0f} s")

    # ------------------------------------------------------------------ Pipeline protocol
    def prepare(self, scene: Scene, setup: Any) -> None:
        key = f"{scene.source}:{scene.name}"
        if key != self._scene_key:
            res = self._call(self.load, LoadScene.Request(yaml_text=dump_scene(scene)))
            if not res.success:
                raise PipelineError(f"the simulator refused scene {scene.name}: {res.message}")
            self._scene_key = key
        res = self._call(self.setup, ApplySetup.Request(setup_yaml=json.dumps(setup) if setup else "", reset=True))
        if not res.success:
            raise PipelineError(f"the simulator refused the setup: {res.message}")
        version = res.world_version
        end = time.monotonic() + self.refresh_timeout_s
        with self._status_cond:
            while not (self._status.world_version >= version and self._status.truth_version >= version):
                left = end - time.monotonic()
                if left <= 0:
                    raise PipelineError(f"perception did not refresh to world version {version} within "
                                        f"{self.refresh_timeout_s:.0f} s (scene graph at {self._status})")
                self._status_cond.wait(min(left, 0.5))
                if self.graph is not None:
                    self.graph.check_alive()

    def _client_for(self, toolset: str):
        """The issue detector of a toolset; cases that name another toolset (an optional
        benchmark key) get their own detector, started on first use in namespace /<toolset>."""
        if toolset not in self._detect_clients:
            if self.graph is None:
                raise PipelineError(f"no issue detector for toolset {toolset!r} in the running graph")
            ns = "/" + toolset
            self.graph.start("issue_detector", name=f"issue_detector_{toolset}", namespace=ns, params={
                **self.detector_params, "toolset": toolset, "tool_service": "/scene_graph/call_tool",
                "status_topic": "/scene_graph/status", "scene_graph_topic": "/scene_graph/json"})
            client = self.node.create_client(DetectIssue, f"{ns}/detect_issue")
            wait_for_services(self.node, [client], 60.0, self.graph)
            self._detect_clients[toolset] = client
        return self._detect_clients[toolset]

    def detect(self, query: str, context: str | None = None, toolset: str | None = None) -> DetectOutcome:
        client = self._client_for(str(toolset or self.toolset))
        r = self._call(client, DetectIssue.Request(query=query, context=context or ""), attempts=1)
        return DetectOutcome(issue=r.issue or None, explanation=r.explanation, grounding=list(r.grounding),
                             status=r.status, error=r.error or None, llm_turns=r.llm_turns, tool_calls=r.tool_calls,
                             prompt_tokens=r.prompt_tokens, completion_tokens=r.completion_tokens,
                             elapsed_s=r.elapsed_s, warnings=list(r.warnings), tools_used=list(r.tools_used))

    def plan_recovery(self, query: str, issue: str, explanation: str, holding: str | None,
                      grounding: list[str], context: str = "") -> RecoveryOutcome:
        if not self.plan_client.service_is_ready():
            wait_for_services(self.node, [self.plan_client], 30.0, self.graph)
        r = self._call(self.plan_client, PlanRecovery.Request(query=query, issue=issue, explanation=explanation,
                                                              holding=holding or "", grounding=list(grounding)),
                       attempts=1)
        if not r.success:
            return RecoveryOutcome(status="error", error=r.message, plan_text=r.plan_text)
        return RecoveryOutcome(steps=[(s.action, list(zip(s.args, s.arg_is_variable))) for s in r.steps],
                               plan_text=r.plan_text)

    def close(self) -> None:
        if getattr(self, "context", None) is not None and self.context.ok():
            self.executor.shutdown(timeout_sec=1.0)
            self.node.destroy_node()
            self.context.try_shutdown()
        if self.graph is not None:
            self.graph.stop_all()


def make_pipeline(backend: str, **settings) -> RosPipeline:
    """``settings`` are issue_detector parameters (``--set method=precond``, ``--set toolset=...``).
    ``--set start_graph=false`` joins a graph that is already running (a robot's, started with
    ``ros2 launch raider_ros raider.launch.py``) instead of starting the nodes."""
    start = settings.pop("start_graph", True)
    if isinstance(start, str):
        start = start.strip().lower() not in ("false", "0", "no")
    return RosPipeline(backend, start_graph=bool(start), detector_params=settings)
