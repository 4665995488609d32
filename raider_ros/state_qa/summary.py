"""State summaries (RACCOON §III-B) and their time-indexed history.

A :class:`StateSummary` is what one module says about its own state at one time: the module
name, a stamp (float seconds), a short text for a person or an LLM, and the facts behind the
text as ordered key/value pairs of strings (``("holding", "Medicine_1")``). Keys are
``name`` or ``name:subject`` (``"object:Chair_1"``); the answer templates are looked up by
``name``. Sizes are bounded: long texts and values are cut, extra facts dropped (and counted
in a ``facts_dropped`` fact), so a runaway module cannot flood a prompt.

:class:`SummaryHistory` keeps, per module, the latest summary and a bounded past (the
newest ``max_per_module``; optionally only those within ``max_age_s`` of the newest stamp of
any module). It answers "what is the latest of X", "what was published between t0 and t1",
and "what happened since t" (the summaries whose text changed). Thread-safe.
"""
from __future__ import annotations

import bisect
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from .modules import StateQAError

MAX_TEXT_CHARS = 2000
MAX_VALUE_CHARS = 1000
MAX_KEY_CHARS = 120
MAX_FACTS = 80
_ELLIPSIS = "..."


def _clip(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - len(_ELLIPSIS)].rstrip() + _ELLIPSIS


@dataclass(frozen=True)
class StateSummary:
    module: str
    stamp: float
    text: str
    facts: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        if not isinstance(self.module, str) or not self.module.strip():
            raise StateQAError(f"state summary: module must be a non-empty name, got {self.module!r}")
        if isinstance(self.stamp, bool) or not isinstance(self.stamp, (int, float)) or not math.isfinite(self.stamp):
            raise StateQAError(f"state summary of {self.module}: stamp must be finite seconds, got {self.stamp!r}")
        if not isinstance(self.text, str):
            raise StateQAError(f"state summary of {self.module}: text must be a string, got {type(self.text).__name__}")
        object.__setattr__(self, "module", self.module.strip())
        object.__setattr__(self, "stamp", float(self.stamp))
        object.__setattr__(self, "text", _clip(self.text, MAX_TEXT_CHARS))
        object.__setattr__(self, "facts", _clean_facts(self.facts, self.module))

    # ------------------------------------------------------------------ reading
    def fact(self, key: str, default: str | None = None) -> str | None:
        for k, v in self.facts:
            if k == key:
                return v
        return default

    def facts_named(self, name: str) -> list[tuple[str, str, str]]:
        """``[(key, subject, value)]`` of the facts whose key is ``name`` or ``name:subject``."""
        out = []
        for k, v in self.facts:
            base, _, subject = k.partition(":")
            if base == name:
                out.append((k, subject, v))
        return out

    @property
    def facts_dict(self) -> dict[str, str]:
        return dict(self.facts)

    def render(self) -> str:
        """The text and the facts, as they go into a prompt."""
        lines = [self.text] if self.text else []
        lines += [f"- {k}: {v}" for k, v in self.facts]
        return "\n".join(lines)

    def with_stamp(self, stamp: float) -> "StateSummary":
        return StateSummary(self.module, stamp, self.text, self.facts)

    # ------------------------------------------------------------------ transport
    def to_dict(self) -> dict:
        return {"module": self.module, "stamp": self.stamp, "text": self.text,
                "facts": [{"key": k, "value": v} for k, v in self.facts]}

    @classmethod
    def from_dict(cls, doc: Any, source: str = "state summary") -> "StateSummary":
        """From :meth:`to_dict` output (or a message converted to a dict). Facts may be a list
        of ``{key, value}``, a list of pairs, or a mapping."""
        if not isinstance(doc, Mapping):
            raise StateQAError(f"{source}: expected a mapping with module, stamp, text, facts")
        missing = [k for k in ("module", "stamp", "text") if k not in doc]
        if missing:
            raise StateQAError(f"{source}: missing {', '.join(missing)}")
        raw = doc.get("facts") or []
        if isinstance(raw, Mapping):
            pairs = list(raw.items())
        elif isinstance(raw, (list, tuple)):
            pairs = []
            for i, f in enumerate(raw):
                if isinstance(f, Mapping) and "key" in f and "value" in f:
                    pairs.append((f["key"], f["value"]))
                elif isinstance(f, (list, tuple)) and len(f) == 2:
                    pairs.append((f[0], f[1]))
                else:
                    raise StateQAError(f"{source}: facts[{i}]: expected {{key, value}} or a pair, got {f!r}")
        else:
            raise StateQAError(f"{source}: facts: expected a list or a mapping, got {type(raw).__name__}")
        return cls(doc["module"], doc["stamp"], doc["text"], tuple(pairs))


def _clean_facts(facts: Any, module: str) -> tuple[tuple[str, str], ...]:
    if isinstance(facts, Mapping):
        facts = list(facts.items())
    if not isinstance(facts, (list, tuple)):
        raise StateQAError(f"state summary of {module}: facts must be key/value pairs, got {type(facts).__name__}")
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, pair in enumerate(facts):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise StateQAError(f"state summary of {module}: facts[{i}] is not a key/value pair: {pair!r}")
        k, v = pair
        if not isinstance(k, str) or not k.strip():
            raise StateQAError(f"state summary of {module}: facts[{i}]: the key must be non-empty text, got {k!r}")
        if not isinstance(v, str):
            raise StateQAError(f"state summary of {module}: facts[{i}] ({k}): the value must be text, "
                               f"got {type(v).__name__}")
        k = _clip(k, MAX_KEY_CHARS)
        if k in seen:
            continue  # the first value of a key wins
        seen.add(k)
        out.append((k, _clip(v, MAX_VALUE_CHARS)))
    if len(out) > MAX_FACTS:
        dropped = len(out) - (MAX_FACTS - 1)
        out = out[: MAX_FACTS - 1] + [("facts_dropped", str(dropped))]
    return tuple(out)


def make_summary(module: str, text: str, facts: Iterable[tuple[str, Any]] = (), stamp: float | None = None
                 ) -> StateSummary:
    """A summary with values turned into text (None facts skipped) and ``stamp`` defaulting to now."""
    pairs = [(k, v if isinstance(v, str) else str(v)) for k, v in facts if v is not None]
    return StateSummary(module, time.time() if stamp is None else stamp, text, tuple(pairs))


# --------------------------------------------------------------------------- history
@dataclass
class _Track:
    stamps: list[float] = field(default_factory=list)
    items: list[StateSummary] = field(default_factory=list)


class SummaryHistory:
    """Per module: the latest summary and a bounded past, indexed by stamp."""

    def __init__(self, max_per_module: int = 50, max_age_s: float | None = None,
                 modules: Sequence[str] | None = None):
        if isinstance(max_per_module, bool) or not isinstance(max_per_module, int) or max_per_module < 1:
            raise StateQAError(f"summary history: max_per_module must be an integer >= 1, got {max_per_module!r}")
        if max_age_s is not None and not (isinstance(max_age_s, (int, float)) and max_age_s > 0):
            raise StateQAError(f"summary history: max_age_s must be positive seconds or None, got {max_age_s!r}")
        self.max_per_module = max_per_module
        self.max_age_s = None if max_age_s is None else float(max_age_s)
        self.allowed = None if modules is None else frozenset(modules)
        self._lock = threading.Lock()
        self._tracks: dict[str, _Track] = {}

    def add(self, summary: StateSummary) -> None:
        """Insert by stamp (a late summary goes to its place in the past); a summary with the
        same stamp as one already kept for the module replaces it."""
        if not isinstance(summary, StateSummary):
            raise StateQAError(f"summary history: expected a StateSummary, got {type(summary).__name__}")
        if self.allowed is not None and summary.module not in self.allowed:
            raise StateQAError(f"summary history: unknown module {summary.module!r}; "
                               f"known: {', '.join(sorted(self.allowed))}")
        with self._lock:
            tr = self._tracks.setdefault(summary.module, _Track())
            i = bisect.bisect_left(tr.stamps, summary.stamp)
            if i < len(tr.stamps) and tr.stamps[i] == summary.stamp:
                tr.items[i] = summary
            else:
                tr.stamps.insert(i, summary.stamp)
                tr.items.insert(i, summary)
            if len(tr.items) > self.max_per_module:
                cut = len(tr.items) - self.max_per_module
                del tr.stamps[:cut], tr.items[:cut]
            self._prune()

    def extend(self, summaries: Iterable[StateSummary]) -> None:
        for s in summaries:
            self.add(s)

    def _prune(self) -> None:
        if self.max_age_s is None:
            return
        newest = max((tr.stamps[-1] for tr in self._tracks.values() if tr.stamps), default=None)
        if newest is None:
            return
        oldest = newest - self.max_age_s
        for tr in self._tracks.values():
            # the latest of each module is kept however old: it is still the module's state
            cut = min(bisect.bisect_left(tr.stamps, oldest), len(tr.stamps) - 1)
            if cut > 0:
                del tr.stamps[:cut], tr.items[:cut]

    # ------------------------------------------------------------------ queries
    def modules(self) -> list[str]:
        with self._lock:
            return sorted(m for m, tr in self._tracks.items() if tr.items)

    def latest(self, module: str) -> StateSummary | None:
        with self._lock:
            tr = self._tracks.get(module)
            return tr.items[-1] if tr and tr.items else None

    def latest_all(self) -> dict[str, StateSummary]:
        with self._lock:
            return {m: tr.items[-1] for m, tr in self._tracks.items() if tr.items}

    def past(self, module: str) -> list[StateSummary]:
        """Everything kept for ``module``, oldest first (the last one is the latest)."""
        with self._lock:
            tr = self._tracks.get(module)
            return list(tr.items) if tr else []

    def at(self, module: str, t: float) -> StateSummary | None:
        """The summary of ``module`` that was current at time ``t`` (the last one at or before t)."""
        with self._lock:
            tr = self._tracks.get(module)
            if not tr:
                return None
            i = bisect.bisect_right(tr.stamps, t)
            return tr.items[i - 1] if i > 0 else None

    def window(self, start: float | None = None, end: float | None = None,
               modules: Iterable[str] | None = None) -> list[StateSummary]:
        """Summaries stamped in ``[start, end]`` (open ends when None), oldest first."""
        if start is not None and end is not None and end < start:
            raise StateQAError(f"summary history: the window ends ({end}) before it starts ({start})")
        wanted = None if modules is None else set(modules)
        out: list[StateSummary] = []
        with self._lock:
            for m, tr in self._tracks.items():
                if wanted is not None and m not in wanted:
                    continue
                lo = 0 if start is None else bisect.bisect_left(tr.stamps, start)
                hi = len(tr.stamps) if end is None else bisect.bisect_right(tr.stamps, end)
                out.extend(tr.items[lo:hi])
        out.sort(key=lambda s: (s.stamp, s.module))
        return out

    def what_happened(self, start: float | None = None, end: float | None = None,
                      modules: Iterable[str] | None = None) -> list[StateSummary]:
        """The summaries in the window that say something new: the first of each module in the
        window and then each one whose text differs from the module's previous one."""
        wanted = None if modules is None else set(modules)
        out = []
        with self._lock:
            tracks = {m: (list(tr.stamps), list(tr.items)) for m, tr in self._tracks.items()
                      if wanted is None or m in wanted}
        for m, (stamps, items) in tracks.items():
            lo = 0 if start is None else bisect.bisect_left(stamps, start)
            hi = len(stamps) if end is None else bisect.bisect_right(stamps, end)
            prev = items[lo - 1].text if lo > 0 else None
            for s in items[lo:hi]:
                if s.text != prev:
                    out.append(s)
                prev = s.text
        out.sort(key=lambda s: (s.stamp, s.module))
        return out

    def clear(self) -> None:
        with self._lock:
            self._tracks.clear()

    def __len__(self) -> int:
        with self._lock:
            return sum(len(tr.items) for tr in self._tracks.values())
