"""The monitor as a planner's oracle (in process): :class:`MonitorLooker` steps the constraint
automata one candidate action at a time from a :class:`~raider_ros.safety.monitor.Trace`, as
:func:`raider_ros.executor.safe_plan.plan_safely` expects (``start`` / ``step`` / ``check``;
it returns objects with ``verdict``, ``key``, ``handle``, ``violated``, ``first_unsafe_step``).

A step the monitor cannot read (an argument that names several things before the issue check
grounds it) is answered ``error``: its effects are left out of the look-ahead, and the
executor checks the grounded step before it dispatches it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, Sequence

from .monitor import PENDING, SAFE, UNSAFE, SafetyMonitor, Trace
from .predicates import ActionError, SymbolicState


@dataclass
class Look:
    verdict: str
    key: Hashable = ()
    handle: Any = None
    violated: Sequence[str] = ()
    first_unsafe_step: int | None = None


def _status(mon: SafetyMonitor, trace: Trace) -> str:
    cons = {c.id: c for c in mon.constraints()}
    worst = SAFE
    for cid, q in trace.automata:
        c = cons.get(cid)
        if c is None:
            continue
        if c.dfa.is_dead(q):  # type: ignore[union-attr]
            return UNSAFE
        if q not in c.dfa.accepting:  # type: ignore[union-attr]
            worst = PENDING
    return worst


class MonitorLooker:
    def __init__(self, monitor: SafetyMonitor, state: SymbolicState | None = None):
        self.monitor = monitor
        self.state = state

    def start(self) -> Look:
        tr = self.monitor.trace(self.state)
        return Look(_status(self.monitor, tr), tr.key, tr)

    def step(self, handle: Trace, action: str) -> Look:
        try:
            res, tr = self.monitor.advance(handle, action)
        except ActionError:       # unknown effects: the trace goes on from where it was
            return Look("error", (handle.key, "?", action), handle)
        violated = [r.constraint.text or r.constraint.ltl for r in res.results if r.status == UNSAFE]
        return Look(res.verdict, tr.key, tr, violated)

    def check(self, actions: list[str]) -> Look:
        pc = self.monitor.check_plan(actions, self.state)
        if pc.error:
            return Look("error", pc.end_states)
        if pc.first_unsafe_step is not None:
            bad = pc.steps[pc.first_unsafe_step]
            return Look(UNSAFE, pc.end_states, None, [r.constraint.text or r.constraint.ltl for r in bad.results
                                                      if r.status == UNSAFE], pc.first_unsafe_step)
        return Look(PENDING if pc.pending_at_end else SAFE, pc.end_states)
