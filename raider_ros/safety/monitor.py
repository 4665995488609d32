"""The runtime monitor: an ensemble of constraint automata stepped on the symbolic state.

Semantics (``docs/safety.md``). A constraint is an LTLf formula over the trace of states that
starts at the state in which the constraint was added (or the monitor reset): position 0 is that
state, position i the state after the i-th executed step. Before a step runs, the monitor
predicts the state after it (:func:`~raider_ros.safety.predicates.predict`) and steps every
constraint's automaton on it:

* **unsafe**: for some constraint no continuation of the trace can satisfy it any more (its
  automaton is in a dead state, one from which no accepting state is reachable);
* **pending**: not unsafe, but some constraint is not satisfied yet by the trace ending here
  (an open obligation, e.g. ``F close(fridge)`` after ``open(fridge)``);
* **safe**: every constraint is satisfied by the trace ending here.

Constraints are checked one by one; a set whose members are each satisfiable but that cannot be
satisfied together is refused when it is added (:class:`UnsatisfiableError`). Treating atoms as
independent, that check finds contradictions among the formulas themselves, not those that need
world knowledge (the robot cannot be in two rooms at once). Every error leaves the monitor as it
was.
"""
from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from . import ltl
from .automata import DFA, Compiler, default_compiler, joint_live, satisfiable
from .ltl import Atom, Formula, LTLError
from .predicates import (
    ActionError, PredicateError, ResolvedAction, SymbolicState, check_atom, evaluate, predict, resolve_action,
)

SAFE, PENDING, UNSAFE = "safe", "pending", "unsafe"


class ConstraintError(LTLError):
    """A constraint that cannot be added: names the constraint and the reason."""


class UnsatisfiableError(ConstraintError):
    """No trace satisfies the constraint (alone or together with the others)."""


class NoStateError(RuntimeError):
    """The monitor has no world state yet (call reset)."""


@dataclass(frozen=True)
class Constraint:
    id: int
    formula: Formula
    ltl: str                       # normal text of the formula
    text: str | None = None        # the English sentence it came from, if any
    english: str = ""              # the formula read back in English
    source: str = "ltl"            # 'ltl' (given as a formula), or the translator's label
    dfa: DFA | None = field(default=None, compare=False, repr=False)

    @property
    def atoms(self) -> tuple[Atom, ...]:
        return ltl.atoms(self.formula)

    def describe(self) -> str:
        return f'#{self.id} "{self.text}" ({self.ltl})' if self.text else f"#{self.id} ({self.ltl})"


@dataclass(frozen=True)
class ConstraintResult:
    constraint: Constraint
    status: str                                 # safe | pending | unsafe
    before: Mapping[Atom, bool]                 # the constraint's atoms in the state before the step
    after: Mapping[Atom, bool]                  # ... and after it

    @property
    def id(self) -> int:
        return self.constraint.id


def render_valuation(values: Mapping[Atom, bool]) -> str:
    """``!agent_at(bedroom) & agent_at(bathroom)`` (the paper's state-change notation)."""
    if not values:
        return "true"
    return " & ".join(str(a) if v else f"!{a}" for a, v in values.items())


@dataclass(frozen=True)
class CheckResult:
    """The verdict on one step: overall status and one result per constraint."""
    action: str
    verdict: str
    results: tuple[ConstraintResult, ...]
    state: SymbolicState | None = field(default=None, compare=False, repr=False)   # the state after
    # for an unsafe step: every constraint atom before and after it (the re-prompt's state change)
    change_before: Mapping[Atom, bool] = field(default_factory=dict)
    change_after: Mapping[Atom, bool] = field(default_factory=dict)

    @property
    def violated(self) -> list[int]:
        return [r.id for r in self.results if r.status == UNSAFE]

    @property
    def pending(self) -> list[int]:
        return [r.id for r in self.results if r.status == PENDING]

    @property
    def safe(self) -> bool:
        return self.verdict != UNSAFE

    def explanation(self) -> str:
        """Why the step is unsafe, citing each violated constraint, in plain words."""
        bad = [r for r in self.results if r.status == UNSAFE]
        if not bad:
            if self.verdict == PENDING:
                return (f"{self.action} is allowed; still to be done: "
                        + "; ".join(r.constraint.describe() for r in self.results if r.status == PENDING))
            return f"{self.action} is allowed by every constraint."
        parts = []
        for r in bad:
            c = r.constraint
            cited = f'"{c.text}"' if c.text else f'"{c.english or c.ltl}"'
            changed = [a for a in r.after if r.before.get(a) != r.after[a]]
            change = ("; it makes " + ", ".join(f"{a} {'true' if r.after[a] else 'false'}" for a in changed)) \
                if changed else ""
            parts.append(f"{self.action} violates the constraint {cited} ({c.ltl}){change}; "
                         "after it no continuation can satisfy the constraint")
        return ". ".join(parts) + "."

    def reason(self) -> str:
        """The reason of the violation for a corrective re-prompt: one sentence per violated
        constraint, with its formula in a fixed shape (``(LTL: <formula>)``) that a planner
        without an LLM can read back (:mod:`raider_ros.safety.replan`)."""
        parts = []
        for r in self.results:
            if r.status != UNSAFE:
                continue
            c = r.constraint
            changed = [a for a in r.after if r.before.get(a) != r.after[a]]
            change = ", ".join(f"{a} {'true' if r.after[a] else 'false'}" for a in changed) or "no predicate change"
            parts.append(f'{self.action} makes {change}, after which the constraint "{c.text or c.english or c.ltl}" '
                         f"(LTL: {c.ltl}) can no longer be satisfied")
        return "; ".join(parts) + ("." if parts else "")


@dataclass(frozen=True)
class PlanCheck:
    """A whole plan run through the monitor on predicted states (stops at the first unsafe step)."""
    steps: tuple[CheckResult, ...]
    first_unsafe_step: int | None
    pending_at_end: list[int]
    error: str | None = None                     # a step that could not be read (ActionError)
    # the automaton state of every constraint (in id order) after the last step checked: two
    # prefixes with equal states and equal world states have the same future verdicts
    end_states: tuple[int, ...] = ()

    @property
    def violated(self) -> list[int]:
        return self.steps[self.first_unsafe_step].violated if self.first_unsafe_step is not None else []


@dataclass(frozen=True)
class Trace:
    """A position of the monitor's trace: the world state and every constraint's automaton
    state (``SafetyMonitor.trace`` / ``advance``; a planner explores many of them)."""
    state: SymbolicState
    automata: tuple[tuple[int, int], ...]      # (constraint id, automaton state), by id

    @property
    def key(self) -> tuple[int, ...]:
        return tuple(q for _, q in self.automata)


class SafetyMonitor:
    """Constraints as automata, stepped on the symbolic state.

    ``add``/``remove``/``constraints`` manage the set; ``check_action`` and ``check_plan`` look
    ahead without changing anything; ``follow`` records an executed step (with the observed
    state after it, or the predicted one). Thread-safe.
    """

    def __init__(self, state: SymbolicState | None = None, *, compiler: Compiler | None = None,
                 translator: Any = None):
        self.compiler = compiler or default_compiler()
        self.translator = translator            # .translate(sentence, state) -> Translation
        self._lock = threading.RLock()
        self._constraints: dict[int, Constraint] = {}
        self._q: dict[int, int] = {}            # automaton state per constraint
        self._ids = itertools.count()
        self._state = state
        self.history: list[str] = []            # executed steps since the last reset

    # ------------------------------------------------------------------ world state
    @property
    def state(self) -> SymbolicState | None:
        return self._state

    def reset(self, state: SymbolicState) -> list[int]:
        """Start a new trace at ``state`` for every constraint; returns the ids of constraints
        that this state already violates."""
        with self._lock:
            self._state = state
            self.history = []
            letters = self._letters(state, self._constraints.values())
            bad = []
            for cid, c in self._constraints.items():
                q = c.dfa.step(c.dfa.initial, letters[cid])  # type: ignore[union-attr]
                self._q[cid] = q
                if c.dfa.is_dead(q):  # type: ignore[union-attr]
                    bad.append(cid)
            return bad

    # ------------------------------------------------------------------ constraints
    def add(self, formula: str | Formula | None = None, *, text: str | None = None,
            english: str | None = None, source: str | None = None) -> Constraint:
        """Add one constraint, given as a formula, or as an English sentence that the
        monitor's translator turns into one. Raises LTLError subclasses (syntax, unknown
        predicate, untranslatable, unsatisfiable, already violated); the set is then unchanged."""
        return self.add_many([{"ltl": formula, "text": text, "english": english, "source": source}])[0]

    def add_many(self, items: Iterable[str | Formula | Mapping[str, Any]]) -> list[Constraint]:
        """Add several constraints at once, all or none."""
        with self._lock:
            new: list[Constraint] = []
            for item in items:
                if not isinstance(item, Mapping):
                    item = {"ltl": item}
                new.append(self._build(item.get("ltl"), item.get("text"), item.get("english"),
                                       item.get("source")))
            return self._admit(new)

    def _build(self, formula, text, english, source) -> Constraint:
        if formula is None:
            if not text:
                raise ConstraintError("a constraint needs a formula or a sentence")
            if self.translator is None:
                raise ConstraintError(f"cannot translate {text!r}: the monitor has no translator")
            tr = self.translator.translate(text, self._state)
            formula, english = tr.formula, tr.english
            source = source or getattr(self.translator, "name", "translator")
        f = ltl.parse(formula) if isinstance(formula, str) else formula
        where = f'in "{text}" ' if text else ""
        for a in ltl.atoms(f):
            try:
                check_atom(a, self._state)
            except PredicateError as exc:
                raise PredicateError(f"constraint {where}({ltl.to_text(f)}): {exc}") from None
        dfa = self.compiler.compile(f)
        if not satisfiable(f, self.compiler):
            raise UnsatisfiableError(f"constraint {where}({ltl.to_text(f)}) can never be satisfied")
        if english is None:
            from .english import to_english
            english = to_english(f)
        return Constraint(-1, f, ltl.to_text(f), text, english, source or "ltl", dfa)

    def _admit(self, new: list[Constraint]) -> list[Constraint]:
        start: dict[int, int] = {}
        staged: list[Constraint] = []
        for c in new:
            staged.append(Constraint(next(self._ids), c.formula, c.ltl, c.text, c.english, c.source, c.dfa))
        if self._state is not None:
            letters = self._letters(self._state, staged)
            for c in staged:
                q = c.dfa.step(c.dfa.initial, letters[c.id])  # type: ignore[union-attr]
                if c.dfa.is_dead(q):  # type: ignore[union-attr]
                    raise ConstraintError(f"constraint {c.describe()} is already violated in the current state")
                start[c.id] = q
            everyone = [*self._constraints.values(), *staged]
            states = [self._q.get(c.id, start.get(c.id)) for c in everyone]
            ok = joint_live([c.dfa for c in everyone], states)  # type: ignore[misc]
        else:
            everyone = [*self._constraints.values(), *staged]
            ok = joint_live([c.dfa for c in everyone])  # type: ignore[misc]
        if ok is False:
            names = ", ".join(c.describe() for c in staged)
            others = [c.describe() for c in self._constraints.values()]
            with_ = f" together with {', '.join(others)}" if others else " together"
            raise UnsatisfiableError(f"no sequence of states can satisfy {names}{with_}")
        for c in staged:
            self._constraints[c.id] = c
            if c.id in start:
                self._q[c.id] = start[c.id]
        return staged

    def remove(self, constraint_id: int) -> Constraint:
        with self._lock:
            if constraint_id not in self._constraints:
                known = ", ".join(str(i) for i in self._constraints) or "none"
                raise KeyError(f"no constraint #{constraint_id} (constraints: {known})")
            self._q.pop(constraint_id, None)
            return self._constraints.pop(constraint_id)

    def clear(self) -> None:
        with self._lock:
            self._constraints.clear()
            self._q.clear()

    def constraints(self) -> list[Constraint]:
        with self._lock:
            return list(self._constraints.values())

    def status(self) -> dict[int, str]:
        """Each constraint's status on the trace so far."""
        with self._lock:
            return {cid: self._status(c.dfa, self._q[cid]) for cid, c in self._constraints.items()
                    if cid in self._q}

    # ------------------------------------------------------------------ checking
    def check_action(self, action: Any, state: SymbolicState | None = None) -> CheckResult:
        """The verdict on one step from ``state`` (default: the monitor's current state),
        without changing the monitor. Raises ActionError for a step that names no skill or
        nothing of the world."""
        with self._lock:
            cur = self._need_state(state)
            act = resolve_action(cur, action)
            nxt = predict(cur, act)
            return self._judge(act, cur, nxt, dict(self._q))[0]

    def check_plan(self, plan: Sequence[Any], state: SymbolicState | None = None) -> PlanCheck:
        """Run a plan on predicted states; stops at the first unsafe step."""
        with self._lock:
            cur = self._need_state(state)
            qs = dict(self._q)
            steps: list[CheckResult] = []
            for i, step in enumerate(plan):
                try:
                    act = resolve_action(cur, step)
                except ActionError as exc:
                    return PlanCheck(tuple(steps), None, [], f"step {i}: {exc}", self._end(qs))
                nxt = predict(cur, act)
                res, qs = self._judge(act, cur, nxt, qs)
                steps.append(res)
                if res.verdict == UNSAFE:
                    return PlanCheck(tuple(steps), i, [], None, self._end(qs))
                cur = nxt.with_changes(action=None)
            pending = [cid for cid, c in self._constraints.items()
                       if cid in qs and qs[cid] not in c.dfa.accepting]  # type: ignore[union-attr]
            return PlanCheck(tuple(steps), None, pending, None, self._end(qs))

    def _end(self, qs: Mapping[int, int]) -> tuple[int, ...]:
        return tuple(qs.get(cid, -1) for cid in sorted(self._constraints))

    def trace(self, state: SymbolicState | None = None) -> Trace:
        """The present position: ``state`` (default the monitor's) with the automata as the
        executed steps left them."""
        with self._lock:
            cur = self._need_state(state)
            qs = dict(self._q)
            unstarted = [c for cid, c in self._constraints.items() if cid not in qs]
            letters = self._letters(cur, unstarted) if unstarted else {}
            for c in unstarted:
                qs[c.id] = c.dfa.step(c.dfa.initial, letters[c.id])  # type: ignore[union-attr]
            return Trace(cur.with_changes(action=None) if cur.action is not None else cur, tuple(sorted(qs.items())))

    def advance(self, trace: Trace, action: Any) -> tuple[CheckResult, Trace]:
        """The verdict on one more step after ``trace`` and the position it leads to (predicted
        state), without changing the monitor; ActionError for a step it cannot read."""
        with self._lock:
            act = resolve_action(trace.state, action)
            nxt = predict(trace.state, act)
            res, qs = self._judge(act, trace.state, nxt, dict(trace.automata))
            return res, Trace(nxt.with_changes(action=None), tuple(sorted(qs.items())))

    def follow(self, action: Any, new_state: SymbolicState | None = None) -> CheckResult:
        """Record an executed step; ``new_state`` is the state observed after it (default: the
        predicted one). Returns the verdict on the step as it happened."""
        with self._lock:
            cur = self._need_state(None)
            act = resolve_action(cur, action)
            nxt = new_state if new_state is not None else predict(cur, act)
            if new_state is not None and nxt.action is None:
                nxt = nxt.with_changes(action=act)
            res, qs = self._judge(act, cur, nxt, dict(self._q))
            self._q = qs
            self._state = nxt.with_changes(action=None) if nxt.action is not None else nxt
            # the action atom belongs to the position it created; the next step starts clean
            self.history.append(str(act))
            return res

    # ------------------------------------------------------------------ internals
    def _need_state(self, state: SymbolicState | None) -> SymbolicState:
        cur = state if state is not None else self._state
        if cur is None:
            raise NoStateError("the safety monitor has no world state yet: call reset(state) first")
        return cur

    @staticmethod
    def _letters(state: SymbolicState, constraints: Iterable[Constraint]) -> dict[int, int]:
        cache: dict[Atom, bool] = {}
        out = {}
        for c in constraints:
            letter = 0
            for i, a in enumerate(c.dfa.atoms):  # type: ignore[union-attr]
                v = cache.get(a)
                if v is None:
                    v = cache[a] = evaluate(a, state)
                if v:
                    letter |= 1 << i
            out[c.id] = letter
        return out

    @staticmethod
    def _status(dfa: DFA | None, q: int) -> str:
        if dfa.is_dead(q):  # type: ignore[union-attr]
            return UNSAFE
        return SAFE if q in dfa.accepting else PENDING  # type: ignore[union-attr]

    def _judge(self, act: ResolvedAction, cur: SymbolicState, nxt: SymbolicState,
               qs: dict[int, int]) -> tuple[CheckResult, dict[int, int]]:
        letters = self._letters(nxt, self._constraints.values())
        unstarted = [c for cid, c in self._constraints.items() if qs.get(cid) is None]
        first = self._letters(cur, unstarted) if unstarted else {}
        out = dict(qs)
        results = []
        for cid, c in self._constraints.items():
            dfa = c.dfa
            q0 = qs.get(cid)
            if q0 is None:   # added before any state was known: the current state starts its trace
                q0 = dfa.step(dfa.initial, first[cid])  # type: ignore[union-attr]
            q = dfa.step(q0, letters[cid])  # type: ignore[union-attr]
            out[cid] = q
            status = self._status(dfa, q)
            before = {a: evaluate(a, cur) for a in c.atoms} if status == UNSAFE else {}
            after = {a: evaluate(a, nxt) for a in c.atoms} if status == UNSAFE else {}
            results.append(ConstraintResult(c, status, before, after))
        verdict = UNSAFE if any(r.status == UNSAFE for r in results) else \
            PENDING if any(r.status == PENDING for r in results) else SAFE
        before_all: dict[Atom, bool] = {}
        after_all: dict[Atom, bool] = {}
        if verdict == UNSAFE:
            for c in self._constraints.values():
                for a in c.atoms:
                    if a not in before_all:
                        before_all[a] = evaluate(a, cur)
                        after_all[a] = evaluate(a, nxt)
        return CheckResult(str(act), verdict, tuple(results), nxt, before_all, after_all), out


def corrective_prompt(result: CheckResult, constraints: Sequence[Constraint], template: str | None = None, *,
                      reason: str | None = None, plan: Sequence[str] | None = None) -> str:
    """The corrective re-prompt for an unsafe step (template: data/prompts/safety/corrective.yaml):
    the constraints in English, the invalid action and the state change it would cause, then the
    reason of the violation (empty, as in the paper's prompt, unless given: the executor passes
    :meth:`CheckResult.reason`) and, when the invalid action was a step of a proposed plan, that
    plan (the ``plan_line`` of the template file)."""
    plan_line = "Rejected plan: {plan}"
    if template is None:
        from raider_ros.common.paths import data_dir
        from raider_ros.common.yamlfile import read_yaml_mapping
        doc, _ = read_yaml_mapping(data_dir() / "prompts" / "safety" / "corrective.yaml",
                                   what="corrective prompt", error=LTLError)
        template = doc["template"]
        plan_line = str(doc.get("plan_line", plan_line))
    sentences = [c.text or c.english or c.ltl for c in constraints]
    text = template.format(constraints="[" + ", ".join(f'"{x}"' for x in sentences) + "]",
                           action=result.action, safe=render_valuation(result.change_before),
                           violated=render_valuation(result.change_after), reason=reason or "")
    lines = [ln.rstrip() for ln in text.rstrip("\n").splitlines()]
    if plan:
        lines.append(plan_line.format(plan="[" + ", ".join(plan) + "]"))
    return "\n".join(lines)
