"""The recovery planner: ``plan(query, issue, explanation, holding) -> Plan`` with the rules
writer (no LLM) or any :class:`~raider_ros.agent.llm.LLM`. Both write plan text that goes
through the same interpreter (:func:`~raider_ros.recovery.plan.parse_plan`).

``memory`` (optional, e.g. :class:`raider_ros.memory.advisor.MemoryAdvisor`): the rules writer
asks it for a matching lesson (``lesson_plan``), and an LLM gets its few-shot examples from it
(``prompt_examples(query, issue, explanation, holding, context, instructions) -> text``)
instead of the fixed ones. Without it the planner behaves as before."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from raider_ros.recovery.plan import Plan, PlanError, parse_plan
from raider_ros.recovery.prompt import RecoveryPrompt
from raider_ros.recovery.rules_writer import RecoveryHints, RulesRecoveryWriter


@dataclass
class RecoveryRecord:
    """What the last planning call did (for logs and reports)."""
    backend: str
    texts: list[str] = field(default_factory=list)      # one per attempt
    errors: list[str] = field(default_factory=list)     # why an attempt was rejected
    prompt_tokens: int = 0
    completion_tokens: int = 0
    elapsed_s: float = 0.0
    source: str = ""                                    # what wrote the plan (rule, lesson, LLM)


class RecoveryPlanner:
    """``plan(query, issue, explanation, holding) -> Plan`` with a rules or an LLM backend.

    ``backend``: ``"rules"`` or an object with ``complete(messages, *, deadline) -> LLMReply``.
    An LLM plan that the interpreter rejects is sent back once (``retries``) with the reason.
    """

    def __init__(self, backend: Any = "rules", *, prompt: RecoveryPrompt | None = None,
                 timeout_s: float = 30.0, retries: int = 1, known_names: Sequence[str] | None = None,
                 memory: Any = None):
        self.memory = memory
        if isinstance(backend, str):
            if backend != "rules":
                raise ValueError(f"unknown recovery backend {backend!r}; expected 'rules' or an LLM object")
            self._writer: RulesRecoveryWriter | None = RulesRecoveryWriter(lessons=memory)
            self._llm = None
        elif callable(getattr(backend, "complete", None)):
            self._writer, self._llm = None, backend
        else:
            raise ValueError(f"recovery backend {backend!r} has no complete(messages, *, deadline) method")
        self._prompt = prompt
        self.timeout_s = timeout_s
        self.retries = max(0, int(retries))
        self.known_names = known_names
        self.last: RecoveryRecord | None = None

    @property
    def name(self) -> str:
        if self._writer is not None:
            return self._writer.name
        return str(getattr(self._llm, "name", type(self._llm).__name__))

    def plan(self, query: str, issue: str, explanation: str, holding: str | None = None, *,
             hints: RecoveryHints | None = None, context: str = "", instructions: Sequence[str] = ()) -> Plan:
        start = time.monotonic()
        rec = RecoveryRecord(self.name)
        self.last = rec
        try:
            if self._writer is not None:
                text = self._writer.write(query, issue, explanation, holding, hints, instructions=instructions)
                rec.source = self._writer.last_source
                rec.texts.append(text)
                return parse_plan(text, known_names=self.known_names)
            rec.source = self.name
            return self._plan_llm(rec, query, issue, explanation, holding, context, instructions)
        finally:
            rec.elapsed_s = time.monotonic() - start

    def _plan_llm(self, rec: RecoveryRecord, query: str, issue: str, explanation: str,
                  holding: str | None, context: str, instructions: Sequence[str] = ()) -> Plan:
        if self._prompt is None:
            self._prompt = RecoveryPrompt.load()
        examples = None
        if self.memory is not None and callable(getattr(self.memory, "prompt_examples", None)):
            examples = self.memory.prompt_examples(query, issue, explanation, holding, context, tuple(instructions))
        messages = self._prompt.messages(query, issue, explanation, holding, context, examples=examples)
        deadline = time.monotonic() + self.timeout_s
        for attempt in range(self.retries + 1):
            reply = self._llm.complete(messages, deadline=deadline)
            rec.prompt_tokens += int(getattr(reply, "prompt_tokens", 0) or 0)
            rec.completion_tokens += int(getattr(reply, "completion_tokens", 0) or 0)
            text = str(getattr(reply, "text", "") or "")
            rec.texts.append(text)
            try:
                return parse_plan(text, known_names=self.known_names)
            except PlanError as exc:
                rec.errors.append(str(exc))
                if attempt == self.retries:
                    raise
                messages = [*messages, {"role": "assistant", "content": text},
                            {"role": "user", "content": f"The plan was rejected: {exc}. Write the corrective "
                                                        "actions again, using only the listed actions, one "
                                                        "call per line."}]
        raise AssertionError("unreachable")  # pragma: no cover
