"""The in-process evaluation pipeline: simulated world -> perception -> scene graph -> tools
-> issue detector, all in one Python process (no ROS).

House scale (``scale`` N > 0): each case's world is embedded into a house of N objects
(:func:`raider_ros.sim.house.embed_case`); the camera still renders the case's room only and
the rest of the house enters the scene graph as remembered objects. ``retrieval`` (off | full |
rag | rag-strict) puts the scene graph into the first message (:mod:`raider_ros.retrieval`); in
the rag modes every case also runs in mode full on the same world, for verdict agreement.

It runs the same pieces the nodes wrap (``SimWorld``, ``PerceptionPipeline("sim")``,
``SceneGraph``, ``ToolBox``, ``build_detector``), so a local run and a ROS run of the same
settings ask the same agent the same questions about the same perceived scene. The base
laser's scan of the same world goes to the scene graph as sim_world's ``scan`` topic does.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from raider_ros.agent.factory import DetectorSettings, make_backend
from raider_ros.agent.llm import LLMError
from raider_ros.recovery.plan import PlanError, plan_steps
from raider_ros.recovery.planner import RecoveryPlanner
from raider_ros.recovery.rules_writer import RecoveryHints
from raider_ros.sim.scene import Scene
from raider_ros.sim.scan import ScanData
from raider_ros.sim.world import SimWorld
from raider_ros.perception.base_scan import BaseScan
from raider_ros.perception.pipeline import PerceptionPipeline
from raider_ros.perception.provider import TruthProvider
from raider_ros.perception.scene_graph import SceneGraph
from raider_ros.perception.toolbox import ToolBox
from raider_ros.common.token_count import count_message_tokens
from raider_ros.retrieval.agent import DETECTOR_MODES, build_retrieval_detector, local_retrieve
from raider_ros.retrieval.retriever import Retriever
from raider_ros.retrieval.scene_text import recovery_context
from raider_ros.sim.house import embed_case, memory_entries

from .runner import DetectOutcome, RecoveryOutcome


def base_scan(scan: ScanData) -> BaseScan:
    """The simulator's laser scan as perception gets it (the fields of the sensor_msgs/LaserScan
    that sim_world publishes, with the base pose it was taken at)."""
    m = scan.model
    f32 = lambda v: float(np.float32(v))      # noqa: E731 - LaserScan's angle and range fields are float32
    return BaseScan(ranges=np.asarray(scan.ranges, np.float32), angle_min=f32(m.angle_min),
                    angle_increment=f32(m.angle_increment), range_min=f32(m.range_min_m),
                    range_max=f32(m.range_max_m), pose=scan.pose, height_m=m.height_m)


class LocalPipeline:
    """``prepare(scene, setup)`` then ``detect(query, context=None, toolset=None)``."""

    def __init__(self, settings: DetectorSettings | None = None, *, scale: int = 0, retrieval: str = "off",
                 house_seed: int = 0, retrieval_settings: Any = None):
        if retrieval not in DETECTOR_MODES:
            raise ValueError(f"unknown retrieval mode {retrieval!r}; known: {', '.join(DETECTOR_MODES)}")
        if isinstance(scale, bool) or not isinstance(scale, int) or scale < 0:
            raise ValueError(f"scale must be a whole number of objects >= 0, got {scale!r}")
        self.settings = settings or DetectorSettings()
        self.scale, self.retrieval, self.house_seed = scale, retrieval, house_seed
        self.world = SimWorld()
        self.perception = PerceptionPipeline("sim")
        self.provider = TruthProvider()
        # remembered objects of a house are kept however long ago they were seen
        self.graph = SceneGraph()
        self.tools = ToolBox(self.graph, self.provider)
        self.retriever = Retriever(self.graph, retrieval_settings) if retrieval != "off" else None
        self.house = None
        self._detectors: dict[tuple[str, str], Any] = {}
        self._loaded: Scene | None = None
        self._planner: RecoveryPlanner | None = None
        self._detector(self.settings.toolset)   # bad settings fail here, before the first case
        self.name = self.settings.label() + (f", {retrieval}" if retrieval != "off" else "") \
            + (f", {scale} objects" if scale else "")

    def _detector(self, toolset: str, mode: str | None = None):
        mode = mode or self.retrieval
        if (toolset, mode) not in self._detectors:
            settings = DetectorSettings.from_mapping({**vars(self.settings), "toolset": toolset})
            retrieve = local_retrieve(self.retriever) if self.retriever is not None else None
            self._detectors[(toolset, mode)] = build_retrieval_detector(
                settings, self.tools, retrieve, mode, scene_graph=lambda: self.graph.snapshot().to_dict())
        return self._detectors[(toolset, mode)]

    def prepare(self, scene: Scene, setup: Any) -> None:
        if self._loaded is not scene:
            self.world.load(scene)
            self._loaded = scene
        self.world.apply_setup(setup, reset=True, source="case setup")
        frame, scan = self.world.sensors()
        self.provider.update(self.world.truth())
        robot = self.world.scene.robot
        perceived = self.perception.process(frame.rgb, frame.depth, frame.instance, frame.labels,
                                            frame.camera, robot_xy=(robot.x, robot.y))
        self.graph.clear()
        if self.scale:
            self.house = embed_case(self.world.scene, self.scale, seed=self.house_seed)
            self.graph.remember(memory_entries(self.house), stamp=self.graph._clock())
        self.graph.update(perceived, self.provider, scan=base_scan(scan))
        if self.retriever is not None:   # the index follows the graph with each frame, before any check
            self.retriever.sync()

    def detect(self, query: str, context: str | None = None, toolset: str | None = None) -> DetectOutcome:
        detector = self._detector(str(toolset or self.settings.toolset))
        res = detector.run(query, context)
        out = DetectOutcome(
            issue=res.issue, explanation=res.explanation, grounding=list(res.grounding),
            status=res.status, error=res.error, llm_turns=res.llm_turns,
            tool_calls=len(res.tool_calls), prompt_tokens=res.prompt_tokens,
            completion_tokens=res.completion_tokens, elapsed_s=res.elapsed_s,
            warnings=[f"{w.number} {w.title}" for w in res.warnings], tools_used=[c.name for c in res.tool_calls])
        rec = getattr(detector, "last", None)
        if self.retrieval != "off" and rec is not None:
            info = rec.to_dict()
            info["conversation_tokens"] = count_message_tokens(res.transcript)
            info["graph_ids"] = self.graph.snapshot().ids()   # what retrieval could have returned
            if self.retrieval != "full":   # the same case with the whole graph, for agreement and the ratio
                ref = self._detector(str(toolset or self.settings.toolset), "full")
                full = ref.run(query, context)
                info["full_verdict"] = full.issue if full.status == "ok" else f"error: {full.error}"
                info["agrees_with_full"] = (res.issue if res.status == "ok" else None) == \
                    (full.issue if full.status == "ok" else None)
                info["full_scene_tokens"] = ref.last.scene_tokens if ref.last else None
                info["full_first_message_tokens"] = ref.last.first_message_tokens if ref.last else None
            out.retrieval = info
        return out

    def plan_recovery(self, query: str, issue: str, explanation: str, holding: str | None,
                      grounding: list[str], context: str = "") -> RecoveryOutcome:
        """The recovery planner of the same backend (rules writer, or the LLM) on RAIDER's output."""
        if self._planner is None:
            s = self.settings
            self._planner = RecoveryPlanner("rules" if s.backend == "rules" else make_backend(s))
        if self.retriever is not None:   # the planner's context: the scene as retrieval gives it
            sub = self.retriever.retrieve(f"{query} {explanation}", context, mode=self.retrieval)
            context = recovery_context(sub, context)
        try:
            plan = self._planner.plan(query, issue, explanation, holding,
                                      hints=RecoveryHints(grounding=tuple(grounding)), context=context)
        except (PlanError, LLMError, ValueError) as exc:
            return RecoveryOutcome(status="error", error=str(exc),
                                   plan_text="\n".join(self._planner.last.texts) if self._planner.last else "")
        return RecoveryOutcome(steps=plan_steps(plan), plan_text=plan.to_code())



def make_pipeline(backend: str, **settings: Any) -> LocalPipeline:
    """The local pipeline for ``backend`` (rules | openai | scripted) and detector settings;
    ``scale``, ``retrieval`` and ``house_seed`` set the house scale and the retrieval mode."""
    scale = settings.pop("scale", 0) or 0
    retrieval = settings.pop("retrieval", "off") or "off"
    seed = settings.pop("house_seed", 0) or 0
    return LocalPipeline(DetectorSettings.from_mapping({**settings, "backend": backend}), scale=int(scale),
                         retrieval=str(retrieval), house_seed=int(seed))
