"""safety_monitor: the Safety Chip (LTL constraints, runtime monitor, unsafe-action pruning).

Services: ``safety_monitor/add_constraint`` (an English sentence, translated and read back in
English, or an LTLf formula; an unparsable formula, an unknown predicate or name, an
untranslatable sentence or an unsatisfiable set is an error naming the problem, and the
previous constraints stay), ``safety_monitor/remove_constraint``, ``safety_monitor/list_constraints``,
``safety_monitor/check_action`` (safe / pending / unsafe / error, the violated constraints, the
state change before and after as in the paper, an explanation and the corrective re-prompt),
``safety_monitor/check_plan`` (the first unsafe step), ``safety_monitor/follow`` (the executor
reports each executed step; the trace advances on the observed state) and
``safety_monitor/reset`` (a new trace, e.g. when a task starts). Unsafe verdicts are published
on ``safety_monitor/violations``. Constraints load from ``constraints_file`` when the first world
state arrives. The world state comes from the simulator truth (``sim/get_ground_truth``, fetched
when ``robot_state`` announces a new world version, as scene_graph does) or from the scene graph.
The logic is the ROS-free raider_ros/safety/service.py; docs/safety.md has the semantics.
"""
from __future__ import annotations

import json
import threading
import time
from collections import deque

from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import Header, String

from raider_ros.agent.factory import DetectorSettings, make_backend
from raider_ros.msg import RobotState, SafetyConstraint, SafetyViolation
from raider_ros.ros.params import Param, declare
from raider_ros.ros.qos import LATCHED, REQUESTS
from raider_ros.ros.spin import StartupError, run_node
from raider_ros.ros.state_summary import StateSummaryPublisher
from raider_ros.safety.automata import Compiler
from raider_ros.safety.constraints import ConstraintFileError, load_constraints
from raider_ros.safety.monitor import SafetyMonitor
from raider_ros.safety.predicates import SymbolicState
from raider_ros.safety.service import SafetyService, Verdict
from raider_ros.safety.translate import ChainTranslator, LLMTranslator, RulesTranslator
from raider_ros.sim.scene import SceneError, load_scene
from raider_ros.state_qa.summarizers import summarize_safety
from raider_ros.common.paths import resolve_scene
from raider_ros.srv import (
    AddConstraint, CheckAction, CheckPlan, FollowStep, GetGroundTruth, ListConstraints, RemoveConstraint,
    ResetMonitor,
)

SUMMARY_HISTORY = 20        # violations and refused actions kept for the state summary

PARAMS = (
    Param("constraints_file", "", "Constraints loaded at start: a file under data/safety/constraints (name) or a path; '' = none"),
    Param("translator", "rules", "English -> LTL: rules (no LLM) | openai | scripted (an LLM first, the rules as fallback)"),
    Param("model", "", "openai: model name ('' = $RAIDER_LLM_MODEL, else gpt-4o-2024-05-13)"),
    Param("base_url", "", "openai: endpoint base URL ('' = $RAIDER_LLM_BASE_URL, else the SDK default)"),
    Param("api_key_env", "OPENAI_API_KEY", "openai: name of the environment variable holding the API key"),
    Param("fixture", "", "scripted: file of recorded translator responses"),
    Param("state_source", "truth", "Where the world state comes from: truth (sim/get_ground_truth) | scene_graph (scene_graph/json)"),
    Param("truth_service", "sim/get_ground_truth", "Service giving the world as a scene document (state_source truth)"),
    Param("scene_graph_topic", "scene_graph/json", "Scene graph JSON (state_source scene_graph)"),
    Param("scene", "", "state_source scene_graph: the scene whose rooms the graph's positions fall in (name or path)"),
    Param("observe_timeout_s", 3.0, "Longest wait for the world state after an executed step (follow) [s]"),
    Param("compile_cache_dir", "", "Directory caching compiled automata across runs ('' = in memory only)"),
)


class SafetyMonitorNode(Node):
    def __init__(self, **kwargs):
        super().__init__("safety_monitor", **kwargs)
        self.p = declare(self, PARAMS)
        try:
            translator = self._translator()
            compiler = Compiler(cache_dir=self.p["compile_cache_dir"] or None)
            self.service = SafetyService(SafetyMonitor(None, compiler=compiler, translator=translator))
            if self.p["state_source"] not in ("truth", "scene_graph"):
                raise ValueError(f"state_source: expected truth or scene_graph, got {self.p['state_source']!r}")
            self.rooms = ()
            if self.p["state_source"] == "scene_graph":
                if not self.p["scene"]:
                    raise ValueError("state_source scene_graph needs the parameter 'scene' (for its rooms)")
                self.rooms = load_scene(resolve_scene(self.p["scene"])).rooms
            if self.p["constraints_file"]:
                items, path = load_constraints(self.p["constraints_file"])
                self.service.queue(items)
                self.constraints_path = str(path)
        except (ValueError, OSError, ConstraintFileError, SceneError) as exc:
            raise StartupError(self.get_name(), str(exc)) from None
        self.translator_name = getattr(translator, "name", "none")
        group = ReentrantCallbackGroup()
        self._truth_group = MutuallyExclusiveCallbackGroup()
        self.truth_client = self.create_client(GetGroundTruth, self.p["truth_service"], callback_group=self._truth_group)
        self.robot_version = -1
        self.truth_version = -1
        self._fetch_lock = threading.Lock()
        self.pub_violations = self.create_publisher(SafetyViolation, "safety_monitor/violations", 20)
        # state summaries for state_qa: constraints, executed violations, refused actions (bounded)
        self.violations: deque[str] = deque(maxlen=SUMMARY_HISTORY)
        self.blocked: deque[str] = deque(maxlen=SUMMARY_HISTORY)
        self.summaries = StateSummaryPublisher(self)
        self._summarize()
        if self.p["state_source"] == "truth":
            self.create_subscription(RobotState, "robot_state", self._on_robot_state, LATCHED, callback_group=group)
            self.create_timer(0.5, self._poll_truth, callback_group=MutuallyExclusiveCallbackGroup())
        else:
            self.create_subscription(String, self.p["scene_graph_topic"], self._on_graph, LATCHED, callback_group=group)
        self.create_service(AddConstraint, "safety_monitor/add_constraint", self._on_add, callback_group=group)
        self.create_service(RemoveConstraint, "safety_monitor/remove_constraint", self._on_remove, callback_group=group)
        self.create_service(ListConstraints, "safety_monitor/list_constraints", self._on_list, callback_group=group)
        self.create_service(CheckAction, "safety_monitor/check_action", self._on_check_action, qos_profile=REQUESTS,
                            callback_group=group)
        self.create_service(CheckPlan, "safety_monitor/check_plan", self._on_check_plan, qos_profile=REQUESTS,
                            callback_group=group)
        self.create_service(FollowStep, "safety_monitor/follow", self._on_follow, callback_group=group)
        self.create_service(ResetMonitor, "safety_monitor/reset", self._on_reset, callback_group=group)
        self.get_logger().info(f"safety monitor ready: translator {self.translator_name}, state from "
                               f"{self.p['state_source']}, constraints file {self.p['constraints_file'] or 'none'}")

    def _summarize(self) -> None:
        """Publish the state summary (the publisher drops it when nothing changed)."""
        self.summaries.publish(lambda: summarize_safety(
            [(c.text or c.english or c.ltl, c.status) for c in self.service.constraints()],
            list(self.violations), list(self.blocked)))

    def _translator(self):
        kind = self.p["translator"]
        if kind == "rules":
            return RulesTranslator()
        if kind not in ("openai", "scripted"):
            raise ValueError(f"translator: expected rules, openai or scripted, got {kind!r}")
        llm = make_backend(DetectorSettings(backend=kind, model=self.p["model"], base_url=self.p["base_url"],
                                            api_key_env=self.p["api_key_env"], fixture=self.p["fixture"]))
        return ChainTranslator([LLMTranslator(llm), RulesTranslator()])

    # ------------------------------------------------------------------ the world
    def _on_robot_state(self, msg: RobotState) -> None:
        self.robot_version = max(self.robot_version, int(msg.world_version))

    def _poll_truth(self) -> None:
        if self.robot_version > self.truth_version or not self.service.has_state:
            self._fetch_truth(timeout=2.0)

    def _fetch_truth(self, timeout: float) -> bool:
        """Ask for the world (blocking up to ``timeout``); True when a state was observed."""
        # a monitor with no world yet (just started or respawned) waits the whole time for its source
        # to appear in discovery; one with a world only briefly
        if not self.truth_client.wait_for_service(timeout_sec=timeout if not self.service.has_state else min(timeout, 0.5)):
            self.get_logger().warning(f"{self.p['truth_service']} not available: no world state",
                                      throttle_duration_sec=10.0)
            return False
        with self._fetch_lock:
            done = threading.Event()
            future = self.truth_client.call_async(GetGroundTruth.Request())
            future.add_done_callback(lambda _f: done.set())
            if not done.wait(timeout):
                return False
            res = future.result()
            if res is None or not res.success:
                return False
            try:
                truth = json.loads(res.truth_json)
                state = SymbolicState.from_truth(truth)
            except (ValueError, SceneError) as exc:
                self.get_logger().error(f"world state rejected: {exc}")
                return False
            self.truth_version = max(self.truth_version, int(truth.get("version", res.robot.world_version)))
            self._observe(state)
            return True

    def _on_graph(self, msg: String) -> None:
        try:
            graph = json.loads(msg.data).get("graph")
            self._observe(SymbolicState.from_snapshot(graph, self.rooms))
        except (ValueError, AttributeError, SceneError) as exc:
            self.get_logger().warning(f"scene graph not usable as a world state: {exc}", throttle_duration_sec=10.0)

    def _observe(self, state: SymbolicState) -> None:
        first = not self.service.has_state
        self.service.observe(state)
        if first:
            self._summarize()
        if first:
            n = len(self.service.constraints())
            if self.service.queue_error:
                self.get_logger().error(f"constraints file {self.p['constraints_file']} not loaded: "
                                        f"{self.service.queue_error}")
            else:
                self.get_logger().info(f"first world state; {n} constraint(s) active")

    def _fresh(self) -> None:
        """Before a verdict: fetch the world when it moved past the copy (or there is none)."""
        if self.p["state_source"] == "truth" and (self.robot_version > self.truth_version or not self.service.has_state):
            self._fetch_truth(timeout=self.p["observe_timeout_s"])

    @staticmethod
    def _state_from(json_text: str) -> SymbolicState | None:
        return SymbolicState.from_truth(json.loads(json_text)) if json_text.strip() else None

    # ------------------------------------------------------------------ constraints
    @staticmethod
    def _constraint_msg(c) -> SafetyConstraint:
        return SafetyConstraint(id=int(c.id), text=c.text, ltl=c.ltl, english=c.english, source=c.source,
                                status=c.status)

    def _on_add(self, req, res):
        self._fresh()
        a = self.service.add(text=req.text, ltl=req.ltl)
        res.success, res.message = a.success, a.message
        if a.constraint is not None:
            res.constraint = self._constraint_msg(a.constraint)
        self.get_logger().info(f"add {req.text or req.ltl!r}: {a.message}")
        self._summarize()
        return res

    def _on_remove(self, req, res):
        if req.all:
            gone = self.service.constraints()
            self.service.clear()
            res.success, res.message = True, f"removed {len(gone)} constraint(s)"
            res.removed = [self._constraint_msg(c) for c in gone]
            self._summarize()
            return res
        a = self.service.remove(req.id)
        res.success, res.message = a.success, a.message
        if a.constraint is not None:
            res.removed = [self._constraint_msg(a.constraint)]
        self._summarize()
        return res

    def _on_list(self, _req, res):
        res.constraints = [self._constraint_msg(c) for c in self.service.constraints()]
        res.translator = self.translator_name
        res.has_state = self.service.has_state
        res.load_error = self.service.queue_error
        res.session = self.service.session
        res.trace_length = len(self.service.monitor.history)
        return res

    # ------------------------------------------------------------------ checks
    def _fill(self, res, v: Verdict):
        res.verdict, res.explanation, res.error = v.verdict, v.explanation, v.reason
        res.violated = [int(i) for i in v.violated]
        res.violated_text = list(v.violated_text)
        res.session, res.trace_length = v.session, int(v.trace_length)
        for name in ("action", "state_safe", "state_violated", "corrective_prompt"):
            if hasattr(res, name):
                setattr(res, name, getattr(v, name))
        if hasattr(res, "pending"):
            res.pending = [int(i) for i in v.pending]
        return res

    def _publish(self, v: Verdict, executed: bool) -> None:
        if v.verdict != "unsafe":
            if executed:
                self._summarize()               # constraint statuses move with the trace
            return
        why = "; ".join(v.violated_text)
        (self.violations if executed else self.blocked).append(f"{v.action} (breaks: {why})" if why else v.action)
        self._summarize()
        self.pub_violations.publish(SafetyViolation(
            header=Header(stamp=self.get_clock().now().to_msg()), action=v.action, executed=executed,
            violated=[int(i) for i in v.violated], violated_text=list(v.violated_text), explanation=v.explanation,
            state_safe=v.state_safe, state_violated=v.state_violated))

    def _on_check_action(self, req, res):
        try:
            state = self._state_from(req.state_json)
        except (ValueError, SceneError) as exc:
            return self._fill(res, Verdict("error", req.action, reason=f"state_json: {exc}",
                                           session=self.service.session))
        if state is None:
            self._fresh()
        v = self.service.check_action(req.action, state)
        self._publish(v, executed=False)
        return self._fill(res, v)

    def _on_check_plan(self, req, res):
        try:
            state = self._state_from(req.state_json)
        except (ValueError, SceneError) as exc:
            res.first_unsafe_step = -1
            return self._fill(res, Verdict("error", reason=f"state_json: {exc}", session=self.service.session))
        if state is None:
            self._fresh()
        v = self.service.check_plan(list(req.steps), state)
        self._publish(v, executed=False)
        res.first_unsafe_step = int(v.first_unsafe_step)
        res.automaton_states = [int(q) for q in v.automaton_states]
        return self._fill(res, v)

    def _on_follow(self, req, res):
        observed = None
        if req.observe and self.p["state_source"] == "truth":
            end = time.monotonic() + self.p["observe_timeout_s"]
            while time.monotonic() < end and not self._fetch_truth(timeout=max(0.1, end - time.monotonic())):
                time.sleep(0.05)
            observed = self.service.latest if self.robot_version <= self.truth_version else None
        elif req.observe:
            observed = self.service.latest
        v = self.service.follow(req.action, observed)
        res.observed = observed is not None
        if v.verdict == "unsafe":
            self.get_logger().error(f"an executed step broke a constraint: {v.explanation}")
        self._publish(v, executed=True)
        return self._fill(res, v)

    def _on_reset(self, _req, res):
        # a task starts: read the world as it is now, not as the last robot_state announced it (a
        # reset of the simulator may not have reached this node yet)
        if self.p["state_source"] == "truth":
            self._fetch_truth(timeout=self.p["observe_timeout_s"])
        else:
            self._fresh()
        v = self.service.reset()
        res.success = v.verdict not in ("error", "unsafe")        # unsafe: the present state already violates a rule
        res.message = v.reason or v.explanation or f"new trace; {len(self.service.constraints())} constraint(s)"
        res.session = self.service.session
        self._summarize()
        return res


def main(args=None) -> int:
    return run_node(SafetyMonitorNode, args=args, threads=6)
