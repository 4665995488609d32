"""Argument matching: turn what the agent wrote ("the bowl", "coffee machine", "Adriana",
"bowl_1") into scene-graph ids.

Order of attempts, first hit wins:

1. an id ("Bowl_1", "bowl 1", "the bowl_1");
2. a recognised person name ("Adriana");
3. a type ("bowl", "Bowls", "coffee machine", "countertop") -> every instance of it;
4. a type inside a longer phrase ("the red bowl", "mug on the left") -> the longest, then
   leftmost, type mentioned;
5. fuzzy (rapidfuzz) on ids, types and names, for typos ("cofee machine").

Type matches prefer instances that are present (visible or in the gripper); instances known but
out of sight are returned only when no instance is present. Nothing found -> :class:`NoMatch`
with the closest ids. Choosing among several instances is the agent's job, never ours.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable

from rapidfuzz import fuzz, process

from raider_ros.common.text import singular, split_words, word_key

ARTICLES = frozenset({"the", "a", "an", "this", "that", "these", "those", "my", "some", "any"})
PERSON_WORDS = frozenset({"person", "people", "human", "humans", "man", "woman", "persons"})
FUZZY_CUTOFF = 85.0          # rapidfuzz ratio (0..100) a typo must reach to count as a match
CLOSEST_CUTOFF = 30.0        # names at least this similar are offered as "closest" when none matches
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class Entity:
    id: str
    type: str
    kind: str = "object"          # object | person
    name: str | None = None       # recognised person name
    present: bool = True          # visible now, or held by the robot


@dataclass(frozen=True)
class Match:
    query: str
    ids: tuple[str, ...]
    how: str                      # id | name | type | phrase | fuzzy
    score: float = 100.0

    @property
    def several(self) -> bool:
        return len(self.ids) > 1


@dataclass(frozen=True)
class NoMatch:
    query: str
    closest: tuple[str, ...] = ()
    reason: str = "not found"

    def to_data(self) -> dict:
        return {"error": "not found", "query": self.query, "closest": list(self.closest)}

    @property
    def message(self) -> str:
        near = f"; closest: {', '.join(self.closest)}" if self.closest else ""
        return f"not found: {self.reason} matches {self.query!r}{near}"


@dataclass
class Matcher:
    """Built once per scene-graph snapshot; :meth:`match` is a few dict look-ups in the usual case."""
    entities: list[Entity]
    _by_id: dict[str, str] = field(init=False, default_factory=dict)
    _by_name: dict[str, list[str]] = field(init=False, default_factory=dict)
    _by_type: dict[str, list[Entity]] = field(init=False, default_factory=dict)
    _fuzzy: dict[str, tuple[str, ...]] = field(init=False, default_factory=dict)
    _kind: dict[str, str] = field(init=False, default_factory=dict)
    _max_type_words: int = field(init=False, default=1)

    def __post_init__(self) -> None:
        for e in self.entities:
            self._kind[e.id] = e.kind
            self._by_id[_id_keys(e.id)[0]] = e.id
            self._by_id.setdefault(e.id.lower(), e.id)
            key, n_words = _type_key(e.type)
            self._by_type.setdefault(key, []).append(e)
            self._max_type_words = max(self._max_type_words, n_words)
            if e.name:
                self._by_name.setdefault(word_key(split_words(e.name)), []).append(e.id)
        for e in self.entities:
            self._fuzzy[_id_keys(e.id)[1]] = (e.id,)
            if e.name:
                self._fuzzy[" ".join(split_words(e.name))] = tuple(self._by_name[word_key(split_words(e.name))])
        for key, ents in self._by_type.items():
            words = " ".join(split_words(ents[0].type))
            self._fuzzy[words] = self._prefer_present(ents)

    @staticmethod
    def _prefer_present(ents: list[Entity]) -> tuple[str, ...]:
        present = [e.id for e in ents if e.present]
        return tuple(present or [e.id for e in ents])

    def _kinds(self, ids: Iterable[str], kinds: frozenset[str] | None) -> tuple[str, ...]:
        if kinds is None:
            return tuple(ids)
        return tuple(i for i in ids if self._kind.get(i) in kinds)

    def match(self, query: str, kinds: Iterable[str] | None = None) -> Match | NoMatch:
        """Resolve ``query`` to ids; ``kinds`` limits the answer to ``object`` and/or ``person``."""
        ks = frozenset(kinds) if kinds is not None else None
        what = "nothing" if ks is None else ("no " + " or ".join(sorted(ks)))
        if not isinstance(query, str) or not query.strip():
            return NoMatch(str(query), (), f"{what} (empty name)")
        words = [w for w in split_words(query) if w not in ARTICLES]
        if not words:
            return NoMatch(query, (), what)

        for how, ids in self._exact(words):
            got = self._kinds(ids, ks)
            if got:
                return Match(query, got, how)

        # typos only: a candidate must carry the same numbers ("mug 10" is not "Mug_1")
        digits = _DIGITS.findall(" ".join(words))
        choices = [c for c in self._fuzzy if _DIGITS.findall(c) == digits]
        best = process.extractOne(" ".join(words), choices, scorer=fuzz.ratio, score_cutoff=FUZZY_CUTOFF)
        if best is not None:
            got = self._kinds(self._fuzzy[best[0]], ks)
            if got:
                return Match(query, got, "fuzzy", float(best[1]))
        return NoMatch(query, self.closest(" ".join(words), ks), what)

    def _exact(self, words: list[str]):
        """Candidate answers in order of trust: (how, ids)."""
        whole = word_key(words)
        if whole in self._by_id:
            yield "id", (self._by_id[whole],)
        if whole in self._by_name:
            yield "name", tuple(self._by_name[whole])
        sing = [singular(w) for w in words]
        key = word_key(sing)
        if key in self._by_type:
            yield "type", self._prefer_present(self._by_type[key])
        if sing[-1] in PERSON_WORDS or key in ("person", "human"):
            yield "type", self._prefer_present(self._by_type.get("person", []))
        # a type mentioned inside a longer phrase: longest n-gram first, then leftmost; never
        # for a query naming an instance number ("bowl 2" is not "Bowl_1")
        if any(w.isdigit() for w in words):
            return
        n = len(sing)
        for size in range(min(n - 1, self._max_type_words), 0, -1):
            for start in range(0, n - size + 1):
                gram = word_key(sing[start:start + size])
                if gram in self._by_type:
                    yield "phrase", self._prefer_present(self._by_type[gram])
                    break
                if gram in self._by_id:
                    yield "phrase", (self._by_id[gram],)
                    break

    def closest(self, text: str, kinds: frozenset[str] | None = None, limit: int = 5) -> tuple[str, ...]:
        ranked = process.extract(text, list(self._fuzzy), scorer=fuzz.ratio, limit=len(self._fuzzy),
                                 score_cutoff=CLOSEST_CUTOFF)
        out: list[str] = []
        for choice, _, _ in ranked:
            for i in self._kinds(self._fuzzy[choice], kinds):
                if i not in out:
                    out.append(i)
            if len(out) >= limit:
                break
        return tuple(out[:limit])


@lru_cache(maxsize=1 << 16)
def _id_keys(entity_id: str) -> tuple[str, str]:
    """(look-up key, words) of an id; cached: a house-scale graph rebuilds its matcher on
    every frame with the same ids."""
    words = split_words(entity_id)
    return word_key(words), " ".join(words)


@lru_cache(maxsize=4096)
def _type_key(type_name: str) -> tuple[str, int]:
    words = split_words(type_name)
    return word_key(singular(w) for w in words), len(words)


def empty_matcher() -> Matcher:
    return Matcher([])
