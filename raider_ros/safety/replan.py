"""Corrective re-planning without an LLM: read a corrective re-prompt, write a plan that keeps
the violated constraints (the "rules (no LLM)" stand-in for the paper's LLM agent).

The re-prompt (:func:`raider_ros.safety.monitor.corrective_prompt`) gives the constraints, the
invalid action, the state change over the constraints' predicates (``Safe:`` before the step,
``Violated:`` after it), the reason with each violated formula as ``(LTL: ...)`` and, in later
rounds, the rejected plan. :func:`parse_corrective` reads it; :func:`corrective_steps` searches
for a short sequence of steps to put before the invalid action:

* candidate steps come from the violated formulas' atoms: ``agent_at(X)`` false -> ``move_to(X)``;
  ``holding(X)`` false -> go to X and pick it, true -> put it down where the step started
  (``place(current_loc)``); ``is_open`` / ``switched_on`` -> go there, open or close, turn on or
  off; ``sliced`` false -> slice; an action atom such as ``turn_on(lamp)`` -> go there and do it;
* each candidate sequence (up to ``MAX_FIXES`` candidates, shortest first, in the order the atoms
  appear) is run on the violated formulas' automata over predicted valuations: now (``Safe``),
  after each candidate, then after the invalid action (its own effect, the change from ``Safe``
  to ``Violated``); the first sequence after which no automaton is dead wins;
* the plan is the rejected plan (or the invalid action alone) with the winning steps put before
  the invalid action, and a ``move_to`` back to the action's target when the steps took the robot
  away from it. When nothing works, the plan only says why the robot will not do it.

What the writer cannot know: the history before now (each automaton starts at the present
state), the rooms of things (going to a thing makes every other ``agent_at`` false), other
constraints than the violated ones. The executor checks every proposed plan with the monitor
(``check_plan``) and re-prompts when a step is still unsafe, so these approximations cost a
round, never an unsafe step.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from . import ltl
from .automata import Compiler, default_compiler
from .ltl import Atom, Formula, LTLError, Not
from .predicates import ActionError, SKILL_ARITY, parse_action

MAX_FIXES = 3
_LINE = re.compile(r"^\s*(Constraints|Invalid action|Safe|Violated|Reason of violation|Rejected plan)\s*:\s*(.*)$",
                   re.I | re.M)
_FORMULA = re.compile(r"\(LTL: (.*?)\) can no longer be satisfied")
_MANIPULATION = ("pick", "open", "close", "turn_on", "turn_off", "slice")


class CorrectiveError(LTLError):
    """A corrective re-prompt that lacks what the writer needs (names the missing part)."""


@dataclass(frozen=True)
class CorrectivePrompt:
    constraints: tuple[str, ...]
    action: str
    safe: Mapping[Atom, bool]
    violated: Mapping[Atom, bool]
    formulas: tuple[Formula, ...]
    rejected_plan: tuple[str, ...] = ()


@dataclass
class CorrectivePlan:
    steps: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)   # (skill or 'say', args)
    fixes: list[str] = field(default_factory=list)                          # what was put before the action
    note: str = ""


def _split_top(text: str, sep: str) -> list[str]:
    out, depth, cur = [], 0, []
    i = 0
    while i < len(text):
        ch = text[i]
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and text.startswith(sep, i):
            out.append("".join(cur))
            cur = []
            i += len(sep)
            continue
        cur.append(ch)
        i += 1
    out.append("".join(cur))
    return [x.strip() for x in out if x.strip()]


def parse_valuation(text: str) -> dict[Atom, bool]:
    """``!agent_at(bathroom) & agent_at(living_room)`` -> {atom: value}; ``true`` -> {}."""
    text = text.strip()
    if not text or text == "true":
        return {}
    out: dict[Atom, bool] = {}
    for part in _split_top(text, "&"):
        f = ltl.parse(part)
        if isinstance(f, Atom):
            out[f] = True
        elif isinstance(f, Not) and isinstance(f.f, Atom):
            out[f.f] = False
        else:
            raise CorrectiveError(f"state change: expected atoms or negated atoms, got {part!r}")
    return out


def parse_corrective(text: str) -> CorrectivePrompt:
    fields: dict[str, str] = {}
    for m in _LINE.finditer(text or ""):
        fields.setdefault(m.group(1).lower(), m.group(2).strip())
    for key in ("invalid action", "safe", "violated"):
        if key not in fields:
            raise CorrectiveError(f"the corrective re-prompt has no '{key.capitalize()}:' line")
    formulas = tuple(ltl.parse(f) for f in _FORMULA.findall(fields.get("reason of violation", "")))
    if not formulas:
        raise CorrectiveError("the reason of violation names no formula ('(LTL: ...)')")
    cons = tuple(x.strip().strip('"') for x in _split_top(fields.get("constraints", "").strip("[]"), '", "'))
    plan = fields.get("rejected plan", "").strip()
    steps = tuple(_split_top(plan[1:-1], ",")) if plan.startswith("[") and plan.endswith("]") else ()
    return CorrectivePrompt(cons, fields["invalid action"], parse_valuation(fields["safe"]),
                            parse_valuation(fields["violated"]), formulas, steps)


# --------------------------------------------------------------------------- candidates
@dataclass(frozen=True)
class _Fix:
    label: str                                   # e.g. "turn on the lamp first"
    steps: tuple[tuple[str, tuple[str, ...]], ...]
    moves: bool                                  # it takes the robot somewhere else


def _w(name: str) -> str:
    return name.replace("_", " ")


def _candidates(formulas: Sequence[Formula], now: Mapping[Atom, bool]) -> list[_Fix]:
    seen: set[tuple] = set()
    out: list[_Fix] = []

    def add(fix: _Fix) -> None:
        if fix.steps not in seen:
            seen.add(fix.steps)
            out.append(fix)

    for f in formulas:
        for a in ltl.atoms(f):
            x = a.args[0] if a.args else ""
            val = now.get(a, False)
            if a.name == "agent_at" and not val:
                add(_Fix(f"go to the {_w(x)} first", (("move_to", (x,)),), True))
            elif a.name == "holding":
                if val:
                    add(_Fix(f"put the {_w(x)} down first", (("place", ("current_loc",)),), False))
                else:
                    add(_Fix(f"pick up the {_w(x)} first", (("move_to", (x,)), ("pick", (x,))), True))
            elif a.name in ("is_open", "switched_on"):
                skill = {("is_open", False): "open", ("is_open", True): "close",
                         ("switched_on", False): "turn_on", ("switched_on", True): "turn_off"}[(a.name, val)]
                add(_Fix(f"{skill.replace('_', ' ')} the {_w(x)} first", (("move_to", (x,)), (skill, (x,))), True))
            elif a.name == "sliced" and not val:
                add(_Fix(f"slice the {_w(x)} first", (("move_to", (x,)), ("slice", (x,))), True))
            elif a.name in _MANIPULATION and len(a.args) == 1:
                add(_Fix(f"{a.name.replace('_', ' ')} the {_w(x)} first", (("move_to", (x,)), (a.name, (x,))), True))
            elif a.name == "move_to" and len(a.args) == 1:
                add(_Fix(f"go to the {_w(x)} first", (("move_to", (x,)),), True))
    return out


def _effect(v: dict[Atom, bool], skill: str, args: tuple[str, ...]) -> dict[Atom, bool]:
    """The valuation after one step, as far as the atoms tell (see the module docstring)."""
    out = {a: (False if a.name in SKILL_ARITY else val) for a, val in v.items()}
    x = args[0] if args else ""
    for a in out:
        if a.name in SKILL_ARITY:
            out[a] = a.name == skill and len(a.args) >= 1 and a.args[0].lower() == x.lower()
    if skill == "move_to":
        for a in out:
            if a.name == "agent_at":
                out[a] = a.args[0].lower() == x.lower()
    elif skill == "pick":
        for a in out:
            if a.name == "holding":
                out[a] = a.args[0].lower() == x.lower()
    elif skill == "place":
        for a in out:
            if a.name == "holding":
                out[a] = False
    elif skill in ("open", "close", "turn_on", "turn_off", "slice"):
        name, value = {"open": ("is_open", True), "close": ("is_open", False), "turn_on": ("switched_on", True),
                       "turn_off": ("switched_on", False), "slice": ("sliced", True)}[skill]
        for a in out:
            if a.name == name and a.args[0].lower() == x.lower():
                out[a] = value
    return out


def _after_action(v: dict[Atom, bool], safe: Mapping[Atom, bool], violated: Mapping[Atom, bool],
                  skill: str) -> dict[Atom, bool]:
    out = dict(v)
    for a in set(out) | set(violated):
        after = violated.get(a, out.get(a, False))
        if a.name in SKILL_ARITY or (a.name == "agent_at" and skill == "move_to"):
            out[a] = after
        elif safe.get(a, False) != after:
            out[a] = after
    return out


def _alive(dfas, trace: Sequence[Mapping[Atom, bool]]) -> bool:
    for dfa in dfas:
        q = dfa.initial
        for v in trace:
            q = dfa.step(q, dfa.letter({a: v.get(a, False) for a in dfa.atoms}))
            if dfa.is_dead(q):
                return False
    return True


def corrective_steps(prompt: CorrectivePrompt, query: str = "", *, compiler: Compiler | None = None,
                     max_fixes: int = MAX_FIXES) -> CorrectivePlan:
    compiler = compiler or default_compiler()
    try:
        act = parse_action(prompt.action)
    except ActionError as exc:
        raise CorrectiveError(f"invalid action: {exc}") from None
    dfas = [compiler.compile(f) for f in prompt.formulas]
    now = {**{a: False for f in prompt.formulas for a in ltl.atoms(f)}, **prompt.safe}
    now = {a: (False if a.name in SKILL_ARITY else v) for a, v in now.items()}
    cands = _candidates(prompt.formulas, now)
    target = act.args[0] if act.args else ""
    rejected = list(prompt.rejected_plan)
    at = next((i for i, s in enumerate(rejected) if s.replace(" ", "") == prompt.action.replace(" ", "")), None)
    for n in range(1, max_fixes + 1):
        for combo in itertools.permutations(cands, n):
            trace = [now]
            v = now
            steps: list[tuple[str, tuple[str, ...]]] = []
            for fix in combo:
                for skill, args in fix.steps:
                    v = _effect(v, skill, args)
                    trace.append(v)
                    steps.append((skill, args))
            if any(fx.moves for fx in combo) and act.skill != "move_to":
                v = _effect(v, "move_to", (target,))
                trace.append(v)
                steps.append(("move_to", (target,)))
            trace.append(_after_action(v, prompt.safe, prompt.violated, act.skill))
            if not _alive(dfas, trace):
                continue
            before = [parse_or_keep(s) for s in (rejected[:at] if at is not None else [])]
            after = [parse_or_keep(s) for s in (rejected[at:] if at is not None else [prompt.action])]
            return CorrectivePlan([*before, *steps, *after], [fx.label for fx in combo],
                                  "; ".join(fx.label for fx in combo))
    sentence = prompt.constraints[0] if prompt.constraints else ltl.to_text(prompt.formulas[0])
    why = f"I will not do {prompt.action}: it would break the rule \"{sentence}\", and I found no way around it."
    return CorrectivePlan([("say", (why,))], [], "no safe way found")


def parse_or_keep(step: str) -> tuple[str, tuple[str, ...]]:
    try:
        a = parse_action(step)
        return a.skill, a.args
    except ActionError:
        m = re.match(r"^\s*(\w+)\s*\((.*)\)\s*$", step)
        if not m:
            raise CorrectiveError(f"rejected plan: cannot read the step {step!r}") from None
        return m.group(1), tuple(x.strip() for x in m.group(2).split(",") if x.strip())


def corrective_plan(query: str, prompt_text: str, *, compiler: Compiler | None = None) -> CorrectivePlan:
    """Parse a corrective re-prompt and write the steps (see the module docstring)."""
    return corrective_steps(parse_corrective(prompt_text), query, compiler=compiler)
