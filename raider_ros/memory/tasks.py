"""The rules (no LLM) task planner: a request's plan from the memory's examples.

The offline counterpart of the paper's dynamic prompt. The examples of the request's kind of
task (``deliver``, ``fetch``, ``switch_off`` ...) are ranked by S(H, H_t). The best *lesson*
is used when

* its S reaches ``lessons.task_threshold`` (the request is worded like what the person said
  when teaching it),
* the request's objects are like the lesson's, role by role: the mean cosine similarity of the
  type names (``medicine`` / ``medicine``, ``milk`` / ``butter``) of each non-person role both
  have reaches ``lessons.role_threshold`` (an LLM reading the examples would judge this
  itself; the rules planner needs it said), and
* its plan, rebound to the request's ids, fits the scene (:mod:`raider_ros.memory.adapt`).

Otherwise the best seed example of that task is used, rebound the same way. So a lesson
changes what the robot does for requests like the one it was taught on, and nothing else.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from raider_ros.common.text import split_words
from raider_ros.memory.adapt import AdaptError, SceneIndex, adapt_plan, applicable, type_of_id
from raider_ros.memory.config import LearningConfig
from raider_ros.memory.episode import Episode
from raider_ros.memory.store import EpisodicMemory
from raider_ros.recovery.plan import Plan, parse_plan


class TaskPlanError(ValueError):
    """No example of the request's task fits; the message lists what was tried."""


@dataclass(frozen=True)
class TaskRequest:
    say: str                                   # what the person asked
    task: str                                  # kind of request
    roles: Mapping[str, str]                   # role -> id the request refers to
    earlier: Sequence[str] = ()                # what the person said before, oldest first

    @property
    def instructions(self) -> list[str]:
        return [*self.earlier, self.say]


@dataclass
class TaskPlan:
    plan: Plan
    episode: Episode
    score: float                               # S(H, H_t)
    source: str                                # "lesson 7" | "seed task/deliver-medicine"
    skipped: list[str] = field(default_factory=list)   # lessons considered and why not used
    role_score: float | None = None            # how alike the objects are (lessons)

    @property
    def from_lesson(self) -> bool:
        return self.episode.kind == "lesson"


class TaskPlanner:
    name = "rules (no LLM)"

    def __init__(self, memory: EpisodicMemory, config: LearningConfig | None = None):
        self.memory = memory
        self.cfg = config or LearningConfig.load()
        self._words: dict[str, np.ndarray] = {}

    def plan(self, request: TaskRequest, scene: SceneIndex) -> TaskPlan:
        hits = self.memory.retrieve(request.instructions, k=max(1, len(self.memory)), scope="task",
                                    task=request.task, recent=self.cfg.recent, gamma=self.cfg.gamma)
        skipped: list[str] = []
        lessons = [h for h in hits if h.episode.kind == "lesson"]
        for h in lessons:
            if h.score < self.cfg.task_threshold:
                skipped.append(f"lesson {h.episode.id}: similarity {h.score:.2f} below {self.cfg.task_threshold:.2f}")
                continue
            alike = self.role_similarity(h.episode, request, scene)
            if alike is None or alike < self.cfg.role_threshold:
                skipped.append(f"lesson {h.episode.id}: its objects are not like the request's "
                               f"({'no role in common' if alike is None else f'{alike:.2f}'} below "
                               f"{self.cfg.role_threshold:.2f})")
                continue
            got = self._fit(h.episode, request, scene)
            if isinstance(got, str):
                skipped.append(f"lesson {h.episode.id}: {got}")
                continue
            return TaskPlan(got, h.episode, h.score, f"lesson {h.episode.id}", skipped, alike)
        tried = []
        for h in hits:
            if h.episode.kind != "seed":
                continue
            got = self._fit(h.episode, request, scene)
            if isinstance(got, str):
                tried.append(f"{h.episode.key}: {got}")
                continue
            return TaskPlan(got, h.episode, h.score, f"seed {h.episode.key}", skipped)
        raise TaskPlanError(f"no example of the task {request.task!r} fits {request.say!r}: "
                            + ("; ".join(skipped + tried) or "the memory has no example of that task"))

    def role_similarity(self, ep: Episode, request: TaskRequest, scene: SceneIndex) -> float | None:
        """Mean cosine similarity of the type names of the objects both give the same role
        (people left out); None when they share no such role."""
        pairs = []
        for role, old in ep.roles.items():
            new = request.roles.get(role)
            if new is None:
                continue
            a = ep.types.get(old) or type_of_id(old)
            b = scene.type_of(new) or type_of_id(new)
            if a == "Person" or b == "Person":
                continue
            pairs.append((_words(a), _words(b)))
        if not pairs:
            return None
        missing = sorted({w for p in pairs for w in p if w not in self._words})
        if missing:
            for w, v in zip(missing, self.memory.embed(missing)):
                self._words[w] = v
        return float(np.mean([float(self._words[a] @ self._words[b]) if a != b else 1.0 for a, b in pairs]))

    def _fit(self, ep: Episode, request: TaskRequest, scene: SceneIndex) -> Plan | str:
        try:
            text, _ = adapt_plan(ep.plan, scene, roles_from=ep.roles, roles_to=request.roles,
                                 types=ep.types, carriers=ep.carriers)
        except AdaptError as exc:
            return str(exc)
        reason = applicable(text, scene)
        if reason:
            return f"does not fit here: {reason}"
        return parse_plan(text)


def _words(type_name: str) -> str:
    return " ".join(w for w in split_words(type_name) if not w.isdigit()) or type_name
