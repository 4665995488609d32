"""Small recorders for modules whose core objects keep no history of their own: the executor's
progress (:class:`ExecutionTracker`, fed by the executor's ports), the robot's skills
(:class:`SkillLog`) and the dialogue (:class:`DialogueLog`). All are bounded and thread-safe;
the summarizers in :mod:`raider_ros.state_qa.summarizers` read them."""
from __future__ import annotations

import dataclasses
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

Clock = Callable[[], float]


# --------------------------------------------------------------------------- skills
@dataclass(frozen=True)
class SkillRecord:
    stamp: float
    name: str
    args: tuple[str, ...]
    success: bool
    message: str = ""

    @property
    def call(self) -> str:
        return f"{self.name}({', '.join(self.args)})"


class SkillLog:
    """The skills the robot ran, newest last (at most ``max_records``)."""

    def __init__(self, max_records: int = 20, clock: Clock = time.time):
        self._records: deque[SkillRecord] = deque(maxlen=max(1, int(max_records)))
        self._clock = clock
        self._lock = threading.Lock()

    def record(self, name: str, args: Iterable[Any], success: bool, message: str = "",
               stamp: float | None = None) -> SkillRecord:
        rec = SkillRecord(self._clock() if stamp is None else float(stamp), str(name),
                          tuple(str(a) for a in args), bool(success), str(message or ""))
        with self._lock:
            self._records.append(rec)
        return rec

    def wrap(self, skill: Callable[..., Any]) -> Callable[..., Any]:
        """An executor ``skill`` port (``(name, args, cancel) -> (ok, message)``) that records."""
        def run(name, args, *rest):
            ok, msg = skill(name, args, *rest)
            self.record(name, args, ok, msg)
            return ok, msg
        return run

    def records(self) -> list[SkillRecord]:
        with self._lock:
            return list(self._records)

    def last(self) -> SkillRecord | None:
        with self._lock:
            return self._records[-1] if self._records else None


# --------------------------------------------------------------------------- dialogue
@dataclass(frozen=True)
class Utterance:
    stamp: float
    speaker: str          # ROBOT | PERSON | WORLD (a change the person made)
    text: str
    kind: str = "say"     # say | ask | answer | no_answer | world


class DialogueLog:
    """The lines of the conversation, newest last (at most ``max_lines``)."""

    def __init__(self, max_lines: int = 40, clock: Clock = time.time):
        self._lines: deque[Utterance] = deque(maxlen=max(1, int(max_lines)))
        self._clock = clock
        self._lock = threading.Lock()

    def add(self, speaker: str, text: str, kind: str = "say", stamp: float | None = None) -> Utterance:
        u = Utterance(self._clock() if stamp is None else float(stamp), str(speaker).upper(),
                      " ".join(str(text).split()), kind)
        with self._lock:
            self._lines.append(u)
        return u

    def add_line(self, line: str, stamp: float | None = None) -> Utterance:
        """A ``human/dialogue`` line: ``"ROBOT: ..."``, ``"PERSON: ..."``, ``"WORLD: ..."``. A
        robot line that ends with "?" is a question; a person line answers the open question."""
        who, sep, text = str(line).partition(": ")
        if not sep:
            who, text = "ROBOT", str(line)
        who = who.strip().upper()
        if who == "PERSON":
            kind = "no_answer" if text.strip() == "(no answer)" else "answer"
        elif who == "WORLD":
            kind = "world"
        else:
            kind = "ask" if text.rstrip().endswith("?") else "say"
        return self.add(who, text, kind, stamp)

    def add_exchanges(self, exchanges: Iterable[Any], stamp: float | None = None) -> None:
        """``ScriptedHuman.transcript`` entries (kind ask | say, text, answer)."""
        for ex in exchanges:
            kind = getattr(ex, "kind", "say")
            self.add("ROBOT", getattr(ex, "text", ""), "ask" if kind == "ask" else "say", stamp)
            if kind == "ask":
                answer = getattr(ex, "answer", None)
                if answer is None:
                    self.add("PERSON", "(no answer)", "no_answer", stamp)
                else:
                    self.add("PERSON", answer, "answer", stamp)

    def wrap_ask(self, ask: Callable[[str, float], str | None]) -> Callable[[str, float], str | None]:
        def run(question: str, timeout_s: float) -> str | None:
            self.add("ROBOT", question, "ask")
            answer = ask(question, timeout_s)
            if answer is None:
                self.add("PERSON", "(no answer)", "no_answer")
            else:
                self.add("PERSON", answer, "answer")
            return answer
        return run

    def wrap_say(self, say: Callable[[str], None]) -> Callable[[str], None]:
        def run(text: str) -> None:
            self.add("ROBOT", text, "say")
            say(text)
        return run

    def lines(self) -> list[Utterance]:
        with self._lock:
            return list(self._lines)


# --------------------------------------------------------------------------- executor
@dataclass
class StepState:
    index: int
    step: str
    text: str = ""
    status: str = "pending"      # pending | checking | recovering | executing | done | aborted | cancelled
    recoveries: int = 0
    issues: list[str] = dataclasses.field(default_factory=list)
    last_message: str = ""


@dataclass
class ExecutionState:
    task: str = ""
    status: str = "idle"          # idle | running | success | aborted | cancelled
    steps: list[StepState] = dataclasses.field(default_factory=list)
    current: int | None = None
    stage: str = ""
    message: str = ""
    reason: str = ""
    events: list[tuple[float, str]] = dataclasses.field(default_factory=list)
    plans: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    started: float | None = None
    updated: float | None = None


class ExecutionTracker:
    """Follows one executor run through its ports: ``start(task, steps)``, then
    :meth:`on_feedback` / :meth:`on_explanation` (or :meth:`attach` to a ``Ports``), then
    :meth:`finish` with the ``ExecutionOutcome``."""

    def __init__(self, max_events: int = 30, clock: Clock = time.time, on_change: Callable[[], Any] | None = None):
        self.max_events = max(1, int(max_events))
        self._clock = clock
        self._lock = threading.Lock()
        self._state = ExecutionState()
        self.on_change = on_change      # called (outside the lock) after every change, e.g. to publish

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def start(self, task: str, steps: Sequence[Any]) -> None:
        now = self._clock()
        with self._lock:
            self._state = ExecutionState(
                task=str(task), status="running",
                steps=[StepState(i, str(s), str(getattr(s, "text", "") or "")) for i, s in enumerate(steps)],
                started=now, updated=now)
            self._event(now, f"started {task} ({len(steps)} steps)")
        self._changed()

    def _event(self, now: float, text: str) -> None:
        ev = self._state.events
        ev.append((now, text))
        del ev[: max(0, len(ev) - self.max_events)]

    def _step(self, index: int, step: Any) -> StepState:
        st = self._state
        while len(st.steps) <= index:
            st.steps.append(StepState(len(st.steps), str(step) if len(st.steps) == index else "?"))
        return st.steps[index]

    def on_feedback(self, index: int, step: Any, stage: str, message: str) -> None:
        """The executor's ``feedback(step_index, step, stage, message)`` port."""
        now = self._clock()
        with self._lock:
            st = self._state
            if st.status == "idle":
                st.status, st.started = "running", now
            s = self._step(int(index), step)
            s.status, s.last_message = stage, str(message)
            if stage == "recovering":
                s.recoveries += 1
                self._event(now, f"step {index + 1}: {message}")
            elif stage == "done":
                self._event(now, f"step {index + 1} {s.step} done")
            elif stage == "executing":
                self._event(now, f"step {index + 1}: executing {message}")
            st.current, st.stage, st.message, st.updated = int(index), stage, str(message), now
        self._changed()

    def on_explanation(self, index: int, query: str, issue: str, explanation: str, grounding: Sequence[str]) -> None:
        """The executor's ``publish_explanation(step_index, query, issue, explanation, grounding)`` port."""
        now = self._clock()
        with self._lock:
            s = self._step(int(index), query)
            s.issues.append(f"{issue}: {explanation}")
            self._event(now, f"step {index + 1}: {issue} when checking {query}: {explanation}")
            self._state.updated = now
        self._changed()

    def on_plan(self, index: int, plan_code: str) -> None:
        now = self._clock()
        with self._lock:
            self._state.plans.append((int(index), str(plan_code)))
            del self._state.plans[: max(0, len(self._state.plans) - self.max_events)]
            self._state.updated = now
        self._changed()

    def finish(self, outcome: Any) -> None:
        """The ``ExecutionOutcome`` of the run (status, reason, steps with their records)."""
        now = self._clock()
        with self._lock:
            st = self._state
            st.status = str(getattr(outcome, "status", "aborted"))
            st.reason = str(getattr(outcome, "reason", ""))
            for rec in getattr(outcome, "steps", []) or []:
                s = self._step(int(rec.index), rec.step)
                s.status = str(rec.status)
                s.recoveries = max(s.recoveries, int(getattr(rec, "recoveries", 0)))
                for code in getattr(rec, "plans", []) or []:
                    if (rec.index, code) not in st.plans:
                        st.plans.append((rec.index, code))
            st.updated = now
            self._event(now, f"task {st.status}: {st.reason}")
        self._changed()

    def attach(self, ports: Any) -> Any:
        """A copy of an executor ``Ports`` whose feedback and publish_explanation also feed this
        tracker (the original callables still run first)."""
        fb, pub, plan = ports.feedback, ports.publish_explanation, ports.plan_recovery

        def feedback(i, step, stage, msg):
            try:
                fb(i, step, stage, msg)
            finally:
                self.on_feedback(i, step, stage, msg)

        def publish(i, query, issue, explanation, grounding):
            try:
                pub(i, query, issue, explanation, grounding)
            finally:
                self.on_explanation(i, query, issue, explanation, grounding)

        def plan_recovery(query, issue, explanation, holding):
            p = plan(query, issue, explanation, holding)
            code = p.to_code() if hasattr(p, "to_code") else str(p)
            with self._lock:
                idx = self._state.current if self._state.current is not None else -1
            self.on_plan(idx, code)
            return p

        return dataclasses.replace(ports, feedback=feedback, publish_explanation=publish, plan_recovery=plan_recovery)

    def state(self) -> ExecutionState:
        """A copy of the tracked state."""
        with self._lock:
            st = self._state
            return dataclasses.replace(st, steps=[dataclasses.replace(s, issues=list(s.issues)) for s in st.steps],
                                       events=list(st.events), plans=list(st.plans))
