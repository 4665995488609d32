"""Recovery plans: turn the plan text an LLM (or the rules planner) wrote into checked steps.

A recovery plan is written as Python-looking calls (paper §3.5, Fig. 7)::

    item = ask("Which medicine should I pick, Medicine_1 or Medicine_2?"), pick(item)

The text is untrusted. It is parsed with :mod:`ast` (``ast.parse`` builds a syntax tree and
runs nothing) and *interpreted* against a whitelist; nothing is ever executed. A statement is
either a call of a known action whose arguments are plain names or string literals, or
``name = ask("question")``. Everything else is rejected with a :class:`PlanError` that says
which statement and why.

Where the code is taken from: the first ``` fence if there is one; else the text after the
last "corrective actions:" marker; else, in free prose, the lines that look like statements
(calls, assignments, or Python statement keywords, which are kept so they get rejected).
Statements are separated by commas, semicolons or new lines at bracket depth 0.

Bare names in arguments: a name assigned earlier by ``ask`` is a :class:`Var` (its value is
the answer, known at run time); any other name is a :class:`Literal` naming an object or a
location (``pick(knife)``, ``move_to(free_table)``). With ``known_names`` given, a bare name
outside that set (and outside ``free_table``/``current_loc``) is rejected as undefined.
"""
from __future__ import annotations

import ast
import io
import json
import keyword
import re
import tokenize
import warnings
from dataclasses import dataclass
from typing import Iterable, Mapping, Union

# action -> number of arguments (paper Fig. 7, plus handover for the assistive plan)
ACTIONS: dict[str, int] = {
    "ask": 1, "say": 1, "move_to": 1, "pick": 1, "place": 1, "open": 1, "close": 1,
    "turn_on": 1, "turn_off": 1, "slice": 1, "handover": 2,
}
ARG_NAMES: dict[str, tuple[str, ...]] = {
    "ask": ("question",), "say": ("statement",), "move_to": ("location",), "pick": ("object",),
    "place": ("location",), "open": ("object",), "close": ("object",), "turn_on": ("object",),
    "turn_off": ("object",), "slice": ("object",), "handover": ("object", "person"),
}
# spellings an LLM is likely to use for the same action
ALIASES: dict[str, str] = {
    "turnon": "turn_on", "turnoff": "turn_off", "switch_on": "turn_on", "switch_off": "turn_off",
    "moveto": "move_to", "go_to": "move_to", "goto": "move_to", "approach": "move_to",
    "hand_over": "handover", "give": "handover",
}
INTERACTION_ACTIONS = frozenset({"ask", "say"})
SKILL_ACTIONS = frozenset(ACTIONS) - INTERACTION_ACTIONS
PLACEHOLDER_NAMES = frozenset({"free_table", "current_loc"})

MAX_CHARS = 20_000        # plan text longer than this is refused before any parsing
MAX_STATEMENTS = 40
MAX_DEPTH = 8             # bracket nesting; a flat plan needs 1
MAX_LITERAL = 500         # characters in one string argument

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_MARKER = re.compile(r"corrective\s+actions\s*:", re.I)
_LIST_MARK = re.compile(r"^\s*(?:[-*\u2022]\s+|\d{1,3}[.)]\s+|step\s*\d{1,3}\s*[:.)-]\s*)", re.I)
_CODE_LINE = re.compile(
    r"^\s*(?:"
    r"(?:[A-Za-z_]\w*\s*=\s*)?[A-Za-z_][\w.]*(?:\[[^\]]*\][\w.]*)*\s*\("  # call, or name = call(
    r"|[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_]\w*)*\s*(?:\[[^\]]*\]\s*)?[-+*/%&|^@]?=[^=]"  # assignments
    r"|[A-Za-z_]\w*\s*:\s*[A-Za-z_][\w.]*\s*="             # annotated assignment
    r"|@"                                                 # decorator
    r"|(?:import|from|for|while|def|class|with|lambda|if|elif|else|try|except|finally|"
    r"return|del|global|nonlocal|raise|assert|async|await|yield|exec|print)\b"
    r")"
)
_STATEMENT_KEYWORDS = {
    "import": "imports are not allowed",
    "from": "imports are not allowed",
    "for": "loops (for) are not allowed; write each step out",
    "while": "loops (while) are not allowed; write each step out",
    "async": "async statements are not allowed",
    "def": "function definitions are not allowed",
    "class": "class definitions are not allowed",
    "lambda": "lambdas are not allowed",
    "with": "'with' blocks are not allowed",
    "if": "conditionals (if) are not allowed; the plan is a flat list of steps",
    "elif": "conditionals (if) are not allowed; the plan is a flat list of steps",
    "else": "conditionals (if/else) are not allowed; the plan is a flat list of steps",
    "try": "try/except is not allowed",
    "except": "try/except is not allowed",
    "finally": "try/finally is not allowed",
    "global": "global declarations are not allowed",
    "nonlocal": "nonlocal declarations are not allowed",
    "del": "del statements are not allowed",
    "return": "return statements are not allowed",
    "yield": "yield is not allowed",
    "raise": "raise statements are not allowed",
    "assert": "assert statements are not allowed",
    "await": "await is not allowed",
}
_OPEN, _CLOSE = "([{", ")]}"


class PlanError(ValueError):
    """A plan text that is not a valid recovery plan; ``reason`` says why."""

    def __init__(self, reason: str, *, statement: int | None = None, source: str | None = None):
        self.reason = reason
        self.statement = statement          # 1-based statement number, when one is to blame
        self.source = source                # that statement's text (shortened)
        where = ""
        if statement is not None:
            where = f"statement {statement}"
            if source:
                where += f" `{_short(source)}`"
            where += ": "
        super().__init__(where + reason)


@dataclass(frozen=True)
class Literal:
    value: str


@dataclass(frozen=True)
class Var:
    name: str


Arg = Union[Literal, Var]


@dataclass(frozen=True)
class PlanStep:
    action: str
    args: tuple[Arg, ...]
    binds: str | None = None         # variable that receives ask()'s answer

    def resolve(self, bindings: Mapping[str, str]) -> list[str]:
        """The argument values, variables replaced by their answers."""
        out = []
        for a in self.args:
            if isinstance(a, Var):
                if a.name not in bindings:
                    raise PlanError(f"variable {a.name!r} has no value (its ask() got no answer)")
                out.append(bindings[a.name])
            else:
                out.append(a.value)
        return out

    def to_code(self, variables: Iterable[str] = ()) -> str:
        names = set(variables)
        parts = []
        for a in self.args:
            if isinstance(a, Var):
                parts.append(a.name)
            elif (self.action not in INTERACTION_ACTIONS and a.value.isidentifier()
                  and not keyword.iskeyword(a.value) and a.value not in names and not a.value.startswith("__")
                  and not a.value.endswith("__")):
                parts.append(a.value)
            else:
                parts.append(json.dumps(a.value, ensure_ascii=False))
        call = f"{self.action}({', '.join(parts)})"
        return f"{self.binds} = {call}" if self.binds else call


@dataclass(frozen=True)
class Plan:
    steps: tuple[PlanStep, ...]
    raw_text: str = ""

    @property
    def variables(self) -> list[str]:
        return [s.binds for s in self.steps if s.binds]

    def to_code(self) -> str:
        """One statement a line; parsing it again gives the same steps."""
        return "\n".join(s.to_code(self.variables) for s in self.steps)

    def __len__(self) -> int:
        return len(self.steps)


# --------------------------------------------------------------------------- extraction
def extract_code(text: str) -> tuple[str, bool]:
    """The part of ``text`` that holds the plan, and whether it is explicitly code (fenced
    or after a "corrective actions:" marker; then every line must be a statement)."""
    fence = _FENCE.search(text)
    if fence:
        return fence.group(2), True
    markers = list(_MARKER.finditer(text))
    if markers:
        return text[markers[-1].end():], True
    return text, False


def _strip_lines(code: str) -> list[str]:
    """Lines without list marks ("1.", "-", "Step 2:") and without a pair of backticks
    around the whole line."""
    out = []
    for line in code.splitlines():
        line = _LIST_MARK.sub("", line, count=1).strip()
        if len(line) > 1 and line.startswith("`") and line.endswith("`") and "`" not in line[1:-1]:
            line = line[1:-1].strip()
        out.append(line)
    return out


def _select_code_lines(lines: list[str]) -> list[str]:
    """In prose, keep the lines that look like statements, with the continuation lines of a
    statement whose brackets are still open."""
    kept: list[str] = []
    depth = 0
    for line in lines:
        if depth > 0 or _CODE_LINE.match(line):
            kept.append(line)
            depth = max(0, depth + _bracket_balance(line))
    return kept


def _bracket_balance(line: str) -> int:
    """Open minus closed brackets outside simple string literals (a heuristic for prose)."""
    bal, quote, i = 0, "", 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == "#":
            break
        elif c in _OPEN:
            bal += 1
        elif c in _CLOSE:
            bal -= 1
        i += 1
    return bal


# --------------------------------------------------------------------------- splitting
def _split_statements(code: str) -> list[str]:
    """Split at commas, semicolons and line ends outside brackets (tokenizer based, so
    brackets and separators inside strings do not count)."""
    line_starts = [0]
    for line in code.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))

    def offset(pos: tuple[int, int]) -> int:
        return line_starts[pos[0] - 1] + pos[1]

    chunks: list[str] = []
    start = end = None
    depth = 0
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENCODING, tokenize.ENDMARKER}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type in skip:
                continue
            if tok.type == tokenize.ERRORTOKEN:
                if tok.string.strip() == "":
                    continue
                what = "an unterminated string" if tok.string in "\"'" else f"the stray character {tok.string!r}"
                raise PlanError(f"not valid plan syntax: {what} on line {tok.start[0]}")
            boundary = tok.type == tokenize.NEWLINE or (
                tok.type == tokenize.OP and depth == 0 and tok.string in ",;")
            if boundary:
                if start is not None:
                    chunks.append(code[start:end])
                    if len(chunks) > MAX_STATEMENTS:
                        raise PlanError(f"too many statements (more than {MAX_STATEMENTS})")
                start = end = None
                continue
            if tok.type == tokenize.OP:
                if tok.string in _OPEN:
                    depth += 1
                    if depth > MAX_DEPTH:
                        raise PlanError(f"brackets nested more than {MAX_DEPTH} deep (line {tok.start[0]})")
                elif tok.string in _CLOSE:
                    if depth == 0:
                        raise PlanError(f"not valid plan syntax: {tok.string!r} on line {tok.start[0]} closes no "
                                        "bracket (one closing bracket too many)")
                    depth -= 1
            if start is None:
                start = offset(tok.start)
            end = offset(tok.end)
    except PlanError:
        raise
    except tokenize.TokenError as exc:
        msg = exc.args[0] if exc.args else "incomplete input"
        if "statement" in str(msg):
            msg = "a bracket is never closed"
        raise PlanError(f"not valid plan syntax: {msg}") from None
    except (SyntaxError, ValueError) as exc:  # IndentationError, bad characters
        raise PlanError(f"not valid plan syntax: {_exc_text(exc)}") from None
    if start is not None:
        chunks.append(code[start:end])
    if len(chunks) > MAX_STATEMENTS:
        raise PlanError(f"too many statements (more than {MAX_STATEMENTS})")
    return chunks


# --------------------------------------------------------------------------- parsing
def parse_plan(text: str, *, known_names: Iterable[str] | None = None,
               max_chars: int = MAX_CHARS) -> Plan:
    """Parse and check a recovery plan; raise :class:`PlanError` naming what is wrong.

    ``known_names``: object, person and location names a bare name may refer to; when
    given, other bare names (that are not variables) are rejected as undefined.
    """
    if not isinstance(text, str):
        raise PlanError(f"the plan must be text, got {type(text).__name__}")
    if len(text) > max_chars:
        raise PlanError(f"the plan text is too long ({len(text)} characters; the limit is {max_chars})")
    if "\x00" in text:
        raise PlanError("the plan text contains a NUL character")
    code, explicit = extract_code(text)
    lines = _strip_lines(code)
    if not explicit:
        lines = _select_code_lines(lines)
    if not any(lines):
        raise PlanError("no plan statements found in the text")
    chunks = _split_statements("\n".join(lines) + "\n")
    if not chunks:
        raise PlanError("no plan statements found in the text")

    trees = [(_parse_chunk(c, i), c) for i, c in enumerate(chunks, 1)]
    # every name some ask() assigns, so "used before assignment" can be told from a literal
    assigned_anywhere = {t.targets[0].id for t, _ in trees
                         if isinstance(t, ast.Assign) and len(t.targets) == 1
                         and isinstance(t.targets[0], ast.Name)}
    known = None
    if known_names is not None:
        known = {n.lower() for n in known_names} | PLACEHOLDER_NAMES
    bound: set[str] = set()
    steps = []
    for i, (tree, src) in enumerate(trees, 1):
        try:
            step = _interpret(tree, bound, assigned_anywhere, known)
        except PlanError as exc:
            raise PlanError(exc.reason, statement=i, source=src) from None
        if step.binds:
            bound.add(step.binds)
        steps.append(step)
    return Plan(tuple(steps), raw_text=text)


def _parse_chunk(chunk: str, index: int) -> ast.stmt:
    first = chunk.split(None, 1)[0] if chunk.split() else ""
    word = re.match(r"[A-Za-z_]\w*|@", first)
    if word:
        w = word.group(0)
        if w == "@":
            raise PlanError("decorators are not allowed", statement=index, source=chunk)
        if w in _STATEMENT_KEYWORDS:
            raise PlanError(_STATEMENT_KEYWORDS[w], statement=index, source=chunk)
    try:
        with warnings.catch_warnings():          # untrusted text: no SyntaxWarning on stderr
            warnings.simplefilter("ignore")
            module = ast.parse(chunk, mode="exec")   # builds a tree only; nothing runs
    except (SyntaxError, ValueError) as exc:
        raise PlanError(f"not valid plan syntax: {_exc_text(exc)}", statement=index, source=chunk) from None
    except (RecursionError, MemoryError):
        raise PlanError("the statement is nested too deeply to read", statement=index, source=chunk) from None
    if len(module.body) != 1:
        raise PlanError("expected exactly one statement", statement=index, source=chunk)
    return module.body[0]


def _interpret(node: ast.stmt, bound: set[str], assigned_anywhere: set[str],
               known: set[str] | None) -> PlanStep:
    if isinstance(node, ast.Expr):
        call = node.value
        if not isinstance(call, ast.Call):
            raise PlanError("a statement must be a call of an action, e.g. pick(apple); "
                            f"got {_describe(call)}")
        action = _action_name(call)
        return PlanStep(action, _args(action, call, bound, assigned_anywhere, known))
    if isinstance(node, ast.Assign):
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            raise PlanError("only the form name = ask(\"question\") may assign")
        var = node.targets[0].id
        _check_identifier(var, "variable name")
        if _canonical(var) in ACTIONS:
            raise PlanError(f"variable name {var!r} is an action name")
        if not isinstance(node.value, ast.Call):
            raise PlanError(f"only ask() returns a value; got {_describe(node.value)} on the right of '='")
        action = _action_name(node.value)
        if action != "ask":
            raise PlanError(f"only ask() returns a value; {action}() cannot be assigned to a variable")
        return PlanStep(action, _args(action, node.value, bound, assigned_anywhere, known), binds=var)
    raise PlanError(_statement_reason(node))


def _action_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        _check_identifier(func.id, "function name")
        name = _canonical(func.id)
        if name not in ACTIONS:
            raise PlanError(f"unknown action {func.id!r}; the actions are {', '.join(ACTIONS)}")
        return name
    if isinstance(func, ast.Attribute):
        text = _attr_text(func)
        dunder = "dunder access and " if "__" in text else ""
        raise PlanError(f"{dunder}attribute calls ({text}(...)) are not allowed; call actions by name")
    raise PlanError(f"only actions may be called; got a call of {_describe(func)}")


def _args(action: str, call: ast.Call, bound: set[str], assigned_anywhere: set[str],
          known: set[str] | None) -> tuple[Arg, ...]:
    if call.keywords:
        kw = call.keywords[0]
        what = f"{kw.arg}=" if kw.arg else "**"
        raise PlanError(f"keyword arguments ({what}...) are not supported; pass the arguments in order")
    n = ACTIONS[action]
    if len(call.args) != n:
        names = ", ".join(ARG_NAMES[action])
        raise PlanError(f"{action}() takes {n} argument{'s' if n > 1 else ''} ({names}), got {len(call.args)}")
    out: list[Arg] = []
    for pos, a in enumerate(call.args):
        label = f"argument {pos + 1} of {action}()"
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            value = a.value.strip()
            if not value:
                raise PlanError(f"{label} is an empty string")
            if len(value) > MAX_LITERAL:
                raise PlanError(f"{label} is too long ({len(value)} characters; the limit is {MAX_LITERAL})")
            out.append(Literal(value))
        elif isinstance(a, ast.Name):
            _check_identifier(a.id, label)
            if action == "ask":
                raise PlanError("ask() takes the question as a string literal, e.g. ask(\"Where is the knife?\")")
            if a.id in bound:
                out.append(Var(a.id))
            elif a.id in assigned_anywhere:
                raise PlanError(f"variable {a.id!r} is used before ask() assigns it")
            elif known is not None and a.id.lower() not in known:
                raise PlanError(f"undefined name {a.id!r}: not a variable assigned by ask() "
                                "and not a known object, person or location")
            else:
                out.append(Literal(a.id))
        else:
            raise PlanError(f"{label} must be a name or a string literal; got {_describe(a)}")
    return tuple(out)


def _canonical(name: str) -> str:
    low = name.lower()
    return ALIASES.get(low, low)


def _check_identifier(name: str, what: str) -> None:
    if name.startswith("__") or name.endswith("__"):
        raise PlanError(f"dunder names ({name}) are not allowed as {what}")


# --------------------------------------------------------------------------- reasons
def _statement_reason(node: ast.stmt) -> str:
    kinds = {
        ast.Import: "imports are not allowed", ast.ImportFrom: "imports are not allowed",
        ast.For: "loops (for) are not allowed", ast.AsyncFor: "loops (for) are not allowed",
        ast.While: "loops (while) are not allowed",
        ast.FunctionDef: "function definitions are not allowed",
        ast.AsyncFunctionDef: "function definitions are not allowed",
        ast.ClassDef: "class definitions are not allowed",
        ast.If: "conditionals (if) are not allowed", ast.With: "'with' blocks are not allowed",
        ast.Try: "try/except is not allowed", ast.AugAssign: "only the form name = ask(\"question\") may assign",
        ast.AnnAssign: "annotated assignments are not allowed", ast.Delete: "del statements are not allowed",
        ast.Return: "return statements are not allowed", ast.Raise: "raise statements are not allowed",
        ast.Assert: "assert statements are not allowed", ast.Global: "global declarations are not allowed",
        ast.Nonlocal: "nonlocal declarations are not allowed", ast.Pass: "pass is not a plan step",
        ast.Break: "break is not a plan step", ast.Continue: "continue is not a plan step",
    }
    for k, reason in kinds.items():
        if isinstance(node, k):
            return reason
    return f"{type(node).__name__} statements are not allowed"


def _describe(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        text = _attr_text(node)
        if "__" in text:
            return f"a dunder attribute access ({text}), which is not allowed"
        return f"an attribute access ({text}), which is not allowed"
    if isinstance(node, ast.Subscript):
        return "a subscript (x[...]), which is not allowed"
    if isinstance(node, ast.Call):
        return "a nested call, which is not allowed (assign ask() to a variable first)"
    if isinstance(node, ast.Lambda):
        return "a lambda, which is not allowed"
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return "a comprehension, which is not allowed"
    if isinstance(node, ast.JoinedStr):
        return "an f-string, which is not allowed (use a plain string)"
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or node.value is None:
            return f"the constant {node.value!r}, which is not allowed"
        if isinstance(node.value, (int, float, complex)):
            return f"the number {node.value!r}, which is not allowed (write it inside a string)"
        if isinstance(node.value, bytes):
            return "a bytes literal, which is not allowed"
        return "an Ellipsis, which is not allowed"
    if isinstance(node, ast.Starred):
        return "a starred argument (*x), which is not allowed"
    if isinstance(node, ast.Name):
        return f"the bare name {node.id!r}"
    if isinstance(node, (ast.NamedExpr,)):
        return "an assignment expression (:=), which is not allowed"
    return f"a {type(node).__name__} expression, which is not allowed"


def _attr_text(node: ast.Attribute) -> str:
    parts = [node.attr]
    cur: ast.AST = node.value
    for _ in range(5):
        if isinstance(cur, ast.Attribute):
            parts.append(cur.attr)
            cur = cur.value
        else:
            break
    if isinstance(cur, ast.Name):
        parts.append(cur.id)
    elif isinstance(cur, ast.Call) and isinstance(cur.func, ast.Name):
        parts.append(f"{cur.func.id}(...)")
    else:
        parts.append("(...)")
    return ".".join(reversed(parts))


def _exc_text(exc: BaseException) -> str:
    msg = getattr(exc, "msg", None) or (exc.args[0] if exc.args else type(exc).__name__)
    return str(msg)


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def plan_steps(plan: Plan) -> list[tuple[str, list[tuple[str, bool]]]]:
    """A plan's steps as (action, [(argument text or variable name, is a variable)])."""
    return [(s.action, [(a.name, True) if isinstance(a, Var) else (str(a.value), False) for a in s.args])
            for s in plan.steps]
