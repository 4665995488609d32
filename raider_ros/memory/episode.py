"""One interaction example of the episodic memory (the paper's interaction history H).

An :class:`Episode` is either prior knowledge (``kind="seed"``, from
``data/memory/seed_examples.yaml``) or a lesson learned from a person (``kind="lesson"``).
Its ``scope`` says what it is an example of:

* ``task``: how to carry out a request (``task`` names the kind of request, e.g. deliver,
  fetch, switch_off; ``roles`` the ids the request referred to, e.g. item, person);
* ``recovery``: how to remove an issue found before an action (``category`` is the issue
  category, ``action`` the checked action, ``query``/``issue``/``explanation``/``holding``
  the recovery query; ``roles`` ``arg1``, ``arg2`` the action's arguments).

``instructions`` are what the person said in the interaction, in order (the request first,
then corrections); retrieval compares a new request with each of them (paper §III-D). A
recovery episode also keeps its recovery query line (:func:`query_line`; a seed has only
that), so a recovery query finds the examples of the same kind of issue.
``plan`` is the improved behaviour in the recovery plan language (one call per line), always
accepted by :func:`raider_ros.recovery.plan.parse_plan`. ``types`` gives the type of every id
in the plan and ``carriers`` what an object stood on or in when the lesson was learned, so the
plan can be rebound to another situation. The rest records the interaction the lesson came
from: dialogue, issues found, plans run with their results, the person's feedback and the
improver's answers to "what went wrong" (``problem``) and "what to do next time"
(``improvement``).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Mapping

KINDS = ("seed", "lesson")
SCOPES = ("task", "recovery")
MAX_INSTRUCTIONS = 32
MAX_TEXT = 2000


def query_line(query: str, issue: str, explanation: str, holding: str | None) -> str:
    """The recovery prompt's query line (data/prompts/recovery/query.md): the text recovery
    examples are compared with."""
    expl = (explanation or "").strip().rstrip(".") or "none given"
    return f"query: {query.strip()}, issue: {issue.strip()}, explanation: {expl}. robot holding: {holding or 'none'}"


class EpisodeError(ValueError):
    """An episode with a missing or malformed field; the message names the field."""


@dataclass
class Episode:
    scope: str
    instructions: tuple[str, ...]
    plan: str
    kind: str = "lesson"
    task: str | None = None
    category: str | None = None
    action: str | None = None
    query: str = ""
    issue: str = ""
    explanation: str = ""
    holding: str | None = None
    roles: dict[str, str] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    carriers: dict[str, str] = field(default_factory=dict)
    scene: str = ""
    dialogue: list[tuple[str, str]] = field(default_factory=list)
    issues: list[dict] = field(default_factory=list)
    runs: list[dict] = field(default_factory=list)
    feedback: str = ""
    problem: str = ""
    improvement: str = ""
    source: str = ""
    key: str | None = None
    id: int | None = None
    created: float | None = None

    def __post_init__(self) -> None:
        self.instructions = tuple(self.instructions)
        self.validate()

    # ------------------------------------------------------------------ checks
    def validate(self) -> None:
        if self.kind not in KINDS:
            raise EpisodeError(f"kind: expected one of {', '.join(KINDS)}, got {self.kind!r}")
        if self.scope not in SCOPES:
            raise EpisodeError(f"scope: expected one of {', '.join(SCOPES)}, got {self.scope!r}")
        if not self.instructions:
            raise EpisodeError("instructions: an episode needs at least one instruction")
        if len(self.instructions) > MAX_INSTRUCTIONS:
            raise EpisodeError(f"instructions: at most {MAX_INSTRUCTIONS}, got {len(self.instructions)}")
        for i, t in enumerate(self.instructions):
            if not isinstance(t, str) or not t.strip():
                raise EpisodeError(f"instructions[{i}]: expected a non-empty sentence, got {t!r}")
            if len(t) > MAX_TEXT:
                raise EpisodeError(f"instructions[{i}]: longer than {MAX_TEXT} characters")
        if not isinstance(self.plan, str) or not self.plan.strip():
            raise EpisodeError("plan: expected the plan text")
        if self.scope == "task" and not self.task:
            raise EpisodeError("task: a task episode names its kind of request (e.g. deliver)")
        if self.scope == "recovery" and not (self.category and self.action):
            raise EpisodeError("category/action: a recovery episode names its issue category and action")
        for name in ("roles", "types", "carriers"):
            m = getattr(self, name)
            if not isinstance(m, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in m.items()):
                raise EpisodeError(f"{name}: expected a mapping of names to ids/types")

    @property
    def request(self) -> str:
        """The instruction the interaction started with."""
        return self.instructions[0]

    def with_id(self, episode_id: int, created: float) -> "Episode":
        return replace(self, id=episode_id, created=created)

    # ------------------------------------------------------------------ serialisation
    def to_body(self) -> str:
        d = asdict(self)
        for k in ("id", "created"):
            d.pop(k)
        d["instructions"] = list(self.instructions)
        d["dialogue"] = [list(x) for x in self.dialogue]
        return json.dumps(d, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_body(cls, body: str, *, episode_id: int | None = None, created: float | None = None) -> "Episode":
        try:
            d = json.loads(body)
        except (TypeError, ValueError) as exc:
            raise EpisodeError(f"stored episode {episode_id}: not valid JSON: {exc}") from None
        if not isinstance(d, dict):
            raise EpisodeError(f"stored episode {episode_id}: expected a JSON object")
        return cls.from_dict(d, episode_id=episode_id, created=created)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], *, episode_id: int | None = None,
                  created: float | None = None, where: str = "episode") -> "Episode":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise EpisodeError(f"{where}: unknown field {unknown[0]!r}")
        args = dict(d)
        args["instructions"] = tuple(args.get("instructions") or ())
        args["dialogue"] = [tuple(x) for x in args.get("dialogue") or []]
        for k in ("roles", "types", "carriers"):
            args[k] = dict(args.get(k) or {})
        if episode_id is not None:
            args["id"] = episode_id
        if created is not None:
            args["created"] = created
        try:
            return cls(**args)
        except EpisodeError as exc:
            raise EpisodeError(f"{where}: {exc}") from None
        except TypeError as exc:
            raise EpisodeError(f"{where}: {exc}") from None

    def summary(self) -> dict:
        """A short description for listings (memory/list)."""
        what = self.task if self.scope == "task" else f"{self.category} {self.action}"
        return {"id": self.id, "kind": self.kind, "scope": self.scope, "what": what,
                "instruction": self.request, "feedback": self.feedback, "created": self.created,
                "source": self.source, "plan": self.plan}
