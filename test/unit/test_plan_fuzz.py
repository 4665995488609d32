"""Fuzzing the recovery-plan interpreter: 10,000 generated inputs, no crash (only PlanError),
nothing executed, every rejection with a reason, every accepted plan made of known actions
with literal/variable arguments that survives a round trip."""
from __future__ import annotations

import ast
import builtins
import sys
import types

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raider_ros.recovery.plan import ACTIONS, Literal, Plan, PlanError, Var, parse_plan

# A module that would count a call if generated code were ever run.
SENTINEL = types.ModuleType("raider_fuzz_sentinel")
SENTINEL.fired = 0


def _fire(*_a, **_k):
    SENTINEL.fired += 1


SENTINEL.fire = _fire

# Building blocks of the structured snippets. A snippet is assembled with a hypothesis-seeded
# random.Random (one draw per example), which keeps 10,000 examples fast.
NAMES = [
    "pick", "place", "ask", "say", "move_to", "handover", "open", "slice", "turnon", "Pick",
    "print", "exec", "eval", "compile", "getattr", "__import__", "os", "system", "x", "item",
    "knife_loc", "free_table", "current_loc", "Apple_1", "__class__", "__builtins__", "lambda_",
]
ATOMS = [
    '"Which one?"', "'the apple'", '""', "f'{x}'", "b'x'", "1", "3.5", "None", "True", "...",
    "'''tri'''", '"a" "b"', "x.y", "x.__class__", "x[0]", "x[1:2]", "*x", "**x", "lambda: 0",
    "[a for a in b]", "{a: b}", "(a, b)", "-1", "not x", "a if b else c", "(y := 1)", "await x",
    "yield", "__import__('raider_fuzz_sentinel').fire()", "'unterminated", "a + b", "x.__dict__['k']",
    "getattr(__import__('raider_fuzz_sentinel'), 'fire')()", "{x for x in y}", "(a for a in b)",
]
STATEMENTS = [
    "{e}", "{e}", "{e}", "{e}", "{v} = {e}", "{v} = ask({a})", "import {v}", "from os import {v}",
    "for {v} in {e}:\n    {e}", "while {e}:\n    {e}", "@{v}\ndef f():\n    {e}",
    "with {e} as {v}:\n    {e}", "if {e}:\n    {e}", "{v} += {e}", "del {v}", "class C({v}): pass",
    "__import__('raider_fuzz_sentinel').fire()", "try:\n    {e}\nexcept: pass", "{e}; {e}",
]
WRAPS = [
    "{body}",
    "Here is the plan:\n```python\n{body}\n```\nThat is all.",
    "query: pick(x), issue: ambiguity\ncorrective actions:\n{body}",
    "Sure! I'll fix it.\n{body}\nLet me know.",
]


def _atom(r):
    k = r.random()
    if k < 0.35:
        return r.choice(NAMES)
    if k < 0.5:
        return repr("".join(r.choice("abcXYZ _'\"\\{}()") for _ in range(r.randint(0, 10))))
    return r.choice(ATOMS)


def _expr(r, depth=0):
    if depth > 2 or r.random() < 0.45:
        return _atom(r)
    args = ", ".join(_expr(r, depth + 1) for _ in range(r.randint(0, 3)))
    kw = r.choice(["", "", "", ", object=x", ", **k"]) if args else ""
    return f"{r.choice(NAMES)}({args}{kw})"


def _near_valid(r):
    """A plan of well-formed steps, sometimes with one bad statement slipped in."""
    acts = ["pick", "place", "move_to", "open", "close", "turn_on", "turn_off", "slice", "handover", "say",
            "turnon", "Place"]
    lines, variables = [], []
    for _ in range(r.randint(1, 8)):
        k = r.random()
        if k < 0.25:
            v = r.choice(["item", "loc", "who", "x", "knife_loc"])
            lines.append(f'{v} = ask({r.choice(ATOMS[:3])})')
            variables.append(v)
        else:
            act = r.choice(acts)
            n = 2 if act == "handover" else 1
            pool = ["Apple_1", "free_table", "current_loc", "'the red mug'", '"Person 1"', *variables]
            lines.append(f"{act}({', '.join(r.choice(pool) for _ in range(n))})")
    if r.random() < 0.3:
        lines.insert(r.randrange(len(lines) + 1), r.choice(STATEMENTS).replace("{e}", _expr(r))
                     .replace("{v}", r.choice(NAMES)).replace("{a}", _atom(r)))
    body = r.choice(["\n", ", ", "; "]).join(lines)
    return r.choice(WRAPS).replace("{body}", body)


def _snippet(r):
    stmts = [r.choice(STATEMENTS).replace("{e}", _expr(r)).replace("{v}", r.choice(NAMES)).replace("{a}", _atom(r))
             for _ in range(r.randint(0, 6))]
    body = r.choice(["\n", ", ", "; ", ",\n"]).join(stmts)
    if r.random() < 0.2:   # a numbered list
        body = "\n".join(f"{i}. {line}" for i, line in enumerate(body.splitlines(), 1))
    return r.choice(WRAPS).replace("{body}", body)


INPUTS = st.one_of(
    st.randoms(use_true_random=False).map(_snippet),
    st.randoms(use_true_random=False).map(_near_valid),
    st.text(max_size=200),
    st.text(alphabet='pickaseyorm_()=,"\' \n\\x:.[]{}#@0123456789', max_size=120),
)


class Guard:
    """While active, exec/eval record any call, and compile records any call that would build
    code: the interpreter may only build syntax trees (ast.parse passes PyCF_ONLY_AST).
    Active only around parse_plan, since hypothesis itself uses exec."""

    def __init__(self):
        self.calls: list[str] = []
        self._real = (builtins.exec, builtins.eval, builtins.compile)

    def _no_exec(self, *a, **k):
        self.calls.append("exec/eval")
        raise AssertionError("exec/eval called")

    def _compile(self, source, filename, mode, flags=0, *a, **k):
        if not flags & ast.PyCF_ONLY_AST:
            self.calls.append("compile")
            raise AssertionError("compile to code called")
        return self._real[2](source, filename, mode, flags, *a, **k)

    def __enter__(self):
        builtins.exec, builtins.eval, builtins.compile = self._no_exec, self._no_exec, self._compile
        return self

    def __exit__(self, *exc):
        builtins.exec, builtins.eval, builtins.compile = self._real
        return False


@pytest.fixture
def guarded(monkeypatch):
    monkeypatch.setitem(sys.modules, "raider_fuzz_sentinel", SENTINEL)
    SENTINEL.fired = 0
    g = Guard()
    yield g
    assert SENTINEL.fired == 0, "generated code was executed"
    assert g.calls == []


def _check_plan(p: Plan) -> None:
    assert p.steps
    bound = set()
    for s in p.steps:
        assert s.action in ACTIONS
        assert len(s.args) == ACTIONS[s.action]
        for a in s.args:
            assert isinstance(a, (Literal, Var))
            if isinstance(a, Var):
                assert a.name in bound
            else:
                assert isinstance(a.value, str) and a.value
        assert s.binds is None or s.action == "ask"
        if s.binds:
            bound.add(s.binds)
    again = parse_plan(p.to_code())
    assert again.steps == p.steps


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(INPUTS)
def test_fuzz_interpreter_never_crashes_or_executes(guarded, text):
    try:
        with guarded:
            plan = parse_plan(text)
    except PlanError as exc:
        assert exc.reason.strip(), "a rejection must say why"
        assert str(exc).strip()
    else:
        _check_plan(plan)
    assert guarded.calls == []
    assert SENTINEL.fired == 0
