"""The in-process evaluation pipeline: simulated world -> perception -> scene graph -> tools
-> issue detector, all in one Python process (no ROS).

It runs the same pieces the nodes wrap (``SimWorld``, ``PerceptionPipeline("sim")``,
``SceneGraph``, ``ToolBox``, ``build_detector``), so a local run and a ROS run of the same
settings ask the same agent the same questions about the same perceived scene.
"""
from __future__ import annotations

from typing import Any

from raider_ros.agent.factory import DetectorSettings, build_detector, make_backend
from raider_ros.agent.llm import LLMError
from raider_ros.recovery.plan import PlanError, plan_steps
from raider_ros.recovery.planner import RecoveryPlanner
from raider_ros.recovery.rules_writer import RecoveryHints
from raider_ros.sim.scene import Scene
from raider_ros.sim.world import SimWorld
from raider_ros.perception.pipeline import PerceptionPipeline
from raider_ros.perception.provider import TruthProvider
from raider_ros.perception.scene_graph import SceneGraph
from raider_ros.perception.toolbox import ToolBox

from .runner import DetectOutcome, RecoveryOutcome


class LocalPipeline:
    """``prepare(scene, setup)`` then ``detect(query, context=None, toolset=None)``."""

    def __init__(self, settings: DetectorSettings | None = None):
        self.settings = settings or DetectorSettings()
        self.world = SimWorld()
        self.perception = PerceptionPipeline("sim")
        self.provider = TruthProvider()
        self.graph = SceneGraph()
        self.tools = ToolBox(self.graph, self.provider)
        self._detectors: dict[str, Any] = {}
        self._loaded: Scene | None = None
        self._planner: RecoveryPlanner | None = None
        self._detector(self.settings.toolset)   # bad settings fail here, before the first case
        self.name = self.settings.label()

    def _detector(self, toolset: str):
        if toolset not in self._detectors:
            settings = DetectorSettings.from_mapping({**vars(self.settings), "toolset": toolset})
            self._detectors[toolset] = build_detector(settings, self.tools,
                                                         scene_graph=lambda: self.graph.snapshot().to_dict())
        return self._detectors[toolset]

    def prepare(self, scene: Scene, setup: Any) -> None:
        if self._loaded is not scene:
            self.world.load(scene)
            self._loaded = scene
        self.world.apply_setup(setup, reset=True, source="case setup")
        frame = self.world.frame()
        self.provider.update(self.world.truth())
        robot = self.world.scene.robot
        perceived = self.perception.process(frame.rgb, frame.depth, frame.instance, frame.labels,
                                            frame.camera, robot_xy=(robot.x, robot.y))
        self.graph.clear()
        self.graph.update(perceived, self.provider)

    def detect(self, query: str, context: str | None = None, toolset: str | None = None) -> DetectOutcome:
        res = self._detector(str(toolset or self.settings.toolset)).run(query, context)
        return DetectOutcome(
            issue=res.issue, explanation=res.explanation, grounding=list(res.grounding),
            status=res.status, error=res.error, llm_turns=res.llm_turns,
            tool_calls=len(res.tool_calls), prompt_tokens=res.prompt_tokens,
            completion_tokens=res.completion_tokens, elapsed_s=res.elapsed_s,
            warnings=[f"{w.number} {w.title}" for w in res.warnings], tools_used=[c.name for c in res.tool_calls])

    def plan_recovery(self, query: str, issue: str, explanation: str, holding: str | None,
                      grounding: list[str], context: str = "") -> RecoveryOutcome:
        """The recovery planner of the same backend (rules writer, or the LLM) on RAIDER's output."""
        if self._planner is None:
            s = self.settings
            self._planner = RecoveryPlanner("rules" if s.backend == "rules" else make_backend(s))
        try:
            plan = self._planner.plan(query, issue, explanation, holding,
                                      hints=RecoveryHints(grounding=tuple(grounding)), context=context)
        except (PlanError, LLMError, ValueError) as exc:
            return RecoveryOutcome(status="error", error=str(exc),
                                   plan_text="\n".join(self._planner.last.texts) if self._planner.last else "")
        return RecoveryOutcome(steps=plan_steps(plan), plan_text=plan.to_code())



def make_pipeline(backend: str, **settings: Any) -> LocalPipeline:
    """The local pipeline for ``backend`` (rules | openai | scripted) and detector settings."""
    return LocalPipeline(DetectorSettings.from_mapping({**settings, "backend": backend}))
