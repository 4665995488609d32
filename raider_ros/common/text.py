"""Text helpers shared by perception, the rules reasoner and the recovery planner.

``split_words`` turns identifiers and phrases into lowercase words ("CoffeeMachine_1" ->
["coffee", "machine", "1"]); ``singular`` is a light English singular; ``word_key`` joins words
into one lookup key ("coffee machine" and "CoffeeMachine" share the key "coffeemachine").
"""
from __future__ import annotations

import re
from typing import Iterable

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD = re.compile(r"[^a-z0-9]+")


def split_words(text: str) -> list[str]:
    """'CoffeeMachine_1' -> ['coffee', 'machine', '1']; 'the red-bowl' -> ['the', 'red', 'bowl']."""
    return [w for w in _NON_WORD.split(_CAMEL.sub(" ", text).lower()) if w]


def singular(word: str) -> str:
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("ves"):
        return word[:-3] + "fe" if word in ("knives", "wives", "lives") else word[:-3] + "f"
    if word.endswith(("ches", "shes", "xes", "sses", "zes", "oes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def word_key(words: Iterable[str]) -> str:
    return "".join(words)
