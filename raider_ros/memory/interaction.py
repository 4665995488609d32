"""What happened in one interaction, as :func:`~raider_ros.memory.learning.learn_from_interaction`
needs it: the request, the plan the robot set out with, every action it took with its result
(task steps and recovery steps), the recoveries it planned for the issues it found, and what
the person said along the way.

The plan runner (:mod:`raider_ros.memory.runner`) fills one in; the executor node will fill
one in from its step records in the node phase.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping

from raider_ros.recovery.plan import INTERACTION_ACTIONS, Literal, Plan, PlanStep

MAX_ACTS = 500
MAX_TEXT = 4000


class InteractionError(ValueError):
    """An interaction document (memory/learn's ``interaction_json``) that does not follow the
    format; the message names the field."""


@dataclass
class Act:
    """One action the robot took."""
    action: str
    args: tuple[str, ...]
    ok: bool
    message: str = ""                  # a skill's message, or the person's answer to an ask
    origin: str = "task"               # task | recovery
    recovery: int | None = None        # index into Interaction.recoveries for recovery actions
    binds: str | None = None

    def call(self) -> str:
        if self.action in INTERACTION_ACTIONS:
            return f"{self.action}({json.dumps(self.args[0], ensure_ascii=False) if self.args else ''})"
        return f"{self.action}({', '.join(self.args)})"


@dataclass
class Recovery:
    """An issue found before (or while) carrying out a step, and the plan made for it."""
    action: str                        # the step's action
    args: tuple[str, ...]              # the step's arguments
    issue: str                         # unfeasibility | ambiguity
    category: str                      # issue category (IU1 ... HD)
    explanation: str
    holding: str | None
    plan: str                          # the recovery plan text run
    source: str = ""                   # "rules (no LLM)", "lesson 12", an LLM's name

    @property
    def query(self) -> str:
        return f"{self.action}({', '.join(self.args)})"


@dataclass
class Interaction:
    request: str                                       # what the person asked for
    task: str | None = None                            # kind of request (deliver, fetch, ...)
    roles: dict[str, str] = field(default_factory=dict)
    scene: str = ""
    plan: str = ""                                     # the plan the robot set out with
    plan_source: str = ""                              # which example or lesson gave it
    acts: list[Act] = field(default_factory=list)
    recoveries: list[Recovery] = field(default_factory=list)
    utterances: list[str] = field(default_factory=list)  # what the person said after the request
    success: bool = False
    reason: str = ""

    @property
    def instructions(self) -> list[str]:
        return [self.request, *self.utterances]

    @property
    def questions(self) -> int:
        return sum(1 for a in self.acts if a.action == "ask")

    def executed_plan(self) -> Plan:
        """What the robot did, as a plan: every skill action that succeeded (task and recovery
        steps, in order) and the task's own ask/say steps. Questions asked to recover from an
        issue are left out: they answered that moment's problem, not the request."""
        steps = []
        for a in self.acts:
            if a.action in INTERACTION_ACTIONS:
                if a.origin == "task" and a.args:
                    steps.append(PlanStep(a.action, (Literal(a.args[0]),), a.binds))
                continue
            if a.ok:
                steps.append(PlanStep(a.action, tuple(Literal(x) for x in a.args)))
        return Plan(tuple(steps))

    def transcript(self) -> str:
        """The interaction as lines a person (or an LLM) can read."""
        lines = [f"person: {self.request}"]
        for a in self.acts:
            if a.action == "ask":
                answer = f'person: "{a.message}"' if a.message else "no answer"
                lines.append(f"robot: {a.call()} -> {answer}")
            elif a.action == "say":
                lines.append(f"robot: {a.call()}")
            else:
                result = "done" if a.ok else f"failed: {a.message}"
                lines.append(f"robot: {a.call()} -> {result}")
        for u in self.utterances:
            lines.append(f"person: {u}")
        return "\n".join(lines)

    def handed_over(self) -> list[tuple[str, str]]:
        return [(a.args[0], a.args[1]) for a in self.acts if a.action == "handover" and a.ok and len(a.args) == 2]

    def trace(self) -> list[str]:
        """Everything the robot did, for comparing two runs of the same request."""
        return [f"{a.call()}{'' if a.ok or a.action in INTERACTION_ACTIONS else ' !'}" for a in self.acts]

    # ------------------------------------------------------------------ as a document
    def to_dict(self) -> dict:
        d = asdict(self)
        d["acts"] = [{**asdict(a), "args": list(a.args)} for a in self.acts]
        d["recoveries"] = [{**asdict(r), "args": list(r.args)} for r in self.recoveries]
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> "Interaction":
        try:
            doc = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise InteractionError(f"interaction: not valid JSON: {exc}") from None
        return cls.from_dict(doc)

    @classmethod
    def from_dict(cls, doc: Any) -> "Interaction":
        """The inverse of :meth:`to_dict`; every field is checked (the document comes from
        another process), unknown fields are errors."""
        if not isinstance(doc, Mapping):
            raise InteractionError("interaction: expected a JSON object")
        _known(doc, cls, "interaction")
        request = _text(doc.get("request"), "interaction.request", required=True)
        roles = doc.get("roles") or {}
        if not isinstance(roles, Mapping) or not all(isinstance(k, str) and isinstance(v, str) and v
                                                     for k, v in roles.items()):
            raise InteractionError("interaction.roles: expected a mapping of role names to ids")
        acts_raw, recs_raw, utt = doc.get("acts") or [], doc.get("recoveries") or [], doc.get("utterances") or []
        for name, v in (("acts", acts_raw), ("recoveries", recs_raw), ("utterances", utt)):
            if not isinstance(v, list) or len(v) > MAX_ACTS:
                raise InteractionError(f"interaction.{name}: expected a list of at most {MAX_ACTS} entries")
        recoveries = []
        for i, r in enumerate(recs_raw):
            where = f"interaction.recoveries[{i}]"
            if not isinstance(r, Mapping):
                raise InteractionError(f"{where}: expected an object")
            _known(r, Recovery, where)
            recoveries.append(Recovery(_text(r.get("action"), f"{where}.action", required=True),
                                       _args(r.get("args"), f"{where}.args"),
                                       _text(r.get("issue"), f"{where}.issue", required=True),
                                       _text(r.get("category"), f"{where}.category"),
                                       _text(r.get("explanation"), f"{where}.explanation"),
                                       _text(r.get("holding"), f"{where}.holding") or None,
                                       _text(r.get("plan"), f"{where}.plan"),
                                       _text(r.get("source"), f"{where}.source")))
        acts = []
        for i, a in enumerate(acts_raw):
            where = f"interaction.acts[{i}]"
            if not isinstance(a, Mapping):
                raise InteractionError(f"{where}: expected an object")
            _known(a, Act, where)
            origin = a.get("origin", "task")
            if origin not in ("task", "recovery"):
                raise InteractionError(f"{where}.origin: expected task or recovery, got {origin!r}")
            rec = a.get("recovery")
            if rec is not None and (isinstance(rec, bool) or not isinstance(rec, int)
                                    or not 0 <= rec < len(recoveries)):
                raise InteractionError(f"{where}.recovery: expected the index of one of the "
                                       f"{len(recoveries)} recoveries, got {rec!r}")
            ok = a.get("ok")
            if not isinstance(ok, bool):
                raise InteractionError(f"{where}.ok: expected true or false, got {ok!r}")
            acts.append(Act(_text(a.get("action"), f"{where}.action", required=True), _args(a.get("args"), f"{where}.args"),
                            ok, _text(a.get("message"), f"{where}.message"), origin, rec,
                            _text(a.get("binds"), f"{where}.binds") or None))
        success = doc.get("success", False)
        if not isinstance(success, bool):
            raise InteractionError(f"interaction.success: expected true or false, got {success!r}")
        return cls(request, _text(doc.get("task"), "interaction.task") or None, dict(roles),
                   _text(doc.get("scene"), "interaction.scene"), _text(doc.get("plan"), "interaction.plan"),
                   _text(doc.get("plan_source"), "interaction.plan_source"), acts, recoveries,
                   [_text(u, f"interaction.utterances[{i}]", required=True) for i, u in enumerate(utt)],
                   success, _text(doc.get("reason"), "interaction.reason"))


def _known(doc: Mapping, cls: type, where: str) -> None:
    unknown = sorted(set(doc) - {f.name for f in fields(cls)})
    if unknown:
        raise InteractionError(f"{where}: unknown field {unknown[0]!r}")


def _text(value: Any, where: str, *, required: bool = False) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise InteractionError(f"{where}: expected {'non-empty ' if required else ''}text, got {value!r}")
    if len(value) > MAX_TEXT:
        raise InteractionError(f"{where}: longer than {MAX_TEXT} characters")
    return value


def _args(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise InteractionError(f"{where}: expected a list of texts, got {value!r}")
    return tuple(value)
