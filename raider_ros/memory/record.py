"""Recording what the executor does as an :class:`~raider_ros.memory.interaction.Interaction`.

The executor (:mod:`raider_ros.executor.machine`) talks to the world only through its ports:
issue checks, recovery plans, skills, questions and what it says. An
:class:`InteractionRecorder` wraps those ports (plain callables, duck-typed: this module
imports nothing of the executor) and writes down each action with its result, the recovery
plans made for the issues found, and the person's answers, in the order they happened. The
interaction is what :func:`~raider_ros.memory.learning.learn_from_interaction` needs when the
person corrects the robot afterwards.

Which actions belong to a recovery is read from the executor's feedback stages: after a
recovery plan is made, actions belong to that recovery until the step is checked or carried
out again (stages ``checking`` / ``executing``).
"""
from __future__ import annotations

import re
import threading
from typing import Any, Callable, Mapping

from raider_ros.memory.interaction import Act, Interaction, Recovery
from raider_ros.recovery.rules_writer import infer_category

_QUERY = re.compile(r"^\s*([A-Za-z_][\w]*)\s*\((.*)\)\s*$", re.S)


def split_query(query: str) -> tuple[str, tuple[str, ...]]:
    """'handover(Medicine_1, Person_1)' -> ('handover', ('Medicine_1', 'Person_1')); a query
    in words is its own action with no arguments."""
    m = _QUERY.match(query or "")
    if not m:
        return (query or "").strip(), ()
    args = tuple(a.strip().strip("'\"") for a in m.group(2).split(",") if a.strip())
    return m.group(1), args


class InteractionRecorder:
    """Wraps executor ports and records an :class:`Interaction`. Thread-safe.

    Use: ``ports = Ports(skill=rec.skill_port(skill), ask=rec.ask_port(ask),
    plan_recovery=rec.plan_port(plan), feedback=rec.feedback_port(fb), say=rec.say_port(say), ...)``,
    run, then ``rec.finish(success, reason)``.
    """

    def __init__(self, request: str, task: str | None = None, roles: Mapping[str, str] | None = None, *,
                 scene: str = "", plan: str = "", plan_source: str = "", source_of: Callable[[], str] | None = None):
        self.interaction = Interaction(request, task, dict(roles or {}), scene, plan, plan_source)
        self._origin, self._rec = "task", None
        self._lock = threading.Lock()
        self._source_of = source_of or (lambda: "")

    # ------------------------------------------------------------------ what happened
    def stage(self, stage: str) -> None:
        if stage in ("checking", "executing", "done"):
            with self._lock:
                self._origin, self._rec = "task", None

    def recovery(self, query: str, issue: str, explanation: str, holding: str | None, plan_text: str,
                 source: str = "") -> None:
        action, args = split_query(query)
        with self._lock:
            self.interaction.recoveries.append(Recovery(action, args, issue, infer_category(issue, explanation, action),
                                                        explanation, holding, plan_text, source))
            self._origin, self._rec = "recovery", len(self.interaction.recoveries) - 1

    def act(self, action: str, args, ok: bool, message: str = "") -> None:
        with self._lock:
            self.interaction.acts.append(Act(action, tuple(str(a) for a in args), bool(ok), str(message or ""),
                                             self._origin, self._rec))

    def finish(self, success: bool, reason: str) -> Interaction:
        with self._lock:
            self.interaction.success, self.interaction.reason = bool(success), str(reason or "")
            return self.interaction

    # ------------------------------------------------------------------ port wrappers
    def skill_port(self, skill: Callable[..., Any]) -> Callable[..., Any]:
        def port(name: str, args: list[str], cancel: Any) -> Any:
            result = skill(name, args, cancel)
            if isinstance(result, tuple) and len(result) == 2:
                self.act(name, args, bool(result[0]), str(result[1] or ""))
            return result
        return port

    def ask_port(self, ask: Callable[[str, float], str | None]) -> Callable[[str, float], str | None]:
        def port(question: str, timeout: float) -> str | None:
            answer = ask(question, timeout)
            text = answer.strip() if isinstance(answer, str) and answer.strip() else ""
            self.act("ask", (question,), bool(text), text)
            return answer
        return port

    def say_port(self, say: Callable[[str], None]) -> Callable[[str], None]:
        """What the robot says inside a recovery is part of it; what the executor says on its
        own (that it gives up) is not behaviour to learn from."""
        def port(text: str) -> None:
            say(text)
            if self._origin == "recovery":
                self.act("say", (text,), True)
        return port

    def plan_port(self, plan_recovery: Callable[..., Any]) -> Callable[..., Any]:
        def port(query: str, issue: str, explanation: str, holding: str | None) -> Any:
            plan = plan_recovery(query, issue, explanation, holding)
            code = plan.to_code() if callable(getattr(plan, "to_code", None)) else str(plan)
            self.recovery(query, issue, explanation, holding, code, self._source_of())
            return plan
        return port

    def feedback_port(self, feedback: Callable[..., None]) -> Callable[..., None]:
        def port(index: int, step: Any, stage: str, message: str) -> None:
            self.stage(stage)
            feedback(index, step, stage, message)
        return port
