"""What the memory node does, without ROS: open the episodic memory (or run on without
learning when its file cannot be used) and answer list, get, forget, retrieve, plan_task and
learn. The node (:mod:`raider_ros.nodes.memory`) only converts messages.

Running without learning. When the database file is corrupt, locked by another process, of
another schema or cannot be created, :class:`MemoryService` does not fail: it keeps the
reason in ``error``, sets ``learning`` to False and answers from an in-memory copy holding
only the seed examples (retrieve and plan_task work as before any lesson; learn answers with
the reason; nothing is written). When even the seed examples cannot be embedded (the model
cannot be loaded), ``memory`` is None and every lookup answers with nothing and the reason.
A seed file that does not follow its format is a configuration error (:class:`SeedError`).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from raider_ros.memory.adapt import SceneIndex
from raider_ros.memory.config import LearningConfig
from raider_ros.memory.dialogue import Dialogue, load_dialogue
from raider_ros.memory.episode import KINDS, SCOPES, Episode, EpisodeError
from raider_ros.memory.feedback import LABELS, TRIGGERS, Feedback, classify_feedback
from raider_ros.memory.interaction import Interaction
from raider_ros.memory.learning import RulesImprover, learn_from_interaction
from raider_ros.memory.seeds import load_seeds
from raider_ros.memory.store import EpisodicMemory, EpisodicMemoryError, Retrieved
from raider_ros.memory.tasks import TaskPlan, TaskPlanner, TaskRequest

MAX_K = 100
MAX_INSTRUCTIONS = 32


def default_database() -> Path:
    """``$XDG_DATA_HOME/raider_ros/memory.sqlite``, by default ``~/.local/share/raider_ros/memory.sqlite``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "raider_ros" / "memory.sqlite"


def database_path(value: str) -> str:
    """The node's ``database`` parameter: '' means :func:`default_database`; ':memory:' keeps nothing."""
    value = (value or "").strip()
    if not value:
        return str(default_database())
    return value if value == ":memory:" else str(Path(value).expanduser())


def scene_from_json(text: str) -> SceneIndex:
    """A :class:`SceneIndex` from a scene document as JSON (sim/get_ground_truth's
    ``truth_json``). Raises ValueError naming what is wrong."""
    try:
        doc = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"scene: not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ValueError("scene: expected a JSON object (a scene document)")
    doc = {k: v for k, v in doc.items() if k != "version"}
    try:
        return SceneIndex.from_document(doc)
    except Exception as exc:  # noqa: BLE001 - SceneError and friends: a bad document is a reason
        raise ValueError(f"scene: {exc}") from None


@dataclass
class LearnAnswer:
    stored: bool
    message: str                      # the sentence for the person
    ids: list[int] = field(default_factory=list)
    reason: str = ""
    problem: str = ""
    improvement: str = ""
    backend: str = ""
    kind: str = ""                    # how the feedback was read


class MemoryService:
    """The memory node's logic.

    ``database``: the SQLite file ('' = :func:`default_database`). ``seeds``: ``default``,
    ``none`` or a seed file. ``learning`` False: lessons are neither learned nor forgotten
    (the file is still read). ``improver``: an object with ``improve`` (default the rules
    improver); ``classifier``: an object with ``classify(text, context) -> Feedback`` used when
    the caller did not say how it read the feedback (default the rules). ``encoder``: see
    :class:`~raider_ros.memory.store.EpisodicMemory`.
    """

    def __init__(self, database: str = "", *, seeds: str = "default", busy_timeout_s: float = 2.0,
                 learning: bool = True, encoder: Any = None, improver: Any = None, classifier: Any = None,
                 config: LearningConfig | None = None, dialogue: Dialogue | None = None):
        self.path = database_path(database)
        self.cfg = config or LearningConfig.load()
        self.dialogue = dialogue or load_dialogue()
        self.improver = improver or RulesImprover(self.cfg, similar=self._similar)
        self.classifier = classifier
        seed_spec = (seeds or "default").strip()
        seed_eps = [] if seed_spec == "none" else load_seeds(None if seed_spec == "default" else seed_spec)
        self.error = ""
        self.memory: EpisodicMemory | None = None
        self.learning = False
        try:
            self.memory = EpisodicMemory(self.path, encoder=encoder, seeds=seed_eps, busy_timeout_s=busy_timeout_s,
                                         gamma=self.cfg.gamma)
            self.learning = bool(learning)
            if not learning:
                self.error = "learning is switched off (parameter learning)"
        except (EpisodicMemoryError, EpisodeError) as exc:
            self.error = str(exc)
            try:
                self.memory = EpisodicMemory(":memory:", encoder=encoder, seeds=seed_eps, gamma=self.cfg.gamma)
            except (EpisodicMemoryError, EpisodeError) as exc2:
                self.error += f"; the seed examples cannot be used either: {exc2}"
        self.planner = TaskPlanner(self.memory, self.cfg) if self.memory is not None else None

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()

    def status(self) -> dict:
        eps = self.memory.list() if self.memory is not None else []
        return {"learning": self.learning, "database": self.path, "error": self.error,
                "episodes": len(eps), "lessons": sum(1 for e in eps if e.kind == "lesson"),
                "seeds": sum(1 for e in eps if e.kind == "seed")}

    def _require(self) -> EpisodicMemory:
        if self.memory is None:
            raise EpisodicMemoryError(self.path, "io", f"no memory to search: {self.error}")
        return self.memory

    def _similar(self, phrase: str, candidates: Sequence[str]):
        e = self._require().embed([phrase, *candidates])
        return e[1:] @ e[0]

    # ------------------------------------------------------------------ list, get, forget
    def list(self, kind: str = "", scope: str = "") -> list[Episode]:
        _choice(kind, KINDS, "kind")
        _choice(scope, SCOPES, "scope")
        if self.memory is None:
            return []
        return self.memory.list(kind=kind or None, scope=scope or None)

    def get(self, episode_id: int) -> Episode:
        """Raises :class:`~raider_ros.memory.store.UnknownEpisode`."""
        return self._require().get(episode_id)

    def forget(self, episode_id: int) -> Episode:
        """Raises UnknownEpisode, EpisodeError (a seed) or EpisodicMemoryError (the file, or
        learning off: nothing is changed then)."""
        if not self.learning:
            raise EpisodicMemoryError(self.path, "io", f"lessons cannot be forgotten now: {self.error}")
        return self._require().forget(episode_id)

    # ------------------------------------------------------------------ retrieve, plan
    def retrieve(self, instructions: Sequence[str], *, k: int = 0, scope: str = "", kind: str = "", task: str = "",
                 category: str = "", action: str = "", recent: int = 0, gamma: float = 0.0) -> list[Retrieved]:
        """Raises ValueError for bad arguments, EpisodicMemoryError when there is no memory."""
        texts = [t for t in instructions if isinstance(t, str) and t.strip()]
        if not texts:
            raise ValueError("instructions: give at least one non-empty instruction")
        if len(texts) > MAX_INSTRUCTIONS:
            texts = texts[-MAX_INSTRUCTIONS:]
        if not 0 <= k <= MAX_K:
            raise ValueError(f"k: expected 0 (the configured {self.cfg.k}) to {MAX_K}, got {k}")
        if recent < 0:
            raise ValueError(f"recent: expected 0 (the configured {self.cfg.recent}) or more, got {recent}")
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"gamma: expected 0 (the configured {self.cfg.gamma}) or a number in (0, 1], got {gamma}")
        _choice(scope, SCOPES, "scope")
        _choice(kind, KINDS, "kind")
        return self._require().retrieve(texts, k=k or self.cfg.k, scope=scope or None, kind=kind or None,
                                        task=task or None, category=category or None, action=action or None,
                                        recent=recent or self.cfg.recent, gamma=gamma or self.cfg.gamma)

    def plan_task(self, request: str, task: str, roles: Mapping[str, str], scene: SceneIndex,
                  earlier: Sequence[str] = ()) -> TaskPlan:
        """Raises ValueError for a bad request, TaskPlanError when no example fits,
        EpisodicMemoryError when there is no memory."""
        if not request or not request.strip():
            raise ValueError("request: expected what the person asked")
        if not task or not task.strip():
            raise ValueError("task: expected the kind of request (deliver, fetch, ...)")
        unknown = [f"{r}:{i}" for r, i in roles.items() if scene.things and i not in scene.things]
        if unknown:
            raise ValueError(f"roles: not in the scene: {', '.join(unknown)}")
        self._require()
        return self.planner.plan(TaskRequest(request.strip(), task.strip(), dict(roles),
                                             tuple(t for t in earlier if t.strip())), scene)

    # ------------------------------------------------------------------ learn
    def read_feedback(self, text: str, context: str = "") -> Feedback:
        if self.classifier is not None:
            try:
                return self.classifier.classify(text, context)
            except Exception:  # noqa: BLE001 - an LLM failing: read it with the rules instead
                pass
        return classify_feedback(text, self.cfg)

    def learn(self, it: Interaction, feedback: str, scene: SceneIndex, kind: str = "") -> LearnAnswer:
        """learn_from_interaction with the person's ``feedback``; ``kind`` is how the caller
        read it ('' = read it here). Never raises for what the person said or a failing file:
        the answer's message says what happened."""
        if not feedback or not feedback.strip():
            return LearnAnswer(False, self.dialogue.say("not_feedback"), reason="no feedback given")
        kind = (kind or "").strip().lower()
        if kind and kind not in LABELS:
            return LearnAnswer(False, self.dialogue.say("not_feedback"),
                               reason=f"feedback_kind: expected one of {', '.join(LABELS)} or '', got {kind!r}")
        if not kind:
            kind = self.read_feedback(feedback, it.request).kind
        if kind not in TRIGGERS:
            return LearnAnswer(False, self.dialogue.say("not_feedback"), reason="the feedback was read as 'none'",
                               kind=kind)
        if not self.learning or self.memory is None:
            return LearnAnswer(False, self.dialogue.say("unavailable", why=self.error), reason=self.error, kind=kind)
        out = learn_from_interaction(self.memory, it, feedback, scene, improver=self.improver)
        ids = [int(e.id) for e in out.stored if e.id is not None]
        if ids:
            message = self.dialogue.say("learned", improvement=out.improvement) if out.improvement.strip() \
                else self.dialogue.say("learned_no_text")
        else:
            message = self.dialogue.say("not_learned", reason=out.reason or "nothing to change")
        return LearnAnswer(bool(ids), message, ids, out.reason, out.problem, out.improvement, out.backend, kind)


def _choice(value: str, allowed: Sequence[str], name: str) -> None:
    if value and value not in allowed:
        raise ValueError(f"{name}: expected '' or one of {', '.join(allowed)}, got {value!r}")
