"""What the recovery planner gets from the episodic memory.

:class:`MemoryAdvisor` is passed as ``memory=`` to
:class:`~raider_ros.recovery.planner.RecoveryPlanner` (the recovery package does not import
this one; it calls two methods):

* ``prompt_examples(query, issue, explanation, holding, context, instructions)``: the recovery
  prompt's "## Examples" section built from the memory (dynamic prompt, paper §III-D): the
  top-k recovery examples (seeds and lessons) by S(H, H_t), where the current interaction's
  instructions are what the person said followed by the recovery query line; the most similar
  example comes last, next to the query.
* ``lesson_plan(LessonQuery)``: for the rules writer, the plan of the best recovery *lesson*
  with the same issue category and action whose similarity reaches
  ``lessons.recovery_threshold`` and whose plan, rebound to the current ids, fits the scene.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from raider_ros.memory.adapt import AdaptError, SceneIndex, adapt_plan, applicable
from raider_ros.memory.config import LearningConfig
from raider_ros.memory.episode import Episode, query_line
from raider_ros.memory.store import EpisodicMemory, EpisodicMemoryError, Retrieved

SceneSource = Callable[[], SceneIndex | None]


def format_example(ep: Episode) -> str:
    line = ep.instructions[0] if ep.kind == "seed" else query_line(ep.query, ep.issue, ep.explanation, ep.holding)
    said = ""
    if ep.kind == "lesson":
        words = [t for t in ep.instructions if t != line]
        said = f"what the person said: {' '.join(words)}\n" if words else ""
    return f"{line}\n{said}corrective actions:\n{ep.plan.strip()}"


def examples_section(hits: Sequence[Retrieved]) -> str:
    """"## Examples" with the hits, the most similar last."""
    blocks = [format_example(h.episode) for h in reversed(list(hits))]
    return "## Examples\n" + "\n\n".join(blocks)


class MemoryAdvisor:
    """Lessons and prompt examples from an :class:`EpisodicMemory` for the recovery planner.

    ``scene``: the current world (a :class:`SceneIndex`, or a callable returning one) used to
    rebind a lesson's ids; without it only lessons whose ids are all the action's arguments
    can be used. A memory failure during a lookup is recorded in ``last_error`` and the planner
    goes on without the memory.
    """

    def __init__(self, memory: EpisodicMemory, *, config: LearningConfig | None = None,
                 scene: SceneIndex | SceneSource | None = None):
        self.memory = memory
        self.cfg = config or LearningConfig.load()
        self._scene = scene
        self.last_error: str | None = None
        self.last_skipped: list[str] = []

    def scene(self) -> SceneIndex:
        s = self._scene() if callable(self._scene) else self._scene
        return s if s is not None else SceneIndex({})

    def set_scene(self, scene: SceneIndex | SceneSource | None) -> None:
        self._scene = scene

    # ------------------------------------------------------------------ the LLM's examples
    def prompt_examples(self, query: str, issue: str, explanation: str, holding: str | None,
                        context: str = "", instructions: Sequence[str] = ()) -> str | None:
        said = [*instructions, *([context] if context and context.strip() else [])]
        try:
            hits = self.memory.retrieve([*said, query_line(query, issue, explanation, holding)], k=self.cfg.k,
                                        scope="recovery", recent=self.cfg.recent, gamma=self.cfg.gamma)
        except EpisodicMemoryError as exc:
            self.last_error = str(exc)
            return None
        return examples_section(hits) if hits else None

    # ------------------------------------------------------------------ the rules writer's lessons
    def lesson_plan(self, q: Any) -> tuple[str, str] | None:
        self.last_skipped = []
        if not q.action or not q.category:
            return None
        said = list(q.instructions) or [q.query]
        try:
            hits = self.memory.retrieve(said, k=8, scope="recovery", kind="lesson", category=q.category,
                                        action=q.action, recent=self.cfg.recent, gamma=self.cfg.gamma)
        except EpisodicMemoryError as exc:
            self.last_error = str(exc)
            return None
        scene = self.scene()
        roles_to = {f"arg{i + 1}": a for i, a in enumerate(q.args)}
        for h in hits:
            ep = h.episode
            if h.score < self.cfg.recovery_threshold:
                self.last_skipped.append(f"lesson {ep.id}: similarity {h.score:.2f} below "
                                         f"{self.cfg.recovery_threshold:.2f}")
                continue
            try:
                text, _ = adapt_plan(ep.plan, scene, roles_from=ep.roles, roles_to=roles_to, types=ep.types,
                                     carriers=ep.carriers)
            except AdaptError as exc:
                self.last_skipped.append(f"lesson {ep.id}: {exc}")
                continue
            if scene.things:
                reason = applicable(text, scene)
                if reason:
                    self.last_skipped.append(f"lesson {ep.id}: does not fit here: {reason}")
                    continue
            return text, f"lesson {ep.id}"
        return None
