"""recovery_planner: turns a detected issue and its explanation into an interactive recovery plan.

Service ``plan_recovery`` (raider_ros/srv/PlanRecovery): query, issue, explanation, what the
robot holds -> ordered steps (action, arguments, the variable an ask() binds) and the raw plan
text. The plan is written by the rules backend (per issue category) or an LLM with the few-shot
prompt of data/prompts/recovery, and is always parsed by the ast-whitelist interpreter: plan
text is never executed.

With ``memory`` on (the default) the planner uses the episodic memory through the memory node's
``memory/retrieve`` (raider_ros/ros/memory_client.py): an LLM gets the top-k recovery examples
for what the person said (``instructions``) and the query as its few-shot examples, and the rules
writer first looks for a learned lesson of the same issue category and action. When the memory
node does not answer, the planner goes on with the fixed examples and the rules.
"""
from __future__ import annotations

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node

from raider_ros.agent.factory import DetectorSettings, make_backend
from raider_ros.agent.llm import LLMError
from raider_ros.memory.advisor import MemoryAdvisor
from raider_ros.msg import RecoveryStep
from raider_ros.recovery.plan import PlanError, Var
from raider_ros.recovery.planner import RecoveryPlanner
from raider_ros.recovery.rules_writer import RecoveryHints
from raider_ros.retrieval.scene_text import recovery_context
from raider_ros.ros.memory_client import GroundTruthScene, RemoteMemory
from raider_ros.ros.params import Param, declare
from raider_ros.ros.retrieve_client import RosRetrieve
from raider_ros.ros.spin import StartupError, run_node
from raider_ros.ros.state_summary import StateSummaryPublisher
from raider_ros.srv import PlanRecovery
from raider_ros.state_qa.summarizers import summarize_recovery

PARAMS = (
    Param("backend", "rules", "rules (plans per issue category, no LLM) | openai | scripted"),
    Param("model", "", "openai: model name ('' = $RAIDER_LLM_MODEL, else gpt-4o-2024-05-13)"),
    Param("base_url", "", "openai: endpoint base URL ('' = $RAIDER_LLM_BASE_URL, else the SDK default)"),
    Param("api_key_env", "OPENAI_API_KEY", "openai: name of the environment variable holding the API key"),
    Param("fixture", "", "scripted: file of recorded plan responses"),
    Param("timeout_s", 30.0, "Time limit for one plan [s]"),
    Param("retries", 1, "LLM plans the interpreter rejects are sent back this many times with the reason"),
    Param("retrieval", "off", "Scene graph in the planner's context: off | full | rag | rag-strict"),
    Param("retrieve_service", "scene_graph/retrieve", "Service that retrieves the task-relevant subgraph"),
    Param("memory", True, "Few-shot examples (LLM) and lessons (rules) from the memory node's memory/retrieve; "
                          "false: the fixed examples"),
    Param("memory_timeout_s", 10.0, "Longest wait for memory/retrieve and for the scene lessons are bound to [s]"),
)


class RecoveryPlannerNode(Node):
    def __init__(self, **kwargs):
        super().__init__("recovery_planner", **kwargs)
        self.p = declare(self, PARAMS)
        try:
            backend = "rules" if self.p["backend"] == "rules" else make_backend(DetectorSettings(
                backend=self.p["backend"], model=self.p["model"], base_url=self.p["base_url"],
                api_key_env=self.p["api_key_env"], fixture=self.p["fixture"]))
            self.advisor = None
            if self.p["memory"]:
                group = ReentrantCallbackGroup()
                self.advisor = MemoryAdvisor(
                    RemoteMemory(self, timeout_s=self.p["memory_timeout_s"], callback_group=group),
                    scene=GroundTruthScene(self, timeout_s=self.p["memory_timeout_s"], callback_group=group))
            self.planner = RecoveryPlanner(backend, timeout_s=self.p["timeout_s"], retries=self.p["retries"],
                                           memory=self.advisor)
        except (ValueError, OSError) as exc:
            raise StartupError(self.get_name(), str(exc)) from None
        group = ReentrantCallbackGroup()
        self.retrieve = RosRetrieve(self, self.p["retrieve_service"], callback_group=group) \
            if self.p["retrieval"] != "off" else None
        self.create_service(PlanRecovery, "plan_recovery", self._on_plan, callback_group=group)
        self.summaries = StateSummaryPublisher(self, min_interval_s=0.0)   # every plan, for state_qa
        self.get_logger().info(f"recovery planner ready: backend {self.planner.name}")

    def _on_plan(self, req, res):
        res.backend = self.planner.name
        try:
            hints = RecoveryHints(grounding=tuple(req.grounding)) if req.grounding else None
            context = ""
            if self.retrieve is not None:   # what the robot knows of the scene, as retrieval gives it
                context = recovery_context(self.retrieve(f"{req.query} {req.explanation}", mode=self.p["retrieval"]))
            plan = self.planner.plan(req.query, req.issue, req.explanation, req.holding or None, hints=hints,
                                     context=context, instructions=tuple(req.instructions))
        except PlanError as exc:
            res.success, res.message = False, f"the plan was rejected: {exc}"
        except LLMError as exc:
            res.success, res.message = False, f"the planner's LLM failed: {exc.reason}"
        except Exception as exc:  # noqa: BLE001 - a planner bug must not take the node down
            res.success, res.message = False, f"planning failed: {type(exc).__name__}: {exc}"
        else:
            res.success, res.message = True, f"{len(plan.steps)} steps"
            res.plan_text = plan.raw_text
            res.steps = [RecoveryStep(action=s.action, args=[a.name if isinstance(a, Var) else a.value for a in s.args],
                                      arg_is_variable=[isinstance(a, Var) for a in s.args], binds=s.binds or "")
                         for s in plan.steps]
        rec = self.planner.last
        if rec is not None and rec.texts and not res.plan_text:
            res.plan_text = rec.texts[-1]
        res.source = rec.source if rec is not None else ""
        if self.advisor is not None and self.advisor.last_error:
            # once per plan (plans are rare): never throttled, or a second failure within the
            # throttle window (another node's, say) would go unreported
            self.get_logger().warning(f"planned without the memory: {self.advisor.last_error}")
            self.advisor.last_error = None
        self.summaries.publish(lambda: summarize_recovery(
            (plan if res.success else None), query=req.query, issue=req.issue, explanation=req.explanation,
            holding=req.holding or None, error=None if res.success else res.message, backend=res.backend))
        self.get_logger().info(f"plan for {req.query!r} ({req.issue}): {res.message}")
        return res


def main(args=None) -> int:
    return run_node(RecoveryPlannerNode, args=args)
