"""PDDL tasks: read a domain and a problem, check them, and plan with pyperplan.

Reading uses the ``pddl`` package; its syntax errors carry a line and column, which we
report as ``file:line:column``. The package does not check that predicates exist, have the
right number of arguments, or that objects and types are declared: :func:`load_task` does,
and finds the line of the offending name itself. Planning uses pyperplan's Python API
(STRIPS with types; negative preconditions, disjunctions, quantifiers and conditional effects
are refused with a message naming the action). A time limit bounds the search; an
unsolvable problem names the goal facts that no action sequence can make true.

Domains live in ``data/pddl/<name>/domain.pddl`` with ``problem.pddl`` beside them;
:func:`load_named` loads one by name. Every function also takes inline PDDL text.
"""
from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from raider_ros.common.paths import data_dir

SEARCHES = ("astar", "gbf", "bfs")
MAX_GROUND_ACTIONS = 200_000
MAX_TEXT = 1_000_000


class PddlError(ValueError):
    """A domain, a problem or a planning request that cannot be used; the message names the
    file, the line when known, and the cause."""

    def __init__(self, message: str, *, source: str = "", line: int | None = None,
                 column: int | None = None):
        self.source, self.line, self.column, self.cause = source, line, column, message
        where = source
        if line is not None:
            where += f":{line}" + (f":{column}" if column is not None else "")
        super().__init__(f"{where}: {message}" if where else message)


@dataclass(frozen=True)
class GroundAction:
    name: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return f"({' '.join((self.name, *self.args))})"


@dataclass
class PddlTask:
    domain: Any            # pddl.core.Domain
    problem: Any           # pddl.core.Problem
    domain_text: str
    problem_text: str
    domain_source: str
    problem_source: str

    def action_parameters(self, action: str) -> list[str]:
        for a in self.domain.actions:
            if str(a.name).lower() == action.lower():
                return [str(v.name) for v in a.parameters]
        raise KeyError(action)

    @property
    def action_names(self) -> list[str]:
        return sorted(str(a.name) for a in self.domain.actions)


@dataclass
class PlanResult:
    actions: list[GroundAction]
    search: str
    expanded: int
    elapsed_s: float


# --------------------------------------------------------------------------- reading
def pddl_dir() -> Path:
    return data_dir() / "pddl"


def _read(spec: str | Path, kind: str) -> tuple[str, str]:
    """(text, source label) for inline PDDL text or a path."""
    if isinstance(spec, str) and ("(" in spec or "\n" in spec or not spec.strip()):
        if len(spec) > MAX_TEXT:
            raise PddlError(f"inline {kind} text is too long ({len(spec)} characters)", source=f"<{kind}>")
        return spec, f"<{kind}>"
    p = Path(spec)
    try:
        if p.stat().st_size > MAX_TEXT:
            raise PddlError(f"the file is too large ({p.stat().st_size} bytes)", source=str(p))
        return p.read_text(encoding="utf-8"), str(p)
    except FileNotFoundError:
        raise PddlError(f"no such {kind} file", source=str(p)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PddlError(f"cannot read the {kind} file: {exc}", source=str(p)) from None


def load_named(name: str, problem: str | Path | None = None) -> PddlTask:
    """``data/pddl/<name>/domain.pddl`` with its ``problem.pddl`` (or the given problem)."""
    d = pddl_dir() / name
    if not (d / "domain.pddl").is_file():
        known = sorted(x.name for x in pddl_dir().glob("*") if (x / "domain.pddl").is_file())
        raise PddlError(f"no PDDL domain named {name!r} under {pddl_dir()}; known: {', '.join(known) or 'none'}")
    return load_task(d / "domain.pddl", problem if problem is not None else d / "problem.pddl")


def load_task(domain: str | Path, problem: str | Path) -> PddlTask:
    """Read and check a domain and a problem (paths or inline text)."""
    dtext, dsrc = _read(domain, "domain")
    ptext, psrc = _read(problem, "problem")
    dom = _parse(dtext, dsrc, "domain")
    prob = _parse(ptext, psrc, "problem")
    task = PddlTask(dom, prob, dtext, ptext, dsrc, psrc)
    _Checker(task).run()
    return task


_PARSERS: dict[str, Any] = {}
_PARSE_LOCK = threading.Lock()


def _run_parser(kind: str, text: str) -> Any:
    """Building the pddl package's parser (a Lark grammar) takes most of a second, so one per
    kind is kept; its transformer holds per-parse state, reset before every parse."""
    with _PARSE_LOCK:
        parser = _PARSERS.get(kind)
        if parser is None:
            from pddl.parser.domain import DomainParser
            from pddl.parser.problem import ProblemParser
            parser = _PARSERS[kind] = DomainParser() if kind == "domain" else ProblemParser()
        transformer = getattr(parser, "_transformer", None)
        if transformer is not None:
            transformer.__init__()
        return parser(text)


def _parse(text: str, source: str, kind: str) -> Any:
    _check_brackets(text, source)
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, VisitError
    from pddl.exceptions import PDDLError
    try:
        return _run_parser(kind, text)
    except UnexpectedEOF:
        raise PddlError(f"the {kind} ends too early (a ')' or a section is missing)", source=source,
                        line=_last_line(text)) from None
    except UnexpectedCharacters as exc:
        raise PddlError(f"syntax error: unexpected {text[exc.pos_in_stream]!r}"
                        f"{_expected(getattr(exc, 'allowed', None))}",
                        source=source, line=exc.line, column=exc.column) from None
    except UnexpectedInput as exc:
        tok = getattr(exc, "token", None)
        what = "the end of the text" if tok is None or tok.type == "$END" else repr(str(tok))
        line = exc.line if isinstance(exc.line, int) and exc.line > 0 else _last_line(text)
        col = exc.column if isinstance(exc.column, int) and exc.column > 0 else None
        raise PddlError(f"syntax error: unexpected {what}{_expected(getattr(exc, 'expected', None))}",
                        source=source, line=line, column=col) from None
    except VisitError as exc:
        orig = exc.orig_exc
        raise PddlError(_cleanup(str(orig)), source=source, line=_line_for_message(text, str(orig))) from None
    except (PDDLError, ValueError, KeyError, TypeError, AttributeError, AssertionError) as exc:
        msg = _cleanup(str(exc)) or type(exc).__name__
        raise PddlError(msg, source=source, line=_line_for_message(text, msg)) from None
    except RecursionError:
        raise PddlError(f"the {kind} is nested too deeply to read", source=source) from None


def _expected(names: Iterable[str] | None) -> str:
    if not names:
        return ""
    pretty = sorted({n.lower().replace("_", "-") for n in names})[:6]
    return f"; expected {', '.join(pretty)}"


def _cleanup(msg: str) -> str:
    return " ".join(msg.split())


_SECTIONS = ("requirements", "types", "constants", "predicates", "functions", "action",
             "durative-action", "derived", "objects", "init", "goal", "metric")
_SECTION_RE = re.compile(r"\(\s*:([a-z-]+)", re.I)


def _check_brackets(text: str, source: str) -> None:
    """Unbalanced parentheses, reported where they are (comments ';' ignored).

    A section such as ``(:action`` that starts while an earlier one is still open points at
    the section whose ')' is missing; an action keyword (``:effect``) outside any action, or
    text after the closing ')' of ``(define``, points at the ')' too many."""
    if not text.strip():
        raise PddlError("the text is empty", source=source)
    stack: list[int] = []
    closed_section_at = None            # line of the ')' that last closed a section
    closed_define_at = None
    for lineno, line in enumerate(text.splitlines(), 1):
        code = line.split(";", 1)[0]
        for col, ch in enumerate(code):
            if closed_define_at is not None and not ch.isspace():
                raise PddlError(f"text after the end of (define ...), which a ')' on line {closed_define_at} "
                                "closes: a ')' too many", source=source, line=closed_define_at)
            if ch == "(":
                m = _SECTION_RE.match(code, col)
                if m and m.group(1).lower() in _SECTIONS and len(stack) > 1:
                    raise PddlError(f"a ')' is missing: the part opened on line {stack[1]} is not closed "
                                    f"before (:{m.group(1)} on line {lineno}", source=source, line=stack[1])
                stack.append(lineno)
            elif ch == ")":
                if not stack:
                    raise PddlError("unmatched ')'", source=source, line=lineno, column=col + 1)
                stack.pop()
                if len(stack) == 1:
                    closed_section_at = lineno
                elif not stack:
                    closed_define_at = lineno
            elif ch == ":" and len(stack) == 1 and closed_section_at is not None:
                kw = re.match(r":(parameters|precondition|effect)\b", code[col:], re.I)
                if kw:
                    raise PddlError(f"{kw.group(0)} on line {lineno} is outside any action: a ')' too many "
                                    f"closes the action on line {closed_section_at}", source=source,
                                    line=closed_section_at)
    if stack:
        inner = f" (the innermost unclosed '(' is on line {stack[-1]})" if len(stack) > 1 else ""
        raise PddlError(f"{len(stack)} '(' never closed: a ')' is missing{inner}", source=source, line=stack[-1])


def _last_line(text: str) -> int:
    return max(1, text.rstrip().count("\n") + 1)


def _line_of(text: str, pattern: str, start: int = 0) -> int | None:
    """1-based line of the first match of a regex (case-insensitive), from ``start``."""
    m = re.compile(pattern, re.I).search(_strip_comments(text), start)
    return text.count("\n", 0, m.start()) + 1 if m else None


def _strip_comments(text: str) -> str:
    # keep offsets: blank out comments instead of removing them
    return re.sub(r";[^\n]*", lambda m: " " * len(m.group(0)), text)


_REQUIREMENT_SYNTAX = {
    "disjunctive-preconditions": r"\(\s*or\b", "negative-preconditions": r"\(\s*not\b",
    "existential-preconditions": r"\(\s*exists\b", "universal-preconditions": r"\(\s*forall\b",
    "conditional-effects": r"\(\s*when\b", "equality": r"\(\s*=", "typing": r"\s-\s",
}


def _line_for_message(text: str, msg: str) -> int | None:
    """A library message without a position: the line of the construct a missing requirement
    names, or of the first quoted name in it."""
    req = re.search(r"requirement, :?([a-z-]+) not found", msg)
    if req and req.group(1) in _REQUIREMENT_SYNTAX:
        return _line_of(text, _REQUIREMENT_SYNTAX[req.group(1)])
    for name in re.findall(r"['\"]([^'\"\s]+)['\"]|Variable\((\w+)\)", msg):
        n = name[0] or name[1]
        line = _line_of(text, rf"(?<![\w-]){re.escape(n)}(?![\w-])")
        if line:
            return line
    return None


# --------------------------------------------------------------------------- checks
class _Checker:
    """What the pddl package leaves unchecked, and what pyperplan cannot plan with."""

    def __init__(self, task: PddlTask):
        self.t = task
        d = task.domain
        self.types: dict[str, str | None] = {str(k).lower(): (str(v).lower() if v else None)
                                             for k, v in (d.types or {}).items()}
        self.types.setdefault("object", None)
        self.preds = {str(p.name).lower(): [self._tag(v) for v in p.terms] for p in d.predicates}
        self.constants = {str(c.name).lower(): self._tag(c) for c in d.constants}

    @staticmethod
    def _tag(term: Any) -> str:
        tags = sorted(str(t).lower() for t in (getattr(term, "type_tags", None) or ()))
        return tags[0] if tags else "object"

    def dfail(self, msg: str, pattern: str | None = None, start: int = 0) -> PddlError:
        line = _line_of(self.t.domain_text, pattern, start) if pattern else None
        return PddlError(msg, source=self.t.domain_source, line=line)

    def pfail(self, msg: str, pattern: str | None = None, start: int = 0) -> PddlError:
        line = _line_of(self.t.problem_text, pattern, start) if pattern else None
        return PddlError(msg, source=self.t.problem_source, line=line)

    def is_a(self, t: str, want: str) -> bool:
        seen = set()
        while t and t not in seen:
            if t == want:
                return True
            seen.add(t)
            t = self.types.get(t) or ("object" if t != "object" else None)
        return want == "object"

    def run(self) -> None:
        self.check_domain()
        self.check_problem()

    # domain ---------------------------------------------------------------------------
    def check_domain(self) -> None:
        for name, parent in self.types.items():
            if parent is not None and parent not in self.types:
                raise self.dfail(f"type {name!r} has the undeclared parent type {parent!r}", rf"\b{re.escape(parent)}\b")
        for a in sorted(self.t.domain.actions, key=lambda a: str(a.name)):
            aname = str(a.name)
            m = re.search(rf"\(\s*:action\s+{re.escape(aname)}(?![\w-])", _strip_comments(self.t.domain_text), re.I)
            start = m.start() if m else 0
            params = {str(v.name).lower(): self._tag(v) for v in a.parameters}
            for v in a.parameters:
                tag = self._tag(v)
                if tag not in self.types:
                    raise self.dfail(f"action {aname}: parameter ?{v.name} has the undeclared type {tag!r}",
                                     rf"\b{re.escape(tag)}\b", start)
            if a.precondition is not None:
                for atom in self._atoms(a.precondition, f"action {aname}: precondition", start, positive_only=True):
                    self._check_atom(atom, params, f"action {aname}: precondition", start)
            if a.effect is not None:
                for atom in self._atoms(a.effect, f"action {aname}: effect", start, positive_only=False):
                    self._check_atom(atom, params, f"action {aname}: effect", start)

    def _atoms(self, f: Any, where: str, start: int, *, positive_only: bool) -> list[Any]:
        from pddl.logic.base import And, Not
        from pddl.logic.predicates import Predicate
        if isinstance(f, Predicate):
            return [f]
        if isinstance(f, And):
            out = []
            for op in f.operands:
                out.extend(self._atoms(op, where, start, positive_only=positive_only))
            return out
        if isinstance(f, Not) and isinstance(f.argument, Predicate):
            if positive_only:
                raise self.dfail(f"{where}: negative conditions like {f} are not supported by the planner "
                                 "(pyperplan plans with STRIPS: use a positive predicate instead)",
                                 r"\(\s*not\b", start)
            return [f.argument]
        kind = type(f).__name__.lower()
        raise self.dfail(f"{where}: {kind} formulas ({_cleanup(str(f))[:60]}) are not supported by the planner "
                         "(STRIPS with types only)", rf"\(\s*{kind}\b" if kind.isalpha() else None, start)

    def _predicate(self, atom: Any, n_terms: int, where: str, start: int, fail) -> tuple[str, str, list]:
        """The atom's predicate name, its search pattern and the declared argument types;
        ``fail`` (domain or problem) raises for an unknown predicate or a wrong argument count."""
        name = str(atom.name).lower()
        pat = rf"\(\s*{re.escape(name)}(?![\w-])"
        if name not in self.preds:
            raise fail(f"{where}: unknown predicate {name!r}; declared: {', '.join(sorted(self.preds))}", pat, start)
        want = self.preds[name]
        if n_terms != len(want):
            raise fail(f"{where}: ({name} ...) takes {len(want)} argument(s), got {n_terms}", pat, start)
        return name, pat, want

    def _check_atom(self, atom: Any, params: dict[str, str], where: str, start: int) -> None:
        from pddl.logic.terms import Variable
        name, pat, want = self._predicate(atom, len(atom.terms), where, start, self.dfail)
        terms = list(atom.terms)
        for i, (term, wtype) in enumerate(zip(terms, want), 1):
            tname = str(term.name).lower()
            if isinstance(term, Variable):
                if tname not in params:
                    raise self.dfail(f"{where}: ?{tname} in ({name} ...) is not a parameter of the action",
                                     rf"\?{re.escape(tname)}(?![\w-])", start)
                have = params[tname]
            else:
                if tname not in self.constants:
                    raise self.dfail(f"{where}: {tname!r} in ({name} ...) is not a declared constant", pat, start)
                have = self.constants[tname]
            if not self.is_a(have, wtype) and not self.is_a(wtype, have):
                raise self.dfail(f"{where}: argument {i} of ({name} ...) is of type {have!r}, expected {wtype!r}",
                                 pat, start)

    # problem --------------------------------------------------------------------------
    def check_problem(self) -> None:
        p, d = self.t.problem, self.t.domain
        if str(p.domain_name).lower() != str(d.name).lower():
            raise self.pfail(f"the problem is for domain {str(p.domain_name)!r} but the domain is {str(d.name)!r}",
                             r"\(\s*:domain\b")
        objects = dict(self.constants)
        for o in p.objects:
            tag = self._tag(o)
            if tag not in self.types:
                raise self.pfail(f"object {o.name!r} has the undeclared type {tag!r}", rf"\b{re.escape(tag)}\b")
            objects[str(o.name).lower()] = tag
        init_start = _init_offset(self.t.problem_text)
        for atom in sorted(p.init, key=str):
            self._check_fact(atom, objects, "init", init_start)
        goal = p.goal
        from pddl.logic.base import And
        from pddl.logic.predicates import Predicate
        goal_start = _section_offset(self.t.problem_text, ":goal")
        atoms = [goal] if isinstance(goal, Predicate) else list(goal.operands) if isinstance(goal, And) else None
        if atoms is None or not all(isinstance(a, Predicate) for a in atoms):
            raise self.pfail("goal: only a conjunction of positive facts is supported by the planner",
                             r"\(\s*:goal\b")
        for atom in atoms:
            self._check_fact(atom, objects, "goal", goal_start)

    def _check_fact(self, atom: Any, objects: dict[str, str], where: str, start: int) -> None:
        from pddl.logic.predicates import Predicate
        if not isinstance(atom, Predicate):
            raise self.pfail(f"{where}: {_cleanup(str(atom))} is not a plain fact", None)
        name, pat, want = self._predicate(atom, len(atom.terms), where, start, self.pfail)
        terms = [str(t.name).lower() for t in atom.terms]
        for i, (obj, wtype) in enumerate(zip(terms, want), 1):
            if obj not in objects:
                raise self.pfail(f"{where}: ({name} {' '.join(terms)}) uses the undeclared object {obj!r}",
                                 rf"(?<![\w-]){re.escape(obj)}(?![\w-])", start)
            if not self.is_a(objects[obj], wtype):
                raise self.pfail(f"{where}: ({name} {' '.join(terms)}): argument {i} {obj!r} is of type "
                                 f"{objects[obj]!r}, expected {wtype!r}", pat, start)


def _section_offset(text: str, section: str) -> int:
    m = re.search(rf"\(\s*{re.escape(section)}\b", _strip_comments(text), re.I)
    return m.start() if m else 0


def _init_offset(text: str) -> int:
    return _section_offset(text, ":init")


# --------------------------------------------------------------------------- planning
class _Timeout(Exception):
    pass


def plan(task: PddlTask, *, time_limit_s: float = 10.0, search: str = "astar") -> PlanResult:
    """A plan for ``task`` with pyperplan, or :class:`PddlError` (time limit, unsolvable)."""
    if search not in SEARCHES:
        raise PddlError(f"unknown search {search!r}; expected one of {', '.join(SEARCHES)}")
    start = time.monotonic()
    return solve(task, ground(task), time_limit_s=time_limit_s, search=search, start=start)


def solve(task: PddlTask, ground_task: Any, *, time_limit_s: float = 10.0, search: str = "astar",
          start: float | None = None) -> PlanResult:
    """:func:`plan` on a task grounded already (:func:`ground`)."""
    start = time.monotonic() if start is None else start
    deadline = start + time_limit_s
    expanded = 0
    successors = ground_task.get_successor_states

    def timed_successors(state):
        nonlocal expanded
        expanded += 1
        if time.monotonic() > deadline:
            raise _Timeout
        return successors(state)

    ground_task.get_successor_states = timed_successors  # instance attribute shadows the method
    try:
        solution = _run_search(ground_task, search)
    except _Timeout:
        del ground_task.get_successor_states
        raise PddlError(f"no plan found within the time limit of {time_limit_s:g} s "
                        f"({expanded} states expanded)", source=task.problem_source) from None
    del ground_task.get_successor_states
    if solution is None:
        raise PddlError(_unsolvable_reason(ground_task, expanded), source=task.problem_source)
    actions = [_ground_action(op.name) for op in solution]
    return PlanResult(actions, search, expanded, time.monotonic() - start)


def ground(task: PddlTask, *, relevant_only: bool = True) -> Any:
    """The task grounded by pyperplan (its ``Task``: operators, initial state, goals).
    ``relevant_only``: drop the operators that cannot help reach the goal (pyperplan's
    relevance analysis; a planner that must also keep constraints needs them all)."""
    from pyperplan import grounding
    from pyperplan.pddl.parser import Parser
    parser = Parser(None, None)
    try:
        parser.domInput = task.domain_text
        dom = parser.parse_domain(read_from_file=False)
        parser.probInput = task.problem_text
        prob = parser.parse_problem(dom, read_from_file=False)
    except Exception as exc:  # noqa: BLE001 - pyperplan raises bare exceptions of many kinds
        raise PddlError(f"the planner (pyperplan) cannot read the task: {type(exc).__name__}: {_cleanup(str(exc))}",
                        source=task.domain_source) from None
    _check_grounding_size(prob)
    try:
        return grounding.ground(prob, remove_irrelevant_operators=relevant_only)
    except Exception as exc:  # noqa: BLE001
        raise PddlError(f"the planner (pyperplan) cannot ground the task: {_cleanup(str(exc))}",
                        source=task.problem_source) from None


def _run_search(task: Any, search: str) -> Any:
    from pyperplan import search as s
    from pyperplan.heuristics.relaxation import hFFHeuristic, hMaxHeuristic
    if search == "bfs":
        return s.breadth_first_search(task)
    if search == "gbf":
        return s.greedy_best_first_search(task, hFFHeuristic(task))
    return s.astar_search(task, hMaxHeuristic(task))


def _check_grounding_size(prob: Any) -> None:
    by_type: dict[str, int] = {}
    objs = {**prob.objects, **prob.domain.constants}
    for _, t in objs.items():
        cur, seen = t, set()
        while cur is not None and cur.name not in seen:
            by_type[cur.name] = by_type.get(cur.name, 0) + 1
            seen.add(cur.name)
            cur = cur.parent
    total = 0
    for a in prob.domain.actions.values():
        n = 1
        for _, types in a.signature:
            n *= max(1, sum(by_type.get(t.name, 0) for t in types))
        total += n
        if total > MAX_GROUND_ACTIONS:
            raise PddlError(f"the problem has too many ground actions (over {MAX_GROUND_ACTIONS}; "
                            f"action {a.name} alone has {n}); use fewer objects")


def _unsolvable_reason(task: Any, expanded: int) -> str:
    reached = set(task.initial_state)
    changed = True
    while changed:            # relaxed reachability: ignore delete effects
        changed = False
        for op in task.operators:
            if op.preconditions <= reached and not op.add_effects <= reached:
                reached |= op.add_effects
                changed = True
    never = sorted(task.goals - reached)
    if never:
        return (f"the problem is unsolvable: no action sequence can make {', '.join(never)} true "
                "(check the initial state and the action effects)")
    return (f"the problem is unsolvable: every goal fact can be reached on its own, but no action sequence "
            f"reaches them all together ({expanded} states explored)")


def ground_action(name: str) -> GroundAction:
    """A pyperplan operator name, ``(approach start counter)``, as a :class:`GroundAction`."""
    return _ground_action(name)


def _ground_action(name: str) -> GroundAction:
    parts = name.strip("() ").split()
    return GroundAction(parts[0], tuple(parts[1:]))


def format_plan(actions: Iterable[GroundAction]) -> str:
    return "\n".join(str(a) for a in actions)

