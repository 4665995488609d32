"""plan_executor: runs a PDDL task with an issue check before every step (RAIDER §5.2).

Action ``execute_task`` (raider_ros/action/ExecuteTask): goal = a PDDL domain and problem
(files, names under share/raider_ros/data/pddl, or inline text) or a ready plan. It parses
with ``pddl`` (errors give the line and the cause), plans with pyperplan and maps each PDDL
action to a RAIDER query and a robot skill (data/executor/<domain>.yaml). Before each step it
calls ``detect_issue``; on an issue it publishes the explanation, asks ``plan_recovery``, runs
the recovery (skills, ``human/ask``, ``human/say``), checks again within a bounded number of
attempts, then runs the step's skill on ``execute_skill``. When it cannot recover it aborts
with the explanation. Feedback per step; cancel stops between and inside steps.

With ``safety`` on (the graph turns it on), the Safety Chip (node safety_monitor) checks every
skill before it is dispatched (``safety_monitor/check_action``), unsafe ones are pruned and
answered by corrective re-prompts to ``plan_recovery`` whose plans are checked with
``safety_monitor/check_plan``; each executed step is reported (``safety_monitor/follow``); a
task starts a new trace (``safety_monitor/reset``) and is planned with the constraint-aware
planner. An unreachable monitor means no step is dispatched.

A goal may instead be a request in words (``request``, ``task_kind``, ``roles``): with ``memory``
on, its plan comes from the episodic memory (``memory/plan_task``: the best lesson like the
request, else the task's seed example) and runs with the same checks. What the robot did is
recorded (raider_ros/memory/record.py); afterwards it asks the person whether to do anything
differently next time, and when the human interface reads the answer as a correction, a
complaint or "learn that", it sends the interaction to ``memory/learn`` and says the answer (what
it learned, or why not). Recovery plans get the request's words to find learned lessons.
"""
from __future__ import annotations

import dataclasses
import json
import threading
import time
from typing import Any

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from raider_ros.ros.actions import ActionClient
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import Header, String

from raider_ros.action import ExecuteSkill, ExecuteTask
from raider_ros.common.limits import request_problem
from raider_ros.executor.machine import DetectionOutcome, Executor, ExecutorConfig, Ports
from raider_ros.executor.task import TaskError, parse_aliases, parse_roles, resolve_task, steps_from_plan
from raider_ros.memory.dialogue import load_dialogue
from raider_ros.memory.feedback import TRIGGERS
from raider_ros.memory.record import InteractionRecorder
from raider_ros.msg import IssueReport, RobotState
from raider_ros.recovery.plan import Literal, Plan, PlanError, PlanStep, Var
from raider_ros.ros.port_wait import ask_once_more, wait_answer
from raider_ros.executor.safe_plan import PrefixLooker
from raider_ros.ros.params import Param, declare
from raider_ros.ros.safety_client import SafetyClient
from raider_ros.ros.spin import run_node
from raider_ros.ros.qos import LATCHED
from raider_ros.ros.state_summary import StateSummaryPublisher
from raider_ros.srv import Ask, DetectIssue, MemoryLearn, MemoryPlanTask, PlanRecovery
from raider_ros.state_qa.summarizers import summarize_executor
from raider_ros.state_qa.trackers import ExecutionTracker

# who serves each of the executor's ports: a port that does not answer is named by it
SERVER_GONE_S = 1.0   # a skill server unlisted this long while its goal runs has gone (not a graph update)
PORT_NAMES = {"detect": "the detect_issue service", "plan_recovery": "the plan_recovery service",
              "skill": "the execute_skill action server", "ask": "the human/ask service"}

PARAMS = (
    Param("max_recovery_attempts", 3, "Recoveries tried per step before the task is aborted"),
    Param("detect_timeout_s", 60.0, "Longest wait for one issue check [s]"),
    Param("plan_timeout_s", 30.0, "Longest wait for one recovery plan [s]"),
    Param("skill_timeout_s", 60.0, "Longest wait for one robot skill [s]"),
    Param("ask_timeout_s", 60.0, "How long a person has to answer [s]"),
    Param("planner_time_limit_s", 10.0, "Time limit of the PDDL planner [s]"),
    Param("server_wait_s", 10.0, "How long a port waits for its service or action server to appear (a node "
                                 "being respawned) before the task is aborted naming it [s]"),
    Param("skill_goal_wait_s", 10.0, "How long the robot's skill server has to accept or refuse a skill goal "
                                     "(it answers late on a loaded machine) [s]"),
    Param("aliases", "free_table:FreeTable_1", "Names used by recovery plans -> scene ids, 'name:id,name:id'"),
    Param("safety", False, "Check every skill with the Safety Chip (safety_monitor) before dispatching it; "
                           "an unreachable monitor then means no step is dispatched"),
    Param("safety_timeout_s", 5.0, "Longest wait for one answer of the safety monitor [s]"),
    Param("max_safety_replans", 3, "Corrective re-prompts per step after unsafe actions before the task is aborted"),
    Param("safe_planning", True, "With safety on: plan around the constraints (check the plan, re-plan if unsafe)"),
    Param("memory", True, "Plan requests in words from the memory node (memory/plan_task) and learn from the "
                          "person's feedback (memory/learn)"),
    Param("ask_feedback", True, "After a request, ask the person whether to do anything differently next time"),
    Param("feedback_timeout_s", 30.0, "How long the person has to answer that question [s]"),
    Param("memory_timeout_s", 60.0, "Longest wait for memory/plan_task and memory/learn [s]"),
)


class PlanExecutorNode(Node):
    def __init__(self, **kwargs):
        super().__init__("plan_executor", **kwargs)
        self.p = declare(self, PARAMS)
        self.aliases = parse_aliases(self.p["aliases"])
        group = ReentrantCallbackGroup()
        self.detect_client = self.create_client(DetectIssue, "detect_issue", callback_group=group)
        self.plan_client = self.create_client(PlanRecovery, "plan_recovery", callback_group=group)
        self.memory_plan_client = self.create_client(MemoryPlanTask, "memory/plan_task", callback_group=group)
        self.learn_client = self.create_client(MemoryLearn, "memory/learn", callback_group=group)
        self._goal: dict[str, Any] = {}       # the request being run: its words, scene, recovery sources
        self.ask_client = self.create_client(Ask, "human/ask", callback_group=group)
        self.skill_client = ActionClient(self, ExecuteSkill, "execute_skill", callback_group=group)
        self._skill_answered = False     # the skill server has answered a goal request of this node
        self.safety = SafetyClient(self, callback_group=group, timeout_s=self.p["safety_timeout_s"]) \
            if self.p["safety"] else None
        self.pub_say = self.create_publisher(String, "human/say", 20)
        self.pub_explanations = self.create_publisher(IssueReport, "plan_executor/explanations", 20)
        self.summaries = StateSummaryPublisher(self, min_interval_s=0.2)   # task, plan, steps for state_qa
        self.tracker = ExecutionTracker(on_change=lambda: self.summaries.publish(lambda: summarize_executor(self.tracker)))
        self.holding: str | None = None
        self.create_subscription(RobotState, "robot_state", self._on_robot, LATCHED, callback_group=group)
        self._busy = threading.Lock()
        self._action = ActionServer(self, ExecuteTask, "execute_task", execute_callback=self._on_execute,
                                    goal_callback=self._on_goal, cancel_callback=lambda _g: CancelResponse.ACCEPT,
                                    callback_group=group)

    def _on_robot(self, msg: RobotState) -> None:
        self.holding = msg.holding or None

    def _on_goal(self, _goal):
        if self._busy.locked():
            self.get_logger().warning("execute_task rejected: a task is already running")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    # ------------------------------------------------------------------ ROS ports
    def _wait(self, future, timeout: float, what: str, alive=None):
        return wait_answer(future, timeout, what, alive)

    def _service(self, client, request, timeout: float):
        # a node being respawned (2 s after it exits, then its start-up) is waited for
        wait_s = min(timeout / 2, self.p["server_wait_s"])
        if not client.wait_for_service(timeout_sec=wait_s):
            raise RuntimeError(f"service {client.srv_name} is not available after {self.p['server_wait_s']:g} s "
                               "(is its node running?)")
        return ask_once_more(lambda: client.call_async(request),
                             lambda f: self._wait(f, timeout, client.srv_name, alive=client.service_is_ready),
                             lambda: client.wait_for_service(timeout_sec=wait_s), client.srv_name,
                             self.get_logger().warning)

    def _detect(self, query: str, context: str) -> DetectionOutcome:
        problem = request_problem(query, context)
        if problem:       # a person's long or NUL answer: refused here, not cut short by ROS
            return DetectionOutcome(issue="", status="error", reason=f"request refused: {problem}")
        r = self._service(self.detect_client, DetectIssue.Request(query=query, context=context),
                          self.p["detect_timeout_s"])
        return DetectionOutcome(issue=r.issue or "none" if r.status == "ok" else r.issue, explanation=r.explanation,
                                grounding=list(r.grounding), status=r.status, reason=r.error)

    def _plan_recovery(self, query: str, issue: str, explanation: str, holding: str | None) -> Plan:
        r = self._service(self.plan_client, PlanRecovery.Request(query=query, issue=issue, explanation=explanation,
                                                                 holding=holding or "",
                                                                 instructions=list(self._goal.get("said", []))),
                          self.p["plan_timeout_s"])
        self._goal["recovery_source"] = r.source or r.backend
        if not r.success:
            raise PlanError(r.message)
        steps = tuple(PlanStep(s.action, tuple(Var(a) if v else Literal(a) for a, v in zip(s.args, s.arg_is_variable)),
                               s.binds or None) for s in r.steps)
        return Plan(steps, r.plan_text)

    def _skill(self, name: str, args: list[str], cancel) -> tuple[bool, str]:
        # a quarter of the port's own time limit: rclpy's wait polls in sleeps that overrun under load,
        # and the reason must come from here, naming the server, not from the port's time-out
        wait_s = min(self.p["server_wait_s"], self.p["skill_timeout_s"] / 4)
        alive = self.skill_client.server_is_ready
        if not self.skill_client.wait_for_server(timeout_sec=wait_s):
            if not self._skill_answered:
                raise RuntimeError("the execute_skill action server is not available (is sim_world / the robot up?)")
            # it answered this node before: the graph's readiness is a hint, the goal request is the
            # test; its answer is waited for skill_goal_wait_s, and a server that is gone answers nothing
            self.get_logger().warning(f"the execute_skill action server answered before but is not listed as ready "
                                      f"after {wait_s:g} s; sending the {name} goal anyway")
            alive = None
        what = "the execute_skill action server (goal request)"
        # a goal request the server never answered was never accepted: sent again to a respawned server
        handle = ask_once_more(lambda: self.skill_client.send_goal_async(ExecuteSkill.Goal(skill=name, args=list(args))),
                               lambda f: self._wait(f, min(self.p["skill_goal_wait_s"], self.p["skill_timeout_s"] / 2),
                                                    what, alive=alive),
                               lambda: self.skill_client.wait_for_server(timeout_sec=wait_s), what,
                               self.get_logger().warning)
        self._skill_answered = True
        if not handle.accepted:
            return False, f"the robot refused the {name} goal (busy)"
        result_future = handle.get_result_async()
        done = threading.Event()
        result_future.add_done_callback(lambda _f: done.set())
        end = time.monotonic() + self.p["skill_timeout_s"]
        gone_since: float | None = None
        while not done.wait(0.05):
            if cancel.is_set():
                handle.cancel_goal_async()
                done.wait(5.0)
                return False, "cancelled"
            if time.monotonic() > end:
                handle.cancel_goal_async()
                raise TimeoutError(f"skill {name} did not finish within {self.p['skill_timeout_s']:.0f} s")
            if self.skill_client.server_is_ready():
                gone_since = None
            elif gone_since is None:
                gone_since = time.monotonic()
            elif time.monotonic() - gone_since > SERVER_GONE_S:
                # not listed for a while, not one graph update in flux
                raise ConnectionError(f"skill {name}: the execute_skill action server went away while it ran "
                                      "(sim_world or the robot stopped?); the skill's outcome is unknown")
        res = result_future.result().result
        return bool(res.success), res.message

    def _ask(self, question: str, timeout: float) -> str | None:
        r = self._service(self.ask_client, Ask.Request(question=question, timeout_s=float(timeout)), timeout + 5.0)
        return r.answer if r.answered else None

    def _say(self, text: str) -> None:
        self.pub_say.publish(String(data=text))

    def _publish_explanation(self, index: int, query: str, issue: str, explanation: str, grounding: list[str]) -> None:
        self.pub_explanations.publish(IssueReport(header=Header(stamp=self.get_clock().now().to_msg()), query=query,
                                                  issue=issue, explanation=explanation, grounding=list(grounding),
                                                  status="ok", backend=f"plan step {index + 1}"))

    # ------------------------------------------------------------------ the task
    def _on_execute(self, goal_handle):
        result = ExecuteTask.Result()
        with self._busy:
            def fb(stage: str, message: str, index: int = -1, step: str = "") -> None:
                goal_handle.publish_feedback(ExecuteTask.Feedback(step_index=index, step=step, stage=stage,
                                                                  message=message))
            fb("planning", "reading the task and planning")
            notes: list[str] = []
            try:
                req = goal_handle.request
                self._goal = {}
                looker = None
                if self.safety is not None:
                    # the task's trace starts now, before planning (the planner asks the monitor)
                    v = self.safety.reset()
                    if v.verdict != "safe":
                        raise RuntimeError(f"the safety monitor cannot start the task: {v.explanation}")
                    looker = PrefixLooker(self.safety.look) if self.p["safe_planning"] else None
                if req.request.strip():
                    steps, domain = self._request_steps(req)
                    result.plan_source = self._goal["source"]
                else:
                    steps, domain = resolve_task(req.domain, req.problem, list(req.plan), req.mapping,
                                                 self.p["planner_time_limit_s"], looker=looker, notes=notes)
            except (RuntimeError, TimeoutError) as exc:       # the monitor or the memory, asked while planning
                result.success, result.message = False, f"cannot plan the task{' safely' if self.safety else ''}: {exc}"
                self.get_logger().error(result.message)
                goal_handle.abort()
                return result
            except TaskError as exc:
                result.success, result.message = False, f"cannot plan the task: {exc}"
                self.get_logger().error(result.message)
                goal_handle.abort()
                return result
            for note in notes:
                fb("planning", note)
            fb("planning", f"plan of {len(steps)} steps: " + " ".join(str(s) for s in steps))
            self.tracker.start(domain, steps)
            if self._goal:
                fb("planning", f"the plan comes from the memory's {self._goal['source']}")
            ports = Ports(detect=self._detect, plan_recovery=self._plan_recovery, skill=self._skill, ask=self._ask,
                          say=self._say, publish_explanation=self._publish_explanation,
                          feedback=lambda i, step, stage, msg: fb(stage, msg, i, str(step)),
                          holding=lambda: self.holding,
                          **({"check_action": self.safety.check_action, "check_plan": self.safety.check_plan,
                              "follow": self.safety.follow, "safety_reset": self.safety.reset}
                             if self.safety is not None else {}))
            ports = self.tracker.attach(ports)
            config = ExecutorConfig(max_recovery_attempts=self.p["max_recovery_attempts"],
                                    detect_timeout_s=self.p["detect_timeout_s"], plan_timeout_s=self.p["plan_timeout_s"],
                                    skill_timeout_s=self.p["skill_timeout_s"], ask_timeout_s=self.p["ask_timeout_s"],
                                    aliases=self.aliases, initial_holding=self.holding,
                                    safety_timeout_s=self.p["safety_timeout_s"],
                                    max_safety_replans=self.p["max_safety_replans"],
                                    port_names=PORT_NAMES)
            cancel = _GoalCancel(goal_handle)
            recorder = self._recorder(req) if self._goal else None
            if recorder is not None:
                ports = _recorded(ports, recorder)
            outcome = Executor(ports, config).run(steps, cancel)
            self.tracker.finish(outcome)
            if recorder is not None and outcome.status != "cancelled":
                result.lesson = self._learn_from_feedback(recorder, outcome.success, outcome.reason, fb)
        result.success = outcome.success
        result.message = outcome.reason
        result.steps_done = outcome.steps_done
        result.steps_total = outcome.steps_total
        result.step_log = outcome.log_lines()
        self.get_logger().info(f"task {domain}: {outcome.status} - {outcome.reason}")
        if outcome.status == "cancelled":
            goal_handle.canceled()
        elif outcome.success:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        return result

    # ------------------------------------------------------------------ requests and learning
    def _request_steps(self, req) -> tuple[list, str]:
        """The plan of a request in words, from the memory node (memory/plan_task)."""
        if not self.p["memory"]:
            raise TaskError("a request in words needs the memory (parameter memory is false); give a PDDL task")
        roles = parse_roles(list(req.roles))
        try:
            r = self._service(self.memory_plan_client, MemoryPlanTask.Request(
                request=req.request, task=req.task_kind, roles=[f"{k}:{v}" for k, v in roles.items()]),
                self.p["memory_timeout_s"])
        except (RuntimeError, TimeoutError) as exc:
            raise TaskError(f"the memory did not plan the request: {exc}") from None
        if not r.success:
            raise TaskError(f"the memory has no plan for {req.request!r}: {r.message}")
        plan = Plan(tuple(PlanStep(s.action, tuple(Var(a) if v else Literal(a) for a, v in
                                                   zip(s.args, s.arg_is_variable)), s.binds or None) for s in r.steps),
                    r.plan_text)
        steps = steps_from_plan(plan)
        self._goal = {"said": [req.request], "roles": roles, "plan": r.plan_text, "source": r.source,
                      "scene_json": r.scene_json, "recovery_source": ""}
        if r.skipped:
            self.get_logger().info(f"lessons not used for {req.request!r}: {'; '.join(r.skipped)}")
        return steps, f"request {req.request!r} (plan from {r.source})"

    def _recorder(self, req) -> InteractionRecorder:
        try:
            scene = str(json.loads(self._goal["scene_json"]).get("name") or "") if self._goal["scene_json"] else ""
        except (ValueError, AttributeError):
            scene = ""
        return InteractionRecorder(req.request, req.task_kind, self._goal["roles"], scene=scene,
                                   plan=self._goal["plan"], plan_source=self._goal["source"],
                                   source_of=lambda: self._goal.get("recovery_source", ""))

    def _learn_from_feedback(self, recorder: InteractionRecorder, success: bool, reason: str, fb) -> str:
        """Ask the person for feedback; when it is a correction, complaint or 'learn that', send the
        interaction to memory/learn and say the answer. Returns what to report ('' = nothing)."""
        if not (self.p["memory"] and self.p["ask_feedback"]):
            return ""
        it = recorder.finish(success, reason)
        dialogue = load_dialogue()
        timeout = self.p["feedback_timeout_s"]
        try:
            r = self._service(self.ask_client, Ask.Request(question=dialogue.question(success), timeout_s=timeout),
                              timeout + 5.0)
        except (RuntimeError, TimeoutError) as exc:
            self.get_logger().warning(f"no feedback asked: {exc}")
            return ""
        if not r.answered or not r.answer.strip() or (r.feedback_kind and r.feedback_kind not in TRIGGERS):
            return ""
        fb("learning", f"the person said: {r.answer}")
        try:
            lr = self._service(self.learn_client, MemoryLearn.Request(
                interaction_json=it.to_json(), feedback=r.answer, feedback_kind=r.feedback_kind,
                scene_json=self._goal.get("scene_json", "")), self.p["memory_timeout_s"])
            message = lr.message
            report = (f"learned lesson {', '.join(str(i) for i in lr.ids)}: " if lr.stored else "not learned: ") \
                + (lr.improvement if lr.stored else lr.reason or lr.message)
        except (RuntimeError, TimeoutError) as exc:
            message = dialogue.say("unavailable", why=str(exc))
            report = f"not learned: {exc}"
        self._say(message)
        fb("learning", report)
        self.get_logger().info(report)
        return report

    def destroy_node(self):
        self._action.destroy()
        self.skill_client.destroy()
        return super().destroy_node()


def _recorded(ports: Ports, rec: InteractionRecorder) -> Ports:
    """The same ports, with what the executor does written down by ``rec``."""
    return dataclasses.replace(ports, plan_recovery=rec.plan_port(ports.plan_recovery), skill=rec.skill_port(ports.skill),
                               ask=rec.ask_port(ports.ask), say=rec.say_port(ports.say),
                               feedback=rec.feedback_port(ports.feedback))


class _GoalCancel:
    def __init__(self, goal_handle: Any):
        self.goal_handle = goal_handle

    def is_set(self) -> bool:
        return bool(self.goal_handle.is_cancel_requested)


def main(args=None) -> int:
    return run_node(PlanExecutorNode, args=args, threads=8)
