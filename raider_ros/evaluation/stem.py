"""Word matching for the Expl metric: tokens, a small suffix-stripping stemmer, phrase forms.

A case's ``mentions`` lists groups of words; an explanation matches a group when it contains
one of the group's words *by stem*, case-insensitively. This module decides what "by stem"
means, in a way that is predictable for people who write cases:

* **Tokens.** Text is split into lowercase alphanumeric words. Identifiers are split too:
  ``CounterTop_1`` gives ``counter``, ``top``, ``1`` (underscores, CamelCase and digit runs
  separate words). Contractions ending in ``n't`` become ``not`` ("isn't" -> "is not").
* **Stems.** :func:`stem` strips, in order and at most once per step, leaving at least three
  letters: (1) plural endings (``-sses`` -> ``-ss``, ``-ies`` -> ``-y``, ``-es`` after
  s/x/z/ch/sh/o, ``-s`` except after s, u, i); (2) ``-ied`` -> ``-y``, ``-ing`` / ``-ed`` when a
  vowel remains, then a doubled final consonant is undoubled (``stopped`` -> ``stop``);
  (3) one of ``-able``, ``-ible``, ``-ness``, ``-ment``, ``-ful``, ``-ly``, and ``-ion`` after
  ``t`` or ``s``; (4) a final ``e`` is dropped, a final ``y`` after a consonant becomes
  ``i``. A stem left as a short consonant-vowel-consonant syllable keeps (or gets back) its
  ``e``: move / moved / movable all give ``move``, while note stays apart from not. So block / blocks / blocked / blocking all stem to
  ``block``, reach / reachable / reaching to ``reach``, slice / sliced / slicing / slices to
  ``slic``, obstruct / obstruction to ``obstruct``. A few irregular nouns (knife / knives,
  shelf / shelves, person / people ...) map to one form. It is deliberately simpler than
  Porter's algorithm; ``-er`` is never stripped, so "counter" stays "counter".
* **Phrases.** A mention entry of several words ("counter top", "picked up") and a compound
  single word ("countertop") are compared through their *compact form*: the stems of their
  words joined without spaces. An explanation offers the compact forms of every run of one
  to four consecutive tokens, so "counter top", "countertop" and "CounterTop_1" match each
  other.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

_IRREGULAR = {
    "knives": "knife", "shelves": "shelf", "leaves": "leaf", "loaves": "loaf",
    "halves": "half", "wolves": "wolf", "people": "person", "men": "man", "women": "woman",
    "children": "child", "feet": "foot", "teeth": "tooth", "mice": "mouse", "dice": "die",
}
_VOWELS = set("aeiouy")
_MAX_WINDOW = 4

# CamelCase pieces: "TVStand" -> TV, Stand; "CounterTop" -> Counter, Top; digits apart.
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_CONTRACTIONS = (("can't", "can not"), ("won't", "will not"), ("n't", " not"))


def _has_vowel(s: str) -> bool:
    return any(c in _VOWELS for c in s)


def _short_cvc(s: str) -> bool:
    """Three letters consonant-vowel-consonant (not ending in w, x, y): "mov", "not", "hop"."""
    return (len(s) == 3 and s[0] not in _VOWELS and s[1] in "aeiou" and s[2] not in _VOWELS
            and s[2] not in "wxy")


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """The stem of one lowercase word (see the module docstring for the rules)."""
    w = word.lower()
    if w in _IRREGULAR:
        return stem(_IRREGULAR[w])
    if len(w) <= 3 or not w.isalpha():
        return w
    # (1) plurals
    if w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("ies") and len(w) - 3 >= 2:
        w = w[:-3] + "y"
    elif w.endswith("es") and len(w) - 2 >= 3 and re.search(r"(s|x|z|ch|sh|o)$", w[:-2]):
        w = w[:-2]
    elif w.endswith("s") and not re.search(r"(s|u|i)s$", w) and len(w) - 1 >= 3:
        w = w[:-1]
    # (2) verb endings
    if w.endswith("ied") and len(w) - 3 >= 2:
        w = w[:-3] + "y"
    else:
        for suffix in ("ing", "ed"):
            base = w[: -len(suffix)]
            if w.endswith(suffix) and len(base) >= 3 and _has_vowel(base):
                w = base
                if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "lsz" + "aeiou":
                    w = w[:-1]
                elif _short_cvc(w):
                    w += "e"
                break
    # (3) derivational endings
    for suffix in ("able", "ible", "ness", "ment", "ful", "ly"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if _short_cvc(w):
                w += "e"
            break
    else:
        if w.endswith("ion") and len(w) >= 7 and w[-4] in "ts":
            w = w[:-3]
    # (4) a final e; a final y after a consonant becomes i (cookie / cookies, empty / emptied)
    if w.endswith("e") and len(w) - 1 >= 3 and not _short_cvc(w[:-1]):
        w = w[:-1]
    elif w.endswith("y") and len(w) >= 4 and w[-2] not in _VOWELS:
        w = w[:-1] + "i"
    return w


def mention_words(text: str) -> list[str]:
    """Lowercase words of ``text``; identifiers and CamelCase names are split into words."""
    t = str(text).replace("\u2019", "'")
    for old, new in _CONTRACTIONS:
        t = re.sub(re.escape(old), new, t, flags=re.IGNORECASE)
    return [m.group(0).lower() for m in _WORD.finditer(t)]


def stem_key(text: str) -> str:
    """The compact form of a word or phrase: the stems of its words joined together."""
    return "".join(stem(t) for t in mention_words(text))


def text_forms(text: str, max_window: int = _MAX_WINDOW) -> set[str]:
    """Compact forms of every run of 1..max_window consecutive words of ``text``."""
    stems = [stem(t) for t in mention_words(text)]
    out: set[str] = set()
    for i in range(len(stems)):
        for n in range(1, max_window + 1):
            if i + n > len(stems):
                break
            out.add("".join(stems[i:i + n]))
    return out


def matches_any(forms: set[str], entries: Iterable[str]) -> bool:
    """True when one of ``entries`` (words or phrases) occurs among a text's ``forms``."""
    return any((c := stem_key(e)) and c in forms for e in entries)
