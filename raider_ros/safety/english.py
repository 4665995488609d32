"""Formulas read back in English, so a person can check what the robot will enforce (ROS-free).

The sentences are data (``data/safety/english.yaml``): one pair per predicate (when it holds,
when it does not), whole-formula patterns for the common constraint shapes (never, always,
whenever, response, before, at most once, ...) and a general reading operator by operator.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from raider_ros.common.paths import data_dir
from raider_ros.common.yamlfile import read_yaml_mapping

from .ltl import Atom, Binary, Const, Formula, LTLError, Not, Unary, parse

_ID = re.compile(r"^[A-Z][A-Za-z0-9]*_\d+$")


@lru_cache(maxsize=4)
def load_templates(path: str | None = None) -> dict[str, Any]:
    doc, _ = read_yaml_mapping(path or data_dir() / "safety" / "english.yaml", what="English templates",
                               error=LTLError)
    for key in ("predicates", "proposition", "arguments", "patterns", "operators"):
        if key not in doc:
            raise LTLError(f"English templates: missing {key!r}")
    return doc


def _arg(text: str, t: dict) -> str:
    if text.lower() in ("robot", "agent"):
        return t["arguments"]["robot"]
    if _ID.match(text):
        return text
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text).replace("_", " ").lower()
    return f"{t['arguments']['article']} {words}"


def _atom(a: Atom, positive: bool, t: dict) -> str:
    key = f"{a.name}/{len(a.args)}" if f"{a.name}/{len(a.args)}" in t["predicates"] else a.name
    pair = t["predicates"].get(key)
    if pair is None:
        pair = t["proposition"]
        return pair["pos" if positive else "neg"].format(name=str(a))
    return pair["pos" if positive else "neg"].format(*[_arg(x, t) for x in a.args])


def _clause(f: Formula, t: dict, top: bool = False) -> str:
    ops = t["operators"]
    if isinstance(f, Const):
        return ops["true" if f.value else "false"]
    if isinstance(f, Atom):
        return _atom(f, True, t)
    if isinstance(f, Not):
        if isinstance(f.f, Atom):
            return _atom(f.f, False, t)
        return ops["not"].format(a=_group(f.f, t))
    if isinstance(f, Unary):
        return ops[f.op].format(a=_group(f.f, t))
    if isinstance(f, Binary):
        name = {"&": "and", "|": "or", "->": "implies", "<->": "iff"}.get(f.op, f.op)
        return ops[name].format(a=_group(f.left, t), b=_group(f.right, t))
    raise TypeError(f"not a formula: {f!r}")


def _group(f: Formula, t: dict) -> str:
    s = _clause(f, t)
    simple = isinstance(f, (Atom, Const)) or (isinstance(f, Not) and isinstance(f.f, Atom))
    return s if simple else t["operators"]["group"].format(a=s)


def _is(f: Formula, cls, op: str | None = None) -> bool:
    return isinstance(f, cls) and (op is None or f.op == op)


def _pattern(f: Formula, t: dict) -> str | None:
    p = t["patterns"]
    c = lambda g: _clause(g, t)  # noqa: E731
    if _is(f, Unary, "G"):
        g = f.f
        if isinstance(g, Not):
            return p["never"].format(a=c(g.f))
        if _is(g, Binary, "->"):
            a, b = g.left, g.right
            if _is(b, Unary, "F"):
                return p["response"].format(a=c(a), b=c(b.f))
            if _is(b, Unary, "G") and isinstance(b.f, Not):
                return p["after_never"].format(a=c(a), b=c(b.f.f))
            return p["whenever"].format(a=c(a), b=c(b))
        return p["always"].format(a=c(g))
    if _is(f, Binary, "U") and isinstance(f.left, Not):
        return p["before"].format(a=c(f.right), b=c(f.left.f))
    if isinstance(f, Not) and _is(f.f, Unary, "F") and _is(f.f.f, Binary, "&"):
        a, rest = f.f.f.left, f.f.f.right
        if _is(rest, Unary, "X") and _is(rest.f, Unary, "F") and rest.f.f == a:
            return p["at_most_once"].format(a=c(a))
        if _is(rest, Unary, "F") and _is(rest.f, Binary, "&") and rest.f.left == Not(a) \
                and _is(rest.f.right, Unary, "F") and rest.f.right.f == a:
            return p["one_stretch"].format(a=c(a))
    if _is(f, Unary, "F"):
        return p["eventually"].format(a=c(f.f))
    return None


def to_english(f: Formula | str, templates: dict | None = None) -> str:
    """The formula in plain English (a common shape as one sentence, otherwise operator by
    operator with parentheses for grouping)."""
    if isinstance(f, str):
        f = parse(f)
    t = templates or load_templates()
    s = _pattern(f, t)
    if s is None:
        s = _clause(f, t)
        s = s[0].upper() + s[1:] + "."
    else:
        s = s[0].upper() + s[1:]
    return s
