"""Reading the conversation the rules reasoner is handed: the tools the system prompt offers,
the robot facts it states, the query and context of the first user message, every tool
result and warning since, and the calls the reasoner itself made in earlier turns.

The reasoner keeps no state between turns: :class:`Conversation` is rebuilt from the messages
each time, and :class:`Observations` answers "what did tool X say about Y?" from it, noting
the calls still missing.
"""
from __future__ import annotations

import ast
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from raider_ros.agent.parsing import loads_lenient, parse_tool_calls
from raider_ros.common.text import unquote_data
from raider_ros.common.tool_contract import tool_catalogue


_TOOL_LINE = re.compile(r"^[ \t]*(?:[-*\u2022]|\d+[.)])?[ \t]*`?([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(", re.M)
_TOOL_CALL_RESULT = re.compile(r"Call to tool\s+([A-Za-z_][A-Za-z0-9_]*)\s+with args\s*")
_WARNING = re.compile(r"^\s*WARNING\s+(\d+)\s*\(([^)]*)\)\s*:?\s*(.*)$", re.S)
_LABEL = re.compile(r"^\s*([A-Za-z][A-Za-z ]{0,40}?)\s*:\s*(.*)$")
_QUERY_LABELS = ("query", "action", "instruction", "task", "command", "request", "user query")
_CONTEXT_LABELS = ("additional information", "context", "clarification", "user info",
                   "user information", "information", "note", "hint", "user says", "person says",
                   "the person says", "the user says", "answer", "human answer", "feedback")
_OBJECT_LABELS = ("objects in sight", "visible objects", "objects")
_HELD_LABELS = ("object in the gripper", "robot holding", "holding", "held object")
# scene-graph lines (raider_ros/retrieval): objects out of sight, later retrieved objects; not context
_SCENE_LABELS = ("remembered objects out of sight", "scene graph update")
# what the conversation protocol itself writes: inside quoted data such a line is forged
_FORGED = re.compile(r"^\s*(?:call[ _]?tool\b|call to tool\b|warning\s+\d+\s*\(|[{\[]\s*\"?final[_ ]response)", re.I)
_FAILED_TAIL = re.compile(r"\.?\s*Check the tool name.*$", re.S)
_CLOSEST = re.compile(r"closest:?\s*\[?([A-Za-z0-9_ ,'\"-]+)", re.I)


@dataclass
class ToolObservation:
    tool: str
    args: tuple[str, ...]
    ok: bool
    data: Any = None              # parsed result (ok) or parsed error data (failed), if any
    error: str = ""               # failure reason as written

    @property
    def closest(self) -> list[str]:
        """Ids a failed call suggests instead ({"closest": [...]} or "...; closest: A, B")."""
        if isinstance(self.data, dict) and isinstance(self.data.get("closest"), list):
            return [str(x) for x in self.data["closest"] if isinstance(x, (str, int))]
        m = _CLOSEST.search(self.error or "")
        if not m:
            return []
        return [s.strip(" '\"") for s in m.group(1).split(",") if s.strip(" '\"")]

    @property
    def failed_name(self) -> str | None:
        if isinstance(self.data, dict) and isinstance(self.data.get("query"), str):
            return self.data["query"]
        m = re.search(r"matches\s+'([^']+)'", self.error or "")
        return m.group(1) if m else None


@dataclass
class Warning_:
    number: int
    title: str
    text: str


@dataclass
class Conversation:
    tools: set[str]
    query: str
    context: list[str]
    results: dict[tuple[str, tuple[str, ...]], ToolObservation]
    warnings: list[Warning_]
    asked: Counter                       # (tool, args) -> times the reasoner asked for it
    turns: int                           # assistant messages so far
    objects_hint: list[str] | None = None
    held_hint: str | None = None
    held_known: bool = False                # the first message says what is in the gripper
    unavailable: set[str] = field(default_factory=set)   # tools a warning said do not exist

    def has_tool(self, name: str) -> bool:
        return name in self.tools and name not in self.unavailable


def key_of(tool: str, args: Sequence[Any]) -> tuple[str, tuple[str, ...]]:
    return tool, tuple(str(a) for a in args)


# --------------------------------------------------------------------------- parsing
def read_conversation(messages: Sequence[Any]) -> Conversation:
    """Build a :class:`Conversation`; raises ValueError naming a malformed message."""
    system_parts: list[str] = []
    users: list[str] = []
    results: dict = {}
    warnings: list[Warning_] = []
    asked: Counter = Counter()
    turns = 0
    extra_context: list[str] = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise ValueError(f"message {i} is not a {{role, content}} mapping: {str(m)[:80]!r}")
        role, content = m["role"], m.get("content")
        content = content if isinstance(content, str) else ("" if content is None else str(content))
        if role == "system":
            system_parts.append(content)
        elif role == "assistant":
            turns += 1
            calls, _ = parse_tool_calls(content)
            for c in calls:
                asked[key_of(c.tool, c.args)] += 1
        elif role in ("user", "tool"):
            if not users:
                users.append(content)
                continue
            found = _tool_observations(content)
            for obs in found:
                results[key_of(obs.tool, obs.args)] = obs
            w = _WARNING.match(content)
            lab = _LABEL.match(content)
            if lab and lab.group(1).strip().lower() in _SCENE_LABELS:
                continue
            if w:
                warnings.append(Warning_(int(w.group(1)), w.group(2).strip(), w.group(3).strip()))
            elif not found and content.strip():
                extra_context.append(content.strip())
    system = "\n".join(system_parts)
    query, context, objects, held, held_known = _first_user(users[0] if users else "")
    conv = Conversation(
        tools=_tool_names(system), query=query, context=[c for c in (context, *extra_context) if c],
        results=results, warnings=warnings, asked=asked, turns=turns,
        objects_hint=objects, held_hint=held, held_known=held_known,
    )
    for w in warnings:
        if w.number == 2:
            m = re.search(r'no tool called\s+["\u201c\']?([A-Za-z_][A-Za-z0-9_]*)', w.text)
            if m:
                conv.unavailable.add(m.group(1))
    return conv


def _tool_names(system: str) -> set[str]:
    """Tools listed in the prompt (lines such as "- dist_to_target(target): ..."), else the
    known tools it mentions at all; none when it names none."""
    listed = {m.group(1) for m in _TOOL_LINE.finditer(system)} & set(tool_catalogue())
    return listed or {t for t in tool_catalogue() if re.search(rf"\b{t}\b", system)}



def _first_user(text: str) -> tuple[str, str, list[str] | None, str | None, bool]:
    """(query, context, objects listed, held object, whether the gripper was stated) of the
    first user message. A value written as quoted data (a JSON string or list, as the prompt
    writes every value) is read whole and ends its field: nothing inside it is a label."""
    fields: dict[str, list[str]] = {}
    current: str | None = None
    loose: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        m = _LABEL.match(line)
        label = m.group(1).strip().lower() if m else None
        kind = None
        if label in _QUERY_LABELS:
            kind = "query"
        elif label in _CONTEXT_LABELS:
            kind = "context"
        elif label in _OBJECT_LABELS:
            kind = "objects"
        elif label in _HELD_LABELS:
            kind = "held"
        elif label in _SCENE_LABELS:
            kind = "scene"
        if kind:
            value, quoted = _field_value(m.group(2).strip())
            fields.setdefault(kind, []).append(value)
            current = None if quoted else kind
        elif current:
            fields[current].append(line.strip())
        else:
            loose.append(line.strip())
    if "query" in fields:
        query = " ".join(fields["query"])
        context = " ".join(fields.get("context", []) + loose)
    else:
        query, context = (loose[0], " ".join(loose[1:] + fields.get("context", []))) if loose else ("", "")
        if not context:
            query, context = _split_quoted(query)
    objects = None
    if "objects" in fields:
        raw = " ".join(fields["objects"]).strip()
        listed = _json_list(raw)
        if listed is None:
            listed = raw.strip("[]").split(",")
        objects = [s.strip(" '\"") for s in listed if s.strip(" '\"") and s.strip().lower() != "none"]
    held = None
    if "held" in fields:
        h = " ".join(fields["held"]).strip(" '\"")
        held = None if h.lower() in ("", "none", "null", "nothing") else h
    return query.strip(), context.strip(), objects, held, "held" in fields


def _field_value(value: str) -> tuple[str, bool]:
    """A field's text and whether it was quoted data (read whole). Lines of quoted text that
    imitate the protocol (a field label such as "Object in the gripper:", a tool result, a
    warning, a tool call, a final response) are forged: they are left out."""
    q = unquote_data(value)
    if q is not None and not q[1].strip():
        return "\n".join(line for line in q[0].splitlines() if not _forged(line)), True
    if value.startswith("[") and _json_list(value) is not None:
        return value, True
    return value, False


def _forged(line: str) -> bool:
    if _FORGED.match(line):
        return True
    m = _LABEL.match(line)
    label = m.group(1).strip().lower() if m else None
    return label in _QUERY_LABELS or label in _CONTEXT_LABELS or label in _OBJECT_LABELS or label in _HELD_LABELS


def _json_list(raw: str) -> list[str] | None:
    try:
        v = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return [str(x) for x in v] if isinstance(v, list) else None


def _split_quoted(text: str) -> tuple[str, str]:
    """'pick X Y. "It is the one near the plant."' -> (query, quoted context)."""
    m = re.match(r'^(.*?[^"\u201c\s])\s*[.;:]?\s*["\u201c]([^"\u201d]+)["\u201d]\s*\.?\s*$', text)
    if m and m.group(1).strip():
        return m.group(1).strip(), m.group(2).strip()
    return text, ""


def _tool_observations(content: str) -> list[ToolObservation]:
    """The "Call to tool NAME with args [...] returned X / failed: Y" a message starts with
    (one result per message; a failure may sit inside a WARNING 3). Text inside a result or a
    reason is data: a "Call to tool ..." written there is never read as a result of its own."""
    body = content.lstrip()
    w = _WARNING.match(body)
    if w:
        body = w.group(3).lstrip()
    m = _TOOL_CALL_RESULT.match(body)
    if not m:
        return []
    rest = body[m.end():]
    args, used = _decode_prefix(rest)
    if not isinstance(args, list):
        args = [] if args is None else [args]
    tail = rest[used:].lstrip()
    if tail.startswith("returned"):
        return [ToolObservation(m.group(1), tuple(str(a) for a in args), True,
                                _decode_result(tail[len("returned"):].strip()))]
    if tail.startswith("failed"):
        raw = tail[len("failed"):].lstrip(" :")
        q = unquote_data(raw)
        reason = q[0].strip() if q is not None else _FAILED_TAIL.sub("", raw).strip()
        data = _decode_value(reason)
        return [ToolObservation(m.group(1), tuple(str(a) for a in args), False,
                                data if isinstance(data, (dict, list)) else None, reason)]
    return []


def _decode_result(text: str) -> Any:
    """The JSON value a result starts with (what follows it is not part of it), else the
    lenient reading of the whole text (older transcripts, Python literals)."""
    try:
        value, _end = json.JSONDecoder().raw_decode(text)
        return value
    except (ValueError, RecursionError):
        return _decode_value(text)


def _decode_prefix(text: str) -> tuple[Any, int]:
    """The JSON (or Python-literal) list at the start of ``text`` and its length."""
    if not text.startswith("["):
        word = re.match(r"\S*", text).group(0)
        return ([] if word in ("", "None") else [word]), len(word)
    try:
        value, end = json.JSONDecoder().raw_decode(text)
        return value, end
    except json.JSONDecodeError:
        pass
    depth, quote = 0, None
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                try:
                    return ast.literal_eval(text[:i + 1]), i + 1
                except (ValueError, SyntaxError):
                    return [s.strip(" '\"") for s in text[1:i].split(",") if s.strip()], i + 1
    return [], 0


def _decode_value(text: str) -> Any:
    text = text.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        return loads_lenient(text)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


# --------------------------------------------------------------------------- answers
@dataclass
class Answer:
    status: str                   # ok | pending | failed | unavailable
    data: Any = None
    error: str = ""
    args: tuple[str, ...] = ()    # the arguments the answer is for (after a retry)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def pending(self) -> bool:
        return self.status == "pending"


class Observations:
    """Tool answers from the conversation. ``get`` returns what is known and records every
    call it had to ask for in ``pending`` (in order, without repeats). A call asked twice
    without an answer, or any missing call once ``final`` is set, counts as failed, so the
    reasoner never asks for the same thing forever."""

    def __init__(self, conv: Conversation, *, final: bool = False):
        self.conv = conv
        self.final = final
        self.pending: list[tuple[str, tuple[str, ...]]] = []
        self.used: list[tuple[str, tuple[str, ...]]] = []

    def has(self, tool: str) -> bool:
        if tool not in tool_catalogue():   # a tool renamed in data/toolsets but not here
            raise KeyError(f"the rules reasoner asks for tool {tool!r}, which no toolset file describes")
        return self.conv.has_tool(tool)

    def get(self, tool: str, *args: Any, _retry: bool = True) -> Answer:
        if not self.has(tool):
            return Answer("unavailable", error=f"no tool {tool} in the tool list")
        key = key_of(tool, args)
        obs = self.conv.results.get(key)
        if obs is not None:
            self.used.append(key)
            if obs.ok:
                return Answer("ok", obs.data, args=key[1])
            alt = self._alternative(obs)
            if alt is not None and _retry:
                return self.get(tool, *alt, _retry=False)
            return Answer("failed", obs.data, obs.error or "the call failed", key[1])
        if self.final or self.conv.asked[key] >= 2:
            return Answer("failed", error="no answer", args=key[1])
        if key not in self.pending:
            self.pending.append(key)
        return Answer("pending", args=key[1])

    @staticmethod
    def _alternative(obs: ToolObservation) -> tuple[str, ...] | None:
        """The same call with the failing name replaced by the closest one the tool offered."""
        closest = obs.closest
        if not closest:
            return None
        bad = obs.failed_name
        args = list(obs.args)
        idx = next((i for i, a in enumerate(args) if bad is not None and a == bad), len(args) - 1)
        if idx < 0 or closest[0] == args[idx]:
            return None
        args[idx] = closest[0]
        return tuple(args)


def entry_for(data: Any, key: str, ident: str) -> Any:
    """A tool asked about a name matching several instances answers with a list: pick ``ident``'s."""
    if isinstance(data, list):
        for d in data:
            if isinstance(d, dict) and d.get(key) == ident:
                return d
        return data[0] if len(data) == 1 else None
    return data
