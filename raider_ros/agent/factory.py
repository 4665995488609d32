"""Build an issue detector (RAIDER or a baseline) from plain settings (ROS-free).

The issue_detector node and the evaluation harness's local mode both call
:func:`build_detector`, so the two run the same agent for the same settings.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Mapping

from raider_ros.agent.backends import make_llm
from raider_ros.agent.baselines import LLMVisualObs, Precond
from raider_ros.agent.flow import ProgramFlowManager
from raider_ros.agent.prompt import IssuePrompt, PromptConfig
from raider_ros.common.tool_contract import ToolExecutor

METHODS = ("raider", "llm_visual_obs", "precond")


@dataclass
class DetectorSettings:
    backend: str = "rules"                 # rules | openai | scripted
    method: str = "raider"                 # raider | llm_visual_obs | precond
    toolset: str = "household"             # household | assistive | preferences (data/toolsets)
    procedure: str = "QGEN_GRND"           # QGEN_GRND | QGEN | GRND | BASIC (prompt ablations)
    time_limit_s: float = 20.0
    max_turns: int = 12
    reach_m: float = 1.1
    handover_distance_m: float = 0.5
    include_objects_in_sight: bool = True  # the first user message lists the detected objects (as in the paper)
    # openai backend
    model: str = ""                       # "" = $RAIDER_LLM_MODEL, else gpt-4o-2024-05-13
    base_url: str = ""
    api_key_env: str = "OPENAI_API_KEY"
    seed: int = 0
    request_timeout_s: float = 30.0
    max_retries: int = 3
    tool_protocol: str = "text"            # text | native
    # scripted backend
    fixture: str = ""
    extra: dict = field(default_factory=dict)

    def label(self) -> str:
        """How reports name this detector: the backend ("rules (no LLM)", "openai:<model>",
        "scripted"), prefixed by the method when it is a baseline ("precond (rules (no LLM))")."""
        model = self.model or os.environ.get("RAIDER_LLM_MODEL") or "gpt-4o-2024-05-13"
        backend = {"rules": "rules (no LLM)", "openai": f"openai:{model}",
                   "scripted": "scripted"}.get(self.backend, self.backend)
        return backend if self.method == "raider" else f"{self.method} ({backend})"

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> "DetectorSettings":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown detector setting {unknown[0]!r}; known: {', '.join(sorted(known))}")
        return cls(**values)


def make_backend(s: DetectorSettings, toolset=None):
    if s.backend == "openai":
        return make_llm("openai", model=s.model, base_url=s.base_url or None, api_key_env=s.api_key_env,
                        seed=s.seed, request_timeout_s=s.request_timeout_s, max_retries=s.max_retries,
                        tool_mode=s.tool_protocol, tools=toolset if s.tool_protocol == "native" else None)
    if s.backend == "scripted":
        if not s.fixture:
            raise ValueError("the scripted backend needs a fixture file (setting 'fixture')")
        return make_llm("scripted", fixture=s.fixture)
    if s.backend == "rules":   # the robot's limits come from the settings, never from prompt text
        return make_llm("rules", **{"reach_m": s.reach_m, "handover_distance_m": s.handover_distance_m, **s.extra})
    return make_llm(s.backend, **s.extra)


def build_detector(s: DetectorSettings, tools: ToolExecutor,
                   scene_graph: Callable[[], Mapping] | None = None):
    """An object with ``run(query, context, on_event, cancel) -> AgentResult``."""
    if s.method not in METHODS:
        raise ValueError(f"unknown method {s.method!r}; known: {', '.join(METHODS)}")
    if s.method == "precond":
        return Precond(tools, time_limit_s=s.time_limit_s)
    config = PromptConfig(procedure=s.procedure, tool_protocol=s.tool_protocol,
                          include_objects_in_sight=bool(s.include_objects_in_sight)).with_facts(
        reach_m=s.reach_m, handover_distance_m=s.handover_distance_m)
    if s.method == "llm_visual_obs":
        if s.backend == "rules":
            raise ValueError("method llm_visual_obs needs a language model (backend openai or scripted): "
                             "the rules backend answers only through tools, and this baseline has none")
        return LLMVisualObs(make_backend(s), scene_graph, config, time_limit_s=s.time_limit_s)
    prompt = IssuePrompt(s.toolset, config)
    return ProgramFlowManager(make_backend(s, prompt.toolset), tools, prompt, time_limit_s=s.time_limit_s,
                              max_turns=s.max_turns)
