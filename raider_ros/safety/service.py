"""The Safety Chip as a service (ROS-free): what the ``safety_monitor`` node answers, and what
an in-process client (the evaluation) calls. Plain dataclasses in, plain dataclasses out.

:class:`SafetyService` wraps one :class:`~raider_ros.safety.monitor.SafetyMonitor`:

* ``add(text=..., ltl=...)`` / ``remove(id)`` / ``constraints()``: the constraint set; every
  error (syntax with its column, unknown predicate or name, untranslatable sentence,
  unsatisfiable set, already violated) is an answer with ``success`` false and the reason,
  and the set stays as it was;
* ``observe(state)``: the latest world state seen (a person may change the world between
  steps); the first one starts the trace, and constraints queued before it (``queue``, e.g.
  from a constraints file) are added then;
* ``check_action(action, state=None)`` / ``check_plan(steps, state=None)``: verdicts on
  predicted states from the given state, else the latest observed one, with the automata as
  the executed steps left them; an unsafe answer carries the violated constraints, the state
  change (the constraint atoms before and after, as in the paper), an explanation and the
  corrective re-prompt;
* ``follow(action, observed=None)``: an executed step (the observed state after it, else the
  predicted one) advances the trace; ``reset(state=None)`` starts a new trace.

With no constraint at all every action is safe (nothing needs to be read). ``session`` is new
for every service object: a client that sees it change knows the trace was lost.
"""
from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, Sequence

from .ltl import LTLError
from .monitor import PENDING, SAFE, UNSAFE, CheckResult, NoStateError, SafetyMonitor, corrective_prompt, render_valuation
from .predicates import ActionError, SymbolicState


@dataclass
class ConstraintInfo:
    id: int
    text: str
    ltl: str
    english: str
    source: str
    status: str = ""                   # safe | pending | unsafe on the trace so far ('' before any state)


@dataclass
class AddAnswer:
    success: bool
    message: str
    constraint: ConstraintInfo | None = None


@dataclass
class Verdict:
    """The answer to check_action / check_plan / follow."""
    verdict: str                                   # safe | pending | unsafe | error
    action: str = ""                               # the action judged (check_plan: the first unsafe one)
    explanation: str = ""
    reason: str = ""                               # error: why no verdict could be given
    violated: list[int] = field(default_factory=list)
    violated_text: list[str] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)
    state_safe: str = ""                           # unsafe: the constraint atoms before the step
    state_violated: str = ""                       # ... and after it
    corrective_prompt: str = ""
    first_unsafe_step: int = -1                    # check_plan
    automaton_states: list[int] = field(default_factory=list)   # check_plan: after the last step checked
    session: str = ""
    trace_length: int = 0


class SafetyService:
    def __init__(self, monitor: SafetyMonitor | None = None, *, translator: Any = None):
        self.monitor = monitor or SafetyMonitor(None, translator=translator)
        if translator is not None and self.monitor.translator is None:
            self.monitor.translator = translator
        self.session = uuid.uuid4().hex[:12]
        self.latest: SymbolicState | None = self.monitor.state
        self._queued: list[dict] = []
        self.queue_error: str = ""
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ world
    @property
    def has_state(self) -> bool:
        return self.latest is not None or self.monitor.state is not None

    def observe(self, state: SymbolicState) -> None:
        with self._lock:
            first = self.monitor.state is None
            self.latest = state
            if first:
                self.monitor.reset(state)
                self._admit_queued()

    def queue(self, items: Sequence[dict]) -> None:
        """Constraints to add all at once when the first world state arrives (now, if known)."""
        with self._lock:
            self._queued = list(items)
            if self.monitor.state is not None:
                self._admit_queued()

    def _admit_queued(self) -> None:
        if not self._queued:
            return
        items, self._queued = self._queued, []
        try:
            self.monitor.add_many(items)
            self.queue_error = ""
        except (LTLError, ActionError) as exc:
            self.queue_error = str(exc).splitlines()[0]

    def reset(self, state: SymbolicState | None = None) -> Verdict:
        with self._lock:
            st = state or self.latest or self.monitor.state
            if st is None:
                return self._error("", "no world state yet to start a trace from")
            bad = self.monitor.reset(st)
            self.latest = st
            if bad:
                names = ", ".join(c.describe() for c in self.monitor.constraints() if c.id in bad)
                return Verdict(UNSAFE, explanation=f"the present state already violates {names}",
                               violated=bad, session=self.session)
            return Verdict(self._overall(), session=self.session, trace_length=0)

    # ------------------------------------------------------------------ constraints
    def add(self, text: str = "", ltl: str = "") -> AddAnswer:
        text, ltl = (text or "").strip(), (ltl or "").strip()
        if not text and not ltl:
            return AddAnswer(False, "give an English sentence (text) or an LTL formula (ltl)")
        with self._lock:
            if not ltl and self.monitor.state is None:
                return AddAnswer(False, f"cannot translate {text!r} yet: no world state to resolve its names")
            try:
                c = self.monitor.add(ltl or None, text=text or None)
            except (LTLError, ActionError) as exc:
                return AddAnswer(False, str(exc))
            return AddAnswer(True, f"added constraint #{c.id}: {c.ltl}", self._info(c))

    def remove(self, constraint_id: int) -> AddAnswer:
        with self._lock:
            try:
                c = self.monitor.remove(int(constraint_id))
            except KeyError as exc:
                return AddAnswer(False, str(exc.args[0]))
            return AddAnswer(True, f"removed constraint #{c.id}: {c.ltl}", self._info(c))

    def clear(self) -> int:
        with self._lock:
            n = len(self.monitor.constraints())
            self.monitor.clear()
            return n

    def constraints(self) -> list[ConstraintInfo]:
        with self._lock:
            return [self._info(c) for c in self.monitor.constraints()]

    def _info(self, c) -> ConstraintInfo:
        status = self.monitor.status().get(c.id, "") if self.monitor.state is not None else ""
        return ConstraintInfo(c.id, c.text or "", c.ltl, c.english, c.source, status)

    # ------------------------------------------------------------------ checking
    def check_action(self, action: str, state: SymbolicState | None = None) -> Verdict:
        with self._lock:
            if not self.monitor.constraints():
                return self._ok(SAFE, action, "no constraints: every action is allowed")
            try:
                res = self.monitor.check_action(action, state or self.latest)
            except (ActionError, NoStateError) as exc:
                return self._error(action, str(exc))
            return self._from_result(res)

    def check_plan(self, steps: Sequence[str], state: SymbolicState | None = None) -> Verdict:
        with self._lock:
            if not self.monitor.constraints():
                return self._ok(SAFE, "", "no constraints: every plan is allowed")
            try:
                pc = self.monitor.check_plan(list(steps), state or self.latest)
            except NoStateError as exc:
                return self._error("", str(exc))
            if pc.error:
                v = self._error("", pc.error)
                v.automaton_states = list(pc.end_states)
                return v
            if pc.first_unsafe_step is not None:
                bad = pc.steps[pc.first_unsafe_step]
                v = self._from_result(bad, plan=[str(s) for s in steps])
                v.first_unsafe_step = pc.first_unsafe_step
            else:
                v = self._ok(PENDING if pc.pending_at_end else SAFE, "",
                             f"the plan of {len(steps)} steps is allowed"
                             + (f"; still to be done: {self._names(pc.pending_at_end)}" if pc.pending_at_end else ""))
                v.pending = list(pc.pending_at_end)
            v.automaton_states = list(pc.end_states)
            return v

    def follow(self, action: str, observed: SymbolicState | None = None) -> Verdict:
        with self._lock:
            if self.monitor.state is None:
                return self._error(action, "no world state yet: the executed step cannot be recorded")
            try:
                res = self.monitor.follow(action, observed)
            except ActionError as exc:
                # the step happened all the same: restart the trace at what was observed
                if observed is not None:
                    self.monitor.reset(observed)
                return self._error(action, f"{exc}; the trace restarts at the observed state")
            self.latest = self.monitor.state
            return self._from_result(res)

    # ------------------------------------------------------------------ answers
    def _names(self, ids: Sequence[int]) -> str:
        cons = {c.id: c for c in self.monitor.constraints()}
        return "; ".join(cons[i].describe() for i in ids if i in cons)

    def _ok(self, verdict: str, action: str, explanation: str) -> Verdict:
        return Verdict(verdict, action, explanation, session=self.session, trace_length=len(self.monitor.history))

    def _error(self, action: str, reason: str) -> Verdict:
        return Verdict("error", action, "", reason, session=self.session, trace_length=len(self.monitor.history))

    def _overall(self) -> str:
        st = set(self.monitor.status().values())
        return UNSAFE if UNSAFE in st else PENDING if PENDING in st else SAFE

    def _from_result(self, res: CheckResult, plan: Sequence[str] | None = None) -> Verdict:
        v = self._ok(res.verdict, res.action, res.explanation())
        v.violated = list(res.violated)
        v.pending = list(res.pending)
        if res.verdict == UNSAFE:
            cons = self.monitor.constraints()
            by_id = {c.id: c for c in cons}
            v.violated_text = [by_id[i].text or by_id[i].english or by_id[i].ltl for i in res.violated if i in by_id]
            v.state_safe = render_valuation(res.change_before)
            v.state_violated = render_valuation(res.change_after)
            v.corrective_prompt = corrective_prompt(res, cons, reason=res.reason(), plan=plan)
        return v
