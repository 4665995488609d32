"""Text helpers shared by perception, the rules reasoner and the recovery planner.

``split_words`` turns identifiers and phrases into lowercase words ("CoffeeMachine_1" ->
["coffee", "machine", "1"]); ``singular`` is a light English singular; ``word_key`` joins words
into one lookup key ("coffee machine" and "CoffeeMachine" share the key "coffeemachine").
"""
from __future__ import annotations

import json
import re
from typing import Iterable

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[^a-z0-9]+")


def split_words(text: str) -> list[str]:
    """'CoffeeMachine_1' -> ['coffee', 'machine', '1']; 'the red-bowl' -> ['the', 'red', 'bowl']."""
    return [w for w in _NON_WORD.split(_CAMEL.sub(" ", text).lower()) if w]


_VES_FE = frozenset({"knives", "wives", "lives", "midwives", "housewives", "penknives"})
_VES_F = frozenset({"wolves", "halves", "shelves", "calves", "elves", "selves", "leaves", "loaves", "scarves",
                    "thieves", "wharves", "hooves", "sheaves", "bookshelves", "yourselves", "themselves"})


def singular(word: str) -> str:
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("ves"):             # the few nouns in -f/-fe; "gloves", "olives", "valves" keep the e
        if word in _VES_FE:
            return word[:-3] + "fe"
        return word[:-3] + "f" if word in _VES_F else word[:-1]
    if word.endswith(("ches", "shes", "xes", "sses", "zes", "oes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def word_key(words: Iterable[str]) -> str:
    return "".join(words)


# --------------------------------------------------------------------------- quoted data
# Characters str.splitlines() breaks on, and other control characters: inside quoted data they
# are written as JSON \u escapes, so nothing a person, a label or a tool writes can start a line.
_BREAKING = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\u200b-\u200f\u202a-\u202e\u2060-\u2064]")


def _escape_breaking(s: str) -> str:
    return _BREAKING.sub(lambda m: f"\\u{ord(m.group(0)):04x}", s)


def one_line(text: object) -> str:
    """``text`` with every line separator and control character written as a ``\\uXXXX``
    escape, unquoted: for names from the world (ids, rooms) listed in a prompt line."""
    return _escape_breaking(str(text))


def quote_data(text: object) -> str:
    """Text from the world (a query, a person's answer, a label, a tool's message) as ONE JSON
    string literal on one line: quotes and backslashes escaped, every line separator
    (``\\n``, ``\\r``, ``\\v``, ``\\x85``, ``\\u2028``, ...) and control character written as a
    ``\\uXXXX`` escape. ``json.loads`` gives the text back unchanged; no text inside can end the
    quote, start a new line or re-label itself."""
    return _escape_breaking(json.dumps(str(text), ensure_ascii=False))


def quote_json_data(text: str) -> str:
    """A tool result as delimited data on one line: JSON stays JSON (written compactly, strings
    escaped as in :func:`quote_data`); anything else becomes one quoted string."""
    try:
        value = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return quote_data(text)
    try:
        return _escape_breaking(json.dumps(value, ensure_ascii=False))
    except (ValueError, TypeError, RecursionError):
        return quote_data(text)


def unquote_data(text: str) -> tuple[str, str] | None:
    """(value, rest) when ``text`` starts with a JSON string literal as :func:`quote_data`
    writes it, else None."""
    t = text.lstrip()
    if not t.startswith('"'):
        return None
    try:
        value, end = json.JSONDecoder().raw_decode(t)
    except ValueError:
        return None
    return (value, t[end:]) if isinstance(value, str) else None
