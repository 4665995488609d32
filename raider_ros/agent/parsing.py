"""Reading an LLM reply: tool calls, the final response and the procedure step it is in.

LLM output is untrusted text. Nothing here evaluates it: JSON goes through ``json.loads`` and,
when that fails, through :func:`loads_relaxed`, a small parser for the near-JSON that models
write (single quotes, bare keys and values as in ``call_tool{tool: x, args: [Mug_1]}``,
trailing commas, Python literals). Every function returns what it found and what it could not
read; none raises on bad input.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

ISSUES = ("none", "ambiguity", "unfeasibility")
_ISSUE_SYNONYMS = {
    "no issue": "none", "no issues": "none", "feasible": "none", "ok": "none",
    "ambiguous": "ambiguity", "unfeasible": "unfeasibility", "infeasible": "unfeasibility",
    "infeasibility": "unfeasibility", "not feasible": "unfeasibility",
}
MAX_TEXT = 100_000  # longer replies are cut before parsing (a runaway model, not a real answer)

_CALL_RE = re.compile(r"call[ _]?tool\b[\s*`:]*(?=[{(])", re.IGNORECASE)
_STEP_RE = re.compile(r"\bstep[ \t]*\d+[ \t]*[:.)\-\u2013\u2014]*[ \t]*([A-Za-z][A-Za-z &/\-]{0,40})", re.IGNORECASE)
_CAPS_RE = re.compile(r"^[\s#*>\-]*(GROUND|ASK|ANSWER|ISSUE)\b", re.MULTILINE)
_STAGE_WORDS = (
    ("ground", re.compile(r"ground", re.I)),
    ("ask", re.compile(r"\bask\b|question", re.I)),
    ("answer", re.compile(r"\banswer|information gathering|tool call|gather", re.I)),
    ("issue", re.compile(r"\bissue\b|decision|decide|final", re.I)),
)


@dataclass
class ToolCall:
    tool: str
    args: list
    raw: str = ""


@dataclass
class FinalResponse:
    issue: str                      # one of the issue ids
    explanation: str
    grounding: list[str]
    raw: str = ""
    grounding_given: bool = True    # False: the paper's format, without a "grounding" field


@dataclass
class ParsedReply:
    tool_calls: list[ToolCall] = field(default_factory=list)
    call_errors: list[str] = field(default_factory=list)   # tool calls that could not be read
    final: FinalResponse | None = None
    final_error: str | None = None                         # a final response that could not be read
    stages: list[tuple[str, str]] = field(default_factory=list)  # (stage, text under its heading)


# --------------------------------------------------------------------------- entry points
_LABEL_IN_VALUE = re.compile(r'(:\s*)(?:\*\*)?final\s+(?:response|answer)(?:\*\*)?\s*:\s*(?=["\'\u201c])', re.I)


def normalise(text: str) -> str:
    """Undo markdown escapes (``dist\\_to\\_target``), drop a "Final response:" label written
    between a JSON key and its value (``"explanation": Final response: "..."``, as in the
    paper's Appendix D), and cut runaway text."""
    text = (text or "")[:MAX_TEXT]
    text = text.replace("\\_", "_").replace("\\*", "*")
    return _LABEL_IN_VALUE.sub(r"\1", text)


def parse_reply(text: str, issue_ids: Sequence[str] = ISSUES) -> ParsedReply:
    text = normalise(text)
    calls, call_errors, spans = _find_tool_calls(text)
    masked = _mask(text, spans)
    final, final_error = _find_final(masked, issue_ids)
    return ParsedReply(calls, call_errors, final, final_error, parse_stages(text))


def parse_tool_calls(text: str) -> tuple[list[ToolCall], list[str]]:
    calls, errors, _ = _find_tool_calls(normalise(text))
    return calls, errors


def parse_final_response(text: str, issue_ids: Sequence[str] = ISSUES) -> tuple[FinalResponse | None, str | None]:
    text = normalise(text)
    _, _, spans = _find_tool_calls(text)
    return _find_final(_mask(text, spans), issue_ids)


def parse_stages(text: str) -> list[tuple[str, str]]:
    """The procedure steps a reply announces, in order, each with the text under it."""
    marks: list[tuple[int, str]] = []
    for m in _STEP_RE.finditer(text):
        stage = _classify(m.group(1))
        if stage:
            marks.append((m.start(), stage))
    for m in _CAPS_RE.finditer(text):
        marks.append((m.start(1), m.group(1).lower()))
    marks.sort()
    out: list[tuple[str, str]] = []
    for i, (pos, stage) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else len(text)
        seg = text[pos:end].strip()
        if out and out[-1][0] == stage:
            out[-1] = (stage, f"{out[-1][1]}\n{seg}")
        else:
            out.append((stage, seg))
    return out


def _classify(title: str) -> str | None:
    for stage, rx in _STAGE_WORDS:
        if rx.search(title):
            return stage
    return None


# --------------------------------------------------------------------------- tool calls
def _find_tool_calls(text: str) -> tuple[list[ToolCall], list[str], list[tuple[int, int]]]:
    calls, errors, spans = [], [], []
    pos = 0
    while True:
        m = _CALL_RE.search(text, pos)
        if not m:
            break
        start = m.end()
        end = _balanced_end(text, start)
        if end is None:
            snippet = _snippet(text[m.start():])
            errors.append(f"the tool call {snippet} is cut off or its brackets do not match")
            spans.append((m.start(), len(text)))
            break
        raw = text[m.start():end]
        spans.append((m.start(), end))
        pos = end
        body = text[start:end]
        if body.startswith("("):   # call_tool(...) written like a function: read its inside as an object
            body = "{" + body[1:-1] + "}"
        call, err = _read_call(body)
        if call:
            call.raw = raw
            calls.append(call)
        else:
            errors.append(f"the tool call {_snippet(raw)} could not be read: {err}")
    return calls, errors, spans


def _read_call(body: str) -> tuple[ToolCall | None, str]:
    try:
        obj = loads_lenient(body)
    except ValueError as e:
        return None, str(e)
    if not isinstance(obj, dict):
        return None, "expected {\"tool\": ..., \"args\": [...]}"
    keys = {str(k).strip().lower(): v for k, v in obj.items()}
    name = next((keys[k] for k in ("tool", "name", "tool_name", "function") if k in keys), None)
    if not isinstance(name, str) or not _clean(name):
        return None, "no tool name"
    name = _clean(name)
    if name.endswith("()"):
        name = name[:-2]
    args = next((keys[k] for k in ("args", "arguments", "arg", "parameters") if k in keys), [])
    if args is None:
        args = []
    elif isinstance(args, dict):
        args = list(args.values())
    elif not isinstance(args, (list, tuple)):
        args = [args]
    return ToolCall(name, [_clean(a) if isinstance(a, str) else a for a in args]), ""


def _clean(s: str) -> str:
    return s.strip().strip("*`").strip()


# --------------------------------------------------------------------------- final response
_SCAN_BUDGET = 100_000     # characters the final-response search may scan in one reply (all
                           # candidate braces together): a reply of thousands of unbalanced
                           # braces costs a bounded time, not a quadratic one


def _find_final(text: str, issue_ids: Sequence[str]) -> tuple[FinalResponse | None, str | None]:
    found: FinalResponse | None = None
    error: str | None = None
    key_seen = re.search(r"final[_ ]response", text, re.IGNORECASE) is not None
    budget = [_SCAN_BUDGET]
    i = 0
    while True:
        i = text.find("{", i)
        if i < 0:
            break
        end = _balanced_end(text, i, budget)
        if budget[0] <= 0:
            if found is None:
                error = ("the reply holds too many unbalanced braces to find the final response in it; "
                         "write the final response JSON on its own")
            break
        if end is None:
            if "final_response" in text[i:i + 200].lower():
                error = f"the final response {_snippet(text[i:])} is cut off (no closing brace)"
            i += 1
            continue
        raw = text[i:end]
        if "final" not in raw.lower():
            i += 1  # may still contain nested objects; look inside
            continue
        try:
            obj = loads_lenient(raw)
        except ValueError as e:
            error = f"the final response {_snippet(raw)} is not valid JSON: {e}"
            i += 1
            continue
        obj = _with_final_key(obj)
        if obj is not None:
            fr, err = _final_from(obj, raw, issue_ids)
            if fr:
                found, error = fr, None   # the last valid one wins
            elif err:
                error = err
        i = end
    if found is None and error is None and key_seen and "{" not in text:
        error = "final_response is mentioned but there is no JSON object"
    return found, error


def _with_final_key(obj: Any, depth: int = 0) -> dict | None:
    """The (possibly nested) mapping that holds a final_response key."""
    if isinstance(obj, dict):
        if any(str(k).strip().lower().replace(" ", "_") == "final_response" for k in obj):
            return obj
        items = obj.values()
    elif isinstance(obj, list):
        items = obj
    else:
        return None
    if depth < 5:
        for v in items:
            found = _with_final_key(v, depth + 1)
            if found is not None:
                return found
    return None


def _final_from(obj: dict, raw: str, issue_ids: Sequence[str]) -> tuple[FinalResponse | None, str | None]:
    keys = {str(k).strip().lower().replace(" ", "_"): v for k, v in obj.items()}
    if "final_response" not in keys:
        return None, None
    value = keys["final_response"]
    issue = _issue(value, issue_ids)
    if issue is None:
        return None, (f"final_response must be one of {', '.join(issue_ids)}, got {json.dumps(value)[:80]}")
    expl = keys.get("explanation", "")
    expl = expl if isinstance(expl, str) else json.dumps(expl)
    given = "grounding" in keys
    g = keys.get("grounding", [])
    if g is None:
        g = []
    elif isinstance(g, (str, int, float)):
        g = [g]
    elif isinstance(g, dict):
        g = list(g.values())
    grounding = [_clean(str(x)) for x in g if x is not None and _clean(str(x))]
    return FinalResponse(issue, " ".join(expl.split()), grounding, raw, grounding_given=given), None


def _issue(value: Any, issue_ids: Sequence[str]) -> str | None:
    if value is None:
        return "none" if "none" in issue_ids else None
    if not isinstance(value, str):
        return None
    v = " ".join(value.strip().strip("*`.").lower().split())
    v = _ISSUE_SYNONYMS.get(v, v)
    return v if v in issue_ids else None


# --------------------------------------------------------------------------- scanning helpers
_OPEN = {"{": "}", "[": "]", "(": ")"}
_QUOTES = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019"}


def _balanced_end(text: str, start: int, budget: list[int] | None = None) -> int | None:
    """Index just past the bracket group opening at ``text[start]``; None if it never closes
    (or when ``budget[0]``, characters left to scan, runs out; it is decreased)."""
    n = len(text) if budget is None else min(len(text), start + max(0, budget[0]))
    end = _scan_group(text, start, n)
    if budget is not None:
        budget[0] -= (end if end is not None else n) - start
    return end


def _scan_group(text: str, start: int, n: int) -> int | None:
    stack: list[str] = []
    quote: str | None = None
    i = start
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in _QUOTES and stack and _opens_string(text, i):
            quote = _QUOTES[c]
        elif c in _OPEN:
            stack.append(_OPEN[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    return None


def _opens_string(text: str, i: int) -> bool:
    """A quote opens a string only where a value or key may start (not an apostrophe in a word)."""
    j = i - 1
    while j >= 0 and text[j] in " \t\r\n":
        j -= 1
    return j < 0 or text[j] in "{[(,:"


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    parts, last = [], 0
    for a, b in spans:
        parts.append(text[last:a])
        parts.append(" " * (b - a))
        last = b
    parts.append(text[last:])
    return "".join(parts)


def _snippet(s: str, n: int = 70) -> str:
    s = " ".join(s.split())
    return f"`{s[:n]}{'...' if len(s) > n else ''}`"


# --------------------------------------------------------------------------- lenient JSON
def loads_lenient(s: str) -> Any:
    """``json.loads``, else :func:`loads_relaxed`. Raises ValueError naming the problem."""
    try:
        return json.loads(s)
    except (json.JSONDecodeError, RecursionError):
        return loads_relaxed(s)


_LITERALS = {"true": True, "false": False, "null": None, "none": None}
_NUMBER = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/"}


def loads_relaxed(s: str) -> Any:
    p = _Relaxed(s)
    value = p.value(0)
    p.ws()
    if p.i != len(p.s):
        raise ValueError(f"unexpected text after the value at {_snippet(p.s[p.i:], 20)}")
    return value


class _Relaxed:
    """Recursive-descent reader for near-JSON: quoted strings (", ', curly quotes), bare
    words, numbers, true/false/null/None, objects and lists with optional trailing commas."""
    MAX_DEPTH = 50

    def __init__(self, s: str):
        self.s, self.i = s, 0

    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t\r\n":
            self.i += 1

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def fail(self, what: str) -> ValueError:
        at = _snippet(self.s[self.i:], 20) if self.i < len(self.s) else "the end"
        return ValueError(f"{what} at {at}")

    def value(self, depth: int) -> Any:
        if depth > self.MAX_DEPTH:
            raise self.fail("nested too deeply")
        self.ws()
        c = self.peek()
        if c == "{":
            return self.obj(depth)
        if c == "[":
            return self.arr(depth)
        if c in _QUOTES:
            return self.string()
        if not c or c in ",:]}":
            raise self.fail("expected a value")
        return self.bare(stop=",]}")

    def obj(self, depth: int) -> dict:
        self.i += 1
        out: dict = {}
        while True:
            self.ws()
            if self.peek() == "}":
                self.i += 1
                return out
            if not self.peek():
                raise self.fail("missing '}'")
            key = self.string() if self.peek() in _QUOTES else self.bare(stop=":=,}", is_key=True)
            self.ws()
            if self.peek() not in (":", "="):
                raise self.fail(f"expected ':' after key {key!r}")
            self.i += 1
            out[str(key)] = self.value(depth + 1)
            self.ws()
            if self.peek() == ",":
                self.i += 1
            elif self.peek() != "}":
                raise self.fail("expected ',' or '}'")

    def arr(self, depth: int) -> list:
        self.i += 1
        out: list = []
        while True:
            self.ws()
            if self.peek() == "]":
                self.i += 1
                return out
            if not self.peek():
                raise self.fail("missing ']'")
            out.append(self.value(depth + 1))
            self.ws()
            if self.peek() == ",":
                self.i += 1
            elif self.peek() != "]":
                raise self.fail("expected ',' or ']'")

    def string(self) -> str:
        close = _QUOTES[self.peek()]
        self.i += 1
        buf = []
        while self.i < len(self.s):
            c = self.s[self.i]
            if c == "\\" and self.i + 1 < len(self.s):
                nxt = self.s[self.i + 1]
                if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", self.s[self.i + 2:self.i + 6]):
                    buf.append(chr(int(self.s[self.i + 2:self.i + 6], 16)))
                    self.i += 6
                    continue
                buf.append(_ESCAPES.get(nxt, nxt))
                self.i += 2
                continue
            if c == close:
                self.i += 1
                return "".join(buf)
            buf.append(c)
            self.i += 1
        raise self.fail("unterminated string")

    def bare(self, stop: str, is_key: bool = False) -> Any:
        j = self.i
        while j < len(self.s) and self.s[j] not in stop and self.s[j] not in "\n{[":
            j += 1
        word = self.s[self.i:j].strip()
        if not word:
            raise self.fail("expected a value")
        self.i = j
        if is_key:
            return word
        low = word.lower()
        if low in _LITERALS:
            return _LITERALS[low]
        if _NUMBER.fullmatch(word):
            return float(word) if any(ch in word for ch in ".eE") else int(word)
        return word
