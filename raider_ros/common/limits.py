"""Size limits of what the graph accepts, in one place (README, "Limits"; the nodes' parameters
default to these values).

A request past a limit is refused at once with a reason naming the field, its size and the
limit, before it waits in a queue or reaches a model. Text with a NUL character is refused too:
ROS 2 strings end at the first NUL, so such text would be cut short without a word.
"""
from __future__ import annotations

from typing import Any, Sequence

MAX_QUERY_CHARS = 1_000           # detect_issue query: an instruction, e.g. "pick(Apple)"
MAX_CONTEXT_CHARS = 4_000         # detect_issue context: what a person said, the user's words
MAX_TOOL_ARG_CHARS = 256          # one argument of an agent tool (an id, a relation, a question)
MAX_TOOL_ARGS = 8                 # arguments of one tool call (the tools take at most 2)
MAX_TRANSCRIPT_CHARS = 200_000    # a check's transcript as returned and published (longer
                                  # messages are cut, each keeping its start and a note)


class LimitError(ValueError):
    """Input past a size limit, or with a NUL character; the message names field and limit."""


def text_problem(field: str, value: Any, limit: int) -> str | None:
    """Why ``value`` cannot be accepted as ``field`` (None when it can)."""
    if not isinstance(value, str):
        return f"{field} must be text, got {type(value).__name__}"
    if "\x00" in value:
        return (f"{field} contains a NUL character at position {value.index(chr(0))}; "
                "ROS strings end at NUL, so the text is refused rather than cut short")
    if len(value) > limit:
        return f"{field} is {len(value):,} characters long; the limit is {limit:,}"
    return None


def request_problem(query: Any, context: Any = "", *, max_query: int = MAX_QUERY_CHARS,
                    max_context: int = MAX_CONTEXT_CHARS) -> str | None:
    """Why a detect_issue request (query, context) cannot be accepted, or None."""
    return text_problem("the query", query, max_query) or \
        (text_problem("the context", context, max_context) if context else None)


def tool_args_problem(tool: str, args: Sequence[Any], *, max_chars: int = MAX_TOOL_ARG_CHARS,
                      max_args: int = MAX_TOOL_ARGS) -> str | None:
    """Why the arguments of a tool call cannot be accepted, or None (the argument itself is
    not repeated in the reason: a huge argument is never echoed back)."""
    if len(args) > max_args:
        return f"{tool}: {len(args)} arguments; the limit is {max_args}"
    for i, a in enumerate(args):
        text = a if isinstance(a, str) else str(a)
        if "\x00" in text:
            return f"{tool}: argument {i + 1} contains a NUL character; it is refused rather than cut short"
        if len(text) > max_chars:
            return f"{tool}: argument {i + 1} is {len(text):,} characters long; the limit is {max_chars:,}"
    return None


def cap_transcript(messages: Sequence[dict], max_chars: int = MAX_TRANSCRIPT_CHARS) -> list[dict]:
    """The messages with the longest contents cut so that all contents together stay within
    ``max_chars`` (each keeps its start and says how much was cut). Roles and order are kept."""
    out = [dict(m) for m in messages]
    sizes = [len(str(m.get("content", ""))) for m in out]
    if sum(sizes) <= max_chars:
        return out
    # the largest share each message may keep so that the total fits (water filling)
    share = max_chars // max(1, len(out))
    small = [s for s in sizes if s <= share]
    budget = max_chars - sum(small)
    big = len(sizes) - len(small)
    keep = max(200, budget // max(1, big))
    for m, s in zip(out, sizes):
        if s > keep:
            text = str(m.get("content", ""))
            m["content"] = text[:keep] + f" ... [{s - keep:,} characters cut: transcript limit {max_chars:,}]"
    return out
