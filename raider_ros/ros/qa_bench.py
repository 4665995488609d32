"""The state-QA benchmark through the node graph (the ROS mode of ``make qa-eval``).

For each scenario of a benchmark directory (format in docs/state_qa.md) a fresh graph is
started - sim_world, the perception nodes, scene_graph, state_qa, and for executor scenarios
issue_detector, recovery_planner, human_interface (the scripted person) and plan_executor. The
scenario runs up to its checkpoint through the nodes (``execute_task`` with the first N plan
steps, or ``execute_skill`` per action), the summaries are collected from ``state/summaries``
until they settle, a safety summary given in the file is published as the safety monitor would,
and each question goes through ``ask_robot``. Scoring is the core's (truthfulness against the
summaries collected from the topic).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import rclpy
from raider_ros.ros.actions import ActionClient
from rclpy.context import Context
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import String

from raider_ros.action import ExecuteSkill, ExecuteTask
from raider_ros.msg import RobotState, SceneGraphStatus, StateSummary as StateSummaryMsg
from raider_ros.ros.graph import NodeGraph, wait_for_services
from raider_ros.ros.qos import LATCHED
from raider_ros.ros.state_summary import SUMMARY_QOS, TOPIC, StateSummaryPublisher, msg_to_summary
from raider_ros.srv import Ask, AskRobot, DetectIssue, PlanRecovery
from raider_ros.state_qa.answer import QAAnswer
from raider_ros.state_qa.benchmark import BenchReport, BenchScenario, QuestionResult, ScenarioRun
from raider_ros.state_qa.evaluation import truthful
from raider_ros.state_qa.modules import StateQAError
from raider_ros.state_qa.summarizers import summarize_generic
from raider_ros.state_qa.summary import SummaryHistory

PERCEPTION = ("object_detector", "depth_distance", "spatial_relations")
EXECUTOR_NODES = ("issue_detector", "recovery_planner", "human_interface", "plan_executor")


class QABenchError(RuntimeError):
    """A scenario that could not be run through the graph; the message says where it stopped."""


@dataclass
class AskResult:
    answer: QAAnswer
    rtt_s: float                     # service round trip seen by the client


class QAClient:
    """A client node in its own Context: collects ``state/summaries``, calls ``ask_robot``,
    runs skills and tasks. Blocking helpers, called from the caller's thread."""

    def __init__(self, graph: NodeGraph | None = None, name: str = "qa_bench_client"):
        self.graph = graph
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = Node(name, context=self.context)
        self.history = SummaryHistory(max_per_module=200)
        self.arrivals = 0
        self.last_arrival = 0.0
        self.robot_version = -1
        self.graph_status: SceneGraphStatus | None = None
        self._cond = threading.Condition()
        self.node.create_subscription(StateSummaryMsg, TOPIC, self._on_summary, SUMMARY_QOS)
        self.node.create_subscription(RobotState, "robot_state", self._on_robot, LATCHED)
        self.node.create_subscription(SceneGraphStatus, "scene_graph/status", self._on_status, LATCHED)
        self.ask_client = self.node.create_client(AskRobot, "ask_robot")
        self.skill_client = ActionClient(self.node, ExecuteSkill, "execute_skill")
        self.task_client = ActionClient(self.node, ExecuteTask, "execute_task")
        self._safety: StateSummaryPublisher | None = None
        self.executor = MultiThreadedExecutor(num_threads=2, context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    # ------------------------------------------------------------------ inputs
    def _on_summary(self, msg) -> None:
        try:
            s = msg_to_summary(msg)
        except StateQAError:
            return
        with self._cond:
            self.history.add(s)
            self.arrivals += 1
            self.last_arrival = time.monotonic()
            self._cond.notify_all()

    def _on_robot(self, msg) -> None:
        with self._cond:
            self.robot_version = max(self.robot_version, int(msg.world_version))
            self._cond.notify_all()

    def _on_status(self, msg) -> None:
        with self._cond:
            self.graph_status = msg
            self._cond.notify_all()

    # ------------------------------------------------------------------ waiting
    def wait(self, predicate: Callable[[], bool], timeout: float, what: str | Callable[[], str]) -> None:
        end = time.monotonic() + timeout
        with self._cond:
            while not predicate():
                if self.graph is not None:
                    self.graph.check_alive()
                left = end - time.monotonic()
                if left <= 0:
                    raise QABenchError(f"{what() if callable(what) else what}: not within {timeout:.0f} s")
                self._cond.wait(min(left, 0.5))

    def graph_current(self) -> bool:
        """The scene graph reflects the newest world version (frame and truth)."""
        st = self.graph_status
        return st is not None and self.robot_version >= 0 and st.world_version >= self.robot_version \
            and st.truth_version >= self.robot_version

    def wait_ready(self, modules: Sequence[str], timeout: float = 180.0) -> None:
        self.wait(lambda: self.graph_current() and all(self.history.latest(m) for m in modules), timeout,
                  f"the graph's first summaries ({', '.join(modules)})")
        wait_for_services(self.node, [self.ask_client], timeout, self.graph)

    def settle(self, modules: Sequence[str], quiet_s: float = 2.0, timeout: float = 90.0) -> None:
        """Wait until the scene graph shows the current world and no summary arrived for
        ``quiet_s`` (the throttled publishers have flushed)."""
        self.wait(lambda: self.graph_current() and all(self.history.latest(m) for m in modules), timeout,
                  lambda: "summaries of the current world (" + ("scene graph behind the world; " if not
                          self.graph_current() else "") + "missing: " +
                  (", ".join(m for m in modules if not self.history.latest(m)) or "none") + ")")
        end = time.monotonic() + timeout
        while time.monotonic() - self.last_arrival < quiet_s:
            if time.monotonic() > end:
                raise QABenchError(f"summaries did not settle within {timeout:.0f} s")
            time.sleep(0.1)

    # ------------------------------------------------------------------ actions
    def _action(self, client: ActionClient, goal: Any, timeout: float, what: str):
        if not client.wait_for_server(timeout_sec=min(timeout, 60.0)):
            raise QABenchError(f"{what}: the action server is not available")
        handle = _wait_future(client.send_goal_async(goal), 30.0, what)
        if not handle.accepted:
            raise QABenchError(f"{what}: the goal was refused")
        return _wait_future(handle.get_result_async(), timeout, what, self.graph).result

    def skill(self, name: str, args: Sequence[str], timeout: float = 60.0):
        return self._action(self.skill_client, ExecuteSkill.Goal(skill=name, args=list(args)), timeout,
                            f"skill {name}{list(args)}")

    def task(self, domain: str, plan_lines: Sequence[str], timeout: float = 600.0):
        return self._action(self.task_client, ExecuteTask.Goal(domain=domain, plan=list(plan_lines)), timeout,
                            f"task {domain}")

    def remember(self, entries: list[dict], timeout: float = 120.0) -> None:
        """Put remembered objects (``SceneGraph.remember`` entries, e.g. the rest of a generated
        house) into the scene graph through ``scene_graph/remember`` and wait until the graph
        counts them."""
        import json
        pub = self.node.create_publisher(String, "scene_graph/remember", 10)
        self.wait(lambda: pub.get_subscription_count() > 0, 60.0, "scene_graph/remember subscriber")
        before = self.graph_status.objects if self.graph_status is not None else 0
        pub.publish(String(data=json.dumps(entries)))
        need = before + len(entries)
        self.wait(lambda: self.graph_status is not None and self.graph_status.objects >= need, timeout,
                  lambda: f"the scene graph to count {need} objects (it has "
                          f"{self.graph_status.objects if self.graph_status else 0})")

    def publish_safety(self, data: dict) -> None:
        """What a safety monitor would publish (the benchmark file's ``safety``)."""
        if self._safety is None:
            self._safety = StateSummaryPublisher(self.node, min_interval_s=0.0)
        self._safety.publish(lambda: summarize_generic("safety_monitor", data))

    # ------------------------------------------------------------------ questions
    def ask(self, question: str, timeout: float = 60.0) -> AskResult:
        t0 = time.perf_counter()
        r = _wait_future(self.ask_client.call_async(AskRobot.Request(question=question)), timeout,
                         "ask_robot", self.graph)
        rtt = time.perf_counter() - t0
        evidence = []
        for m in r.evidence:
            try:
                evidence.append(msg_to_summary(m))
            except StateQAError:
                pass
        ans = QAAnswer(question, r.answer, tuple(r.modules), tuple(evidence), r.backend, tuple(r.labels), r.status,
                       prompt_tokens_selected=int(r.prompt_tokens_selected), prompt_tokens_all=int(r.prompt_tokens_all),
                       elapsed_s=float(r.elapsed_s), note=r.note)
        return AskResult(ans, rtt)

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=2.0)
        self.node.destroy_node()
        self.context.try_shutdown()


def _wait_future(future, timeout: float, what: str, graph: NodeGraph | None = None):
    done = threading.Event()
    future.add_done_callback(lambda _f: done.set())
    end = time.monotonic() + timeout
    while not done.wait(0.5):
        if graph is not None:
            graph.check_alive()
        if time.monotonic() > end:
            raise QABenchError(f"{what}: no answer within {timeout:.0f} s")
    return future.result()


# --------------------------------------------------------------------------- one scenario
def plan_lines(domain: str, steps: int | None) -> list[str]:
    """The first ``steps`` actions of the PDDL plan for a named domain, as plan lines."""
    from raider_ros.executor.pddl_plan import load_named, plan
    actions = plan(load_named(domain)).actions
    return [str(a) for a in actions[: steps or len(actions)]]


@dataclass
class RosScenarioResult:
    run: ScenarioRun
    results: list[QuestionResult] = field(default_factory=list)
    rtt_ms: list[float] = field(default_factory=list)
    startup_s: float = 0.0
    run_s: float = 0.0
    first_ms: float = 0.0            # the first ask_robot (may wait for the node's embedding model)
    after_change_ms: float = 0.0     # the first ask_robot after the scenario's checkpoint (may wait
                                     # for the node to embed the facts of the summaries just received)


def start_graph(bench: BenchScenario, graph: NodeGraph, qa_params: dict | None = None,
                llm_params: dict | None = None) -> None:
    sc = bench.scenario
    graph.start("sim_world", {"scene": sc["scene"], "skill_duration_s": 0.1})
    for name in PERCEPTION:
        graph.start(name)
    # what the graph remembers must not depend on how fast a loaded machine runs the scenario
    # (the in-process runner uses a logical clock for the same reason): nothing is forgotten
    graph.start("scene_graph", {"preload_user_info": False, "forget_after_s": 3600.0})
    graph.start("state_qa", {"backend": "rules", **(qa_params or {})})
    if sc["run"] == "executor":
        graph.start("issue_detector", {"toolset": sc["toolset"], "time_limit_s": 120.0, **(llm_params or {})})
        graph.start("recovery_planner", {"backend": "rules", **(llm_params or {})})
        graph.start("human_interface", {"backend": "scripted", "scenario": sc["person"]})
        graph.start("plan_executor", {"aliases": "free_table:FreeTable_1"})


def run_scenario_ros(bench: BenchScenario, *, log_dir: str | None = None, qa_params: dict | None = None,
                     llm_params: dict | None = None, extra_questions: Sequence[str] = (),
                     on_line: Callable[[str], None] = lambda _s: None,
                     house_objects: int = 0) -> tuple[RosScenarioResult, list[AskResult]]:
    """Run one scenario through a fresh graph and ask its questions (then ``extra_questions``,
    whose answers are returned unscored, e.g. the held-out split for selection over ROS).
    ``house_objects`` > 0: the scenario's scene is embedded as one room of a generated house of
    that many objects (``embed_case``, seed 0) and the rest of the house is put into the scene
    graph as remembered objects before the scenario runs (house scale)."""
    sc = bench.scenario
    t0 = time.monotonic()
    with NodeGraph(log_dir) as graph:
        start_graph(bench, graph, qa_params, llm_params)
        client = QAClient(graph)
        try:
            base = ["world_model", "people", "robot"]
            client.wait_ready(base)
            # one unscored question first: the node loads its model and selector in the background at
            # start, and the timed answers are those of a node that is ready
            first_ms = client.ask("What are you doing?", timeout=300.0).rtt_s * 1000
            if house_objects:
                from raider_ros.sim.house import embed_case, memory_entries
                from raider_ros.common.paths import resolve_scene
                from raider_ros.sim.scene import load_scene
                house = embed_case(load_scene(resolve_scene(sc["scene"])), house_objects, seed=0)
                client.remember(memory_entries(house))
            startup = time.monotonic() - t0
            on_line(f"{bench.name}: graph up in {startup:.0f} s"
                    + (f" (house of {house_objects} objects)" if house_objects else ""))
            t1 = time.monotonic()
            if sc["run"] == "actions":
                acts = sc["actions"][: int(sc.get("checkpoint") or len(sc["actions"]))]
                log = []
                for a in acts:
                    r = client.skill(a[0], a[1:])
                    log.append(f"{a[0]}({', '.join(a[1:])}) -> {r.message}")
                outcome = f"{len(acts)} action(s) run"
                modules = base
            else:
                wait_for_services(client.node, [client.node.create_client(t, n) for t, n in (
                    (DetectIssue, "detect_issue"), (PlanRecovery, "plan_recovery"), (Ask, "human/ask"))], 120.0, graph)
                lines = plan_lines(sc["domain"], sc.get("steps"))
                r = client.task(sc["domain"], lines)
                outcome = f"{'success' if r.success else 'aborted'}: {r.message}"
                log = list(r.step_log)
                modules = base + ["plan_executor"]     # human_interface only if the robot talked
            if bench.safety is not None:
                client.publish_safety(bench.safety)
                modules = modules + ["safety_monitor"]
            client.settle(modules)
            run_s = time.monotonic() - t1
            on_line(f"{bench.name}: {outcome} ({run_s:.0f} s); summaries from "
                    f"{', '.join(client.history.modules())}")
            run = ScenarioRun(client.history, outcome, log)
            result = RosScenarioResult(run, startup_s=startup, run_s=run_s, first_ms=first_ms)
            known = list(client.history.latest_all().values())
            # unscored and timed apart: the first question after the state changed pays for embedding
            # the new summaries' facts if the node's background indexing has not finished yet
            result.after_change_ms = client.ask("What are you doing?").rtt_s * 1000
            for bq in bench.questions:
                ar = client.ask(bq.text)
                truth = truthful(ar.answer.answer, expected=bq.expected, summaries=known, question=bq.text)
                rec = (len(set(bq.modules) & set(ar.answer.labels)) / len(bq.modules)) if bq.modules else 1.0
                result.results.append(QuestionResult(bench.name, bq, ar.answer, truth, rec))
                result.rtt_ms.append(ar.rtt_s * 1000)
            extra = [client.ask(q) for q in extra_questions]
            return result, extra
        finally:
            client.close()


def run_benchmark_ros(benches: Sequence[BenchScenario], **kw: Any) -> tuple[BenchReport, list[RosScenarioResult]]:
    results, runs, per = [], {}, []
    for b in benches:
        r, _ = run_scenario_ros(b, **kw)
        per.append(r)
        runs[b.name] = r.run
        results.extend(r.results)
    return BenchReport(results, runs), per
