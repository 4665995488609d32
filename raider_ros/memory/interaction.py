"""What happened in one interaction, as :func:`~raider_ros.memory.learning.learn_from_interaction`
needs it: the request, the plan the robot set out with, every action it took with its result
(task steps and recovery steps), the recoveries it planned for the issues it found, and what
the person said along the way.

The plan runner (:mod:`raider_ros.memory.runner`) fills one in; the executor node will fill
one in from its step records in the node phase.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from raider_ros.recovery.plan import INTERACTION_ACTIONS, Literal, Plan, PlanStep


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
