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
"""
from __future__ import annotations

import threading
import time
from typing import Any

from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from std_msgs.msg import Header, String

from raider_ros.action import ExecuteSkill, ExecuteTask
from raider_ros.common.limits import request_problem
from raider_ros.executor.machine import DetectionOutcome, Executor, ExecutorConfig, Ports
from raider_ros.executor.task import TaskError, parse_aliases, resolve_task
from raider_ros.msg import IssueReport, RobotState
from raider_ros.recovery.plan import Literal, Plan, PlanError, PlanStep, Var
from raider_ros.ros.port_wait import wait_answer
from raider_ros.executor.safe_plan import PrefixLooker
from raider_ros.ros.params import Param, declare
from raider_ros.ros.safety_client import SafetyClient
from raider_ros.ros.spin import run_node
from raider_ros.ros.qos import LATCHED
from raider_ros.ros.state_summary import StateSummaryPublisher
from raider_ros.srv import Ask, DetectIssue, PlanRecovery
from raider_ros.state_qa.summarizers import summarize_executor
from raider_ros.state_qa.trackers import ExecutionTracker

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
)


class PlanExecutorNode(Node):
    def __init__(self, **kwargs):
        super().__init__("plan_executor", **kwargs)
        self.p = declare(self, PARAMS)
        self.aliases = parse_aliases(self.p["aliases"])
        group = ReentrantCallbackGroup()
        self.detect_client = self.create_client(DetectIssue, "detect_issue", callback_group=group)
        self.plan_client = self.create_client(PlanRecovery, "plan_recovery", callback_group=group)
        self.ask_client = self.create_client(Ask, "human/ask", callback_group=group)
        self.skill_client = ActionClient(self, ExecuteSkill, "execute_skill", callback_group=group)
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
        if not client.wait_for_service(timeout_sec=min(timeout / 2, self.p["server_wait_s"])):
            raise RuntimeError(f"service {client.srv_name} is not available after {self.p['server_wait_s']:g} s "
                               "(is its node running?)")
        return self._wait(client.call_async(request), timeout, client.srv_name, alive=client.service_is_ready)

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
                                                                 holding=holding or ""), self.p["plan_timeout_s"])
        if not r.success:
            raise PlanError(r.message)
        steps = tuple(PlanStep(s.action, tuple(Var(a) if v else Literal(a) for a, v in zip(s.args, s.arg_is_variable)),
                               s.binds or None) for s in r.steps)
        return Plan(steps, r.plan_text)

    def _skill(self, name: str, args: list[str], cancel) -> tuple[bool, str]:
        if not self.skill_client.wait_for_server(timeout_sec=min(self.p["server_wait_s"], self.p["skill_timeout_s"] / 2)):
            raise RuntimeError("the execute_skill action server is not available (is sim_world / the robot up?)")
        handle = self._wait(self.skill_client.send_goal_async(ExecuteSkill.Goal(skill=name, args=list(args))),
                            min(self.p["skill_goal_wait_s"], self.p["skill_timeout_s"]),
                            "the execute_skill action server (goal request)",
                            alive=self.skill_client.server_is_ready)
        if not handle.accepted:
            return False, f"the robot refused the {name} goal (busy)"
        result_future = handle.get_result_async()
        done = threading.Event()
        result_future.add_done_callback(lambda _f: done.set())
        end = time.monotonic() + self.p["skill_timeout_s"]
        while not done.wait(0.05):
            if cancel.is_set():
                handle.cancel_goal_async()
                done.wait(5.0)
                return False, "cancelled"
            if time.monotonic() > end:
                handle.cancel_goal_async()
                raise TimeoutError(f"skill {name} did not finish within {self.p['skill_timeout_s']:.0f} s")
            if not self.skill_client.server_is_ready():
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
                looker = None
                if self.safety is not None:
                    # the task's trace starts now, before planning (the planner asks the monitor)
                    v = self.safety.reset()
                    if v.verdict != "safe":
                        raise RuntimeError(f"the safety monitor cannot start the task: {v.explanation}")
                    looker = PrefixLooker(self.safety.look) if self.p["safe_planning"] else None
                steps, domain = resolve_task(req.domain, req.problem, list(req.plan), req.mapping,
                                             self.p["planner_time_limit_s"], looker=looker, notes=notes)
            except (RuntimeError, TimeoutError) as exc:       # the monitor, asked while planning
                result.success, result.message = False, f"cannot plan the task safely: {exc}"
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
                                    max_safety_replans=self.p["max_safety_replans"])
            cancel = _GoalCancel(goal_handle)
            outcome = Executor(ports, config).run(steps, cancel)
            self.tracker.finish(outcome)
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

    def destroy_node(self):
        self._action.destroy()
        self.skill_client.destroy()
        return super().destroy_node()


class _GoalCancel:
    def __init__(self, goal_handle: Any):
        self.goal_handle = goal_handle

    def is_set(self) -> bool:
        return bool(self.goal_handle.is_cancel_requested)


def main(args=None) -> int:
    return run_node(PlanExecutorNode, args=args, threads=8)
