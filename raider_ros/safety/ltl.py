"""LTL formulas with predicate atoms: syntax tree, parser, printer (ROS-free).

Syntax (the Safety Chip paper's, with predicates as atoms)::

    formula := formula '<->' formula            equivalence          (lowest, left)
             | formula '->' formula             implication          (right)
             | formula '|' formula              or                   (left)
             | formula '&' formula              and                  (left)
             | formula ('U' | 'W' | 'R') formula  until, weak until, release (right)
             | ('!' | 'X' | 'WX' | 'F' | 'G') formula                (highest, prefix)
             | '(' formula ')' | 'true' | 'false' | atom
    atom    := name | name '(' arg (',' arg)* ')'       e.g. agent_at(bathroom), handover(Medicine_2, Person_1)

Also accepted: ``~`` for ``!``, ``&&``, ``||``, ``=>``, ``<=>``; ``TRUE``/``FALSE``. Names and
arguments are letters, digits and underscores (a name starts with a letter). ``X``, ``WX``,
``F``, ``G``, ``U``, ``W``, ``R`` are reserved words.

Formulas are read over FINITE traces (LTLf, :mod:`raider_ros.safety.semantics`): ``X f`` needs
a next position (false at the last one), ``WX f`` is true at the last position;
``a W b`` = ``(a U b) | G a``; ``a R b`` = ``!(!a U !b)``.

Every error is an :class:`LTLSyntaxError` naming the column, e.g.
``column 12: expected ')' to close the '(' at column 3``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Union


class LTLError(ValueError):
    """A formula that cannot be used (syntax, unknown predicate, unsatisfiable, ...)."""


class LTLSyntaxError(LTLError):
    def __init__(self, message: str, text: str, position: int):
        self.text = text
        self.position = position           # 0-based offset into ``text``
        self.reason = message
        caret = " " * position + "^"
        super().__init__(f"column {position + 1}: {message}\n  {text}\n  {caret}")


# --------------------------------------------------------------------------- syntax tree
@dataclass(frozen=True)
class Const:
    value: bool


@dataclass(frozen=True)
class Atom:
    """A ground predicate ``name(args)`` (or a bare proposition ``name``)."""
    name: str
    args: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.name}({', '.join(self.args)})" if self.args else self.name


@dataclass(frozen=True)
class Not:
    f: "Formula"


@dataclass(frozen=True)
class Unary:
    op: str            # 'X', 'WX', 'F', 'G'
    f: "Formula"


@dataclass(frozen=True)
class Binary:
    op: str            # '&', '|', '->', '<->', 'U', 'W', 'R'
    left: "Formula"
    right: "Formula"


Formula = Union[Const, Atom, Not, Unary, Binary]

TRUE, FALSE = Const(True), Const(False)
UNARY_OPS = ("X", "WX", "F", "G")
TEMPORAL_BINARY = ("U", "W", "R")
BINARY_OPS = ("&", "|", "->", "<->", *TEMPORAL_BINARY)
# binding strength: higher binds tighter
_PREC = {"<->": 1, "->": 2, "|": 3, "&": 4, "U": 5, "W": 5, "R": 5}
_RIGHT_ASSOC = {"->", "U", "W", "R"}
_UNARY_PREC = 6


# helpers to build formulas in code ---------------------------------------------------
def conj(*fs: Formula) -> Formula:
    fs = tuple(fs)
    if not fs:
        return TRUE
    out = fs[0]
    for f in fs[1:]:
        out = Binary("&", out, f)
    return out


def disj(*fs: Formula) -> Formula:
    fs = tuple(fs)
    if not fs:
        return FALSE
    out = fs[0]
    for f in fs[1:]:
        out = Binary("|", out, f)
    return out


# --------------------------------------------------------------------------- tokens
_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<op><->|<=>|->|=>|&&|\|\||[!~&|(),])
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9][A-Za-z0-9_]*)
""", re.VERBOSE)
_CANON_OP = {"<=>": "<->", "=>": "->", "&&": "&", "||": "|", "~": "!"}
_KEYWORDS = {"X", "WX", "F", "G", "U", "W", "R"}


@dataclass(frozen=True)
class _Tok:
    kind: str     # 'op', 'name', 'number', 'end'
    text: str
    pos: int


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    i = 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if not m:
            raise LTLSyntaxError(f"unexpected character {text[i]!r}", text, i)
        kind = m.lastgroup
        if kind != "ws":
            tok = m.group()
            out.append(_Tok(kind, _CANON_OP.get(tok, tok), i))  # type: ignore[arg-type]
        i = m.end()
    out.append(_Tok("end", "", len(text)))
    return out


MAX_NESTING = 100     # brackets and prefix operators inside each other (deeper: a clear error)


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0

    def _deeper(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.fail(f"the formula is nested more than {MAX_NESTING} levels deep")

    def peek(self) -> _Tok:
        return self.toks[self.i]

    def take(self) -> _Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def fail(self, msg: str, tok: _Tok | None = None) -> LTLSyntaxError:
        tok = tok or self.peek()
        return LTLSyntaxError(msg, self.text, tok.pos)

    @staticmethod
    def _describe(tok: _Tok) -> str:
        return "the end of the formula" if tok.kind == "end" else repr(tok.text)

    def _binary_op(self, tok: _Tok) -> str | None:
        if tok.kind == "op" and tok.text in _PREC:
            return tok.text
        if tok.kind == "name" and tok.text in TEMPORAL_BINARY:
            return tok.text
        return None

    def parse(self) -> Formula:
        if self.peek().kind == "end":
            raise self.fail("empty formula")
        f = self.expr(0)
        tok = self.peek()
        if tok.kind != "end":
            if tok.text == ")":
                raise self.fail("')' without a matching '('", tok)
            raise self.fail(f"expected an operator or the end of the formula, got {self._describe(tok)}", tok)
        return f

    def expr(self, min_prec: int) -> Formula:
        left = self.unary()
        while True:
            tok = self.peek()
            op = self._binary_op(tok)
            if op is None or _PREC[op] < min_prec:
                return left
            self.take()
            nxt = _PREC[op] if op in _RIGHT_ASSOC else _PREC[op] + 1
            if self.peek().kind == "end":
                raise self.fail(f"expected a formula after {op!r}")
            right = self.expr(nxt)
            left = Binary(op, left, right)

    def unary(self) -> Formula:
        tok = self.peek()
        if tok.kind == "op" and tok.text == "!":
            self.take()
            self._need_operand("!")
            self._deeper()
            inner = self.unary()
            self.depth -= 1
            return Not(inner)
        if tok.kind == "name" and tok.text in UNARY_OPS:
            self.take()
            self._need_operand(tok.text)
            self._deeper()
            inner = self.unary()
            self.depth -= 1
            return Unary(tok.text, inner)
        return self.primary()

    def _need_operand(self, op: str) -> None:
        if self.peek().kind == "end":
            raise self.fail(f"expected a formula after {op!r}")

    def primary(self) -> Formula:
        tok = self.take()
        if tok.kind == "op" and tok.text == "(":
            self._deeper()
            inner = self.expr(0)
            self.depth -= 1
            close = self.peek()
            if close.text != ")" or close.kind != "op":
                raise self.fail(f"expected ')' to close the '(' at column {tok.pos + 1}, "
                                f"got {self._describe(close)}", close)
            self.take()
            return inner
        if tok.kind == "name":
            if tok.text in _KEYWORDS:
                raise self.fail(f"{tok.text!r} is an operator and needs an operand here", tok)
            if tok.text.lower() in ("true", "false"):
                return Const(tok.text.lower() == "true")
            if self.peek().kind == "op" and self.peek().text == "(":
                return self.arguments(tok)
            return Atom(tok.text)
        if tok.kind == "end":
            raise self.fail("expected a formula, got the end of the formula", tok)
        raise self.fail(f"expected a formula, got {self._describe(tok)}", tok)

    def arguments(self, name: _Tok) -> Atom:
        open_ = self.take()
        args: list[str] = []
        while True:
            tok = self.take()
            if tok.kind not in ("name", "number"):
                raise self.fail(f"expected an argument of {name.text}(...), got {self._describe(tok)}", tok)
            args.append(tok.text)
            sep = self.take()
            if sep.kind == "op" and sep.text == ")":
                return Atom(name.text, tuple(args))
            if not (sep.kind == "op" and sep.text == ","):
                raise self.fail(f"expected ',' or ')' in the arguments of {name.text}( at column "
                                f"{open_.pos + 1}, got {self._describe(sep)}", sep)


def parse(text: str) -> Formula:
    """Parse a formula; raises :class:`LTLSyntaxError` naming the column of the problem."""
    if not isinstance(text, str):
        raise LTLError(f"expected a formula as text, got {type(text).__name__}")
    return _Parser(text).parse()


# --------------------------------------------------------------------------- printing
def to_text(f: Formula) -> str:
    """The formula in the parser's syntax with only the parentheses it needs (its normal form:
    ``parse(to_text(f)) == f``)."""
    return _show(f, 0)


def _show(f: Formula, ctx: int) -> str:
    if isinstance(f, Const):
        return "true" if f.value else "false"
    if isinstance(f, Atom):
        return str(f)
    if isinstance(f, Not):
        s = "!" + _show(f.f, _UNARY_PREC)
        return s
    if isinstance(f, Unary):
        inner = _show(f.f, _UNARY_PREC)
        return f"{f.op} {inner}"
    if isinstance(f, Binary):
        p = _PREC[f.op]
        if f.op in _RIGHT_ASSOC:
            left, right = _show(f.left, p + 1), _show(f.right, p)
        else:
            left, right = _show(f.left, p), _show(f.right, p + 1)
        s = f"{left} {f.op} {right}"
        return f"({s})" if p < ctx else s
    raise TypeError(f"not a formula: {f!r}")


def normalise(text_or_formula: str | Formula) -> str:
    """The normal text of a formula (the cache key): parsed and printed again."""
    f = parse(text_or_formula) if isinstance(text_or_formula, str) else text_or_formula
    return to_text(f)


# --------------------------------------------------------------------------- traversal
def subformulas(f: Formula) -> Iterator[Formula]:
    yield f
    if isinstance(f, (Not, Unary)):
        yield from subformulas(f.f)
    elif isinstance(f, Binary):
        yield from subformulas(f.left)
        yield from subformulas(f.right)


def atoms(f: Formula) -> tuple[Atom, ...]:
    """The formula's atoms in order of first appearance, each once."""
    seen: dict[Atom, None] = {}
    for g in subformulas(f):
        if isinstance(g, Atom):
            seen.setdefault(g, None)
    return tuple(seen)


def rename(f: Formula, mapping: dict[Atom, Atom]) -> Formula:
    """Replace atoms (those not in ``mapping`` stay)."""
    if isinstance(f, Atom):
        return mapping.get(f, f)
    if isinstance(f, Const):
        return f
    if isinstance(f, Not):
        return Not(rename(f.f, mapping))
    if isinstance(f, Unary):
        return Unary(f.op, rename(f.f, mapping))
    if isinstance(f, Binary):
        return Binary(f.op, rename(f.left, mapping), rename(f.right, mapping))
    raise TypeError(f"not a formula: {f!r}")


def shape_key(f: Formula) -> tuple[str, tuple[Atom, ...]]:
    """(normal text with atoms renamed p0, p1, ... in order of appearance, the atoms): formulas
    that differ only in their atoms share one automaton."""
    ats = atoms(f)
    local = {a: Atom(f"p{i}") for i, a in enumerate(ats)}
    return to_text(rename(f, local)), ats


def size(f: Formula) -> int:
    return sum(1 for _ in subformulas(f))
