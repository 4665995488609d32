"""Scoring a reported outcome against a case, and aggregating scores (benchmark format v1).

Per case (docs/benchmark-format.md, "Scoring"):

* **Det** — the reported issue equals ``expected.issue``.
* **Grnd** — only for cases with ``expected.grounding`` (else ``None``): the reported
  grounding equals it as a set (ids compared case-insensitively), or, for category IA,
  ambiguity is reported and every candidate is named, in the reported grounding or in the
  explanation.
* **Expl** — Det holds and every ``mentions`` group is matched by the explanation's reason:
  case-insensitive, by stem (:mod:`raider_ros.evaluation.stem`). A list of three or more ids
  of different types (an inventory of what is in view) is no reason and matches nothing.

An object id, as a mention entry or an IA candidate, is also matched by its type name:
``Apple_1`` by "apple", ``CounterTop_1`` by "counter top" or "countertop", and a person by
the name face recognition reports for them. The type comes from the scene when given, else
from the id with its ``_N`` suffix removed.
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from raider_ros.sim.scene import Person, Scene

from .cases import Case
from .stem import matches_any, text_forms

_ID = re.compile(r"^([A-Za-z][A-Za-z0-9]*)_\d+$")


@dataclass(frozen=True)
class Score:
    grnd: bool | None
    det: bool
    expl: bool
    missed_mentions: tuple[tuple[str, ...], ...] = ()   # groups the explanation did not match
    unnamed_candidates: tuple[str, ...] = ()            # IA candidates neither grounded nor named


@dataclass
class CaseResult:
    """One case's outcome and score; ``to_dict`` is a row of ``report.json``'s ``results``."""
    id: str
    scene: str
    category: str
    query_type: str
    abstraction: str
    query: str
    expected_issue: str
    reported_issue: str | None
    grnd: bool | None
    det: bool
    expl: bool
    time_s: float
    llm_turns: int = 0
    tool_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    explanation: str = ""
    grounding: list[str] = field(default_factory=list)
    expected_grounding: list[str] | None = None
    status: str = "ok"
    error: str | None = None
    missed_mentions: list[list[str]] = field(default_factory=list)
    unnamed_candidates: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)         # "<number> <title>" per flow-manager warning
    tools_used: list[str] = field(default_factory=list)       # tool names called, in order
    failure_reason: str | None = None                         # see classify_failure (None: Expl holds)
    recovery_valid: bool | None = None                        # Recov_Plan (None: not scored)
    recovery_plan: str = ""
    recovery_error: str | None = None
    retrieval: dict | None = None                             # scene-graph retrieval (None: none ran)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["expected"] = d.pop("expected_issue")
        d["reported"] = d.pop("reported_issue")
        d["tokens"] = {"prompt": self.prompt_tokens, "completion": self.completion_tokens}
        return d


# --------------------------------------------------------------------------- matching
def aliases(entity_id: str, scene: Scene | None = None) -> list[str]:
    """Words that name an entity: its id, its type name, and a person's recognised name."""
    out = [entity_id]
    ent = scene.get(entity_id) if scene is not None else None
    if ent is not None:
        out.append(ent.type)
        if isinstance(ent, Person) and ent.name:
            out.append(ent.name)
    else:
        m = _ID.match(entity_id)
        if m:
            out.append(m.group(1))
    return out


def _is_id(entry: str, scene: Scene | None) -> bool:
    return bool(_ID.match(entry)) or (scene is not None and scene.get(entry) is not None)


def expand_entries(entries: Iterable[str], scene: Scene | None = None) -> list[str]:
    """Mention entries with every object id replaced by its aliases."""
    out: list[str] = []
    for e in entries:
        out.extend(aliases(e, scene) if _is_id(e, scene) else [e])
    return out


_ID_WORD = r"[A-Z][A-Za-z0-9]*_\d+"
_ID_RUN = re.compile(rf"{_ID_WORD}(?:\s*(?:,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+){_ID_WORD}){{2,}}")


def reason_text(explanation: str, scene: Scene | None = None) -> str:
    """The explanation without inventories: a run of three or more ids of different types
    ("Apple_1, Mug_1, Knife_1 and Bowl_1") lists what is there and gives no reason, so its
    words earn no mention. A run of one type (the candidates of an ambiguity) stays."""
    def keep(m: re.Match) -> str:
        ids = re.findall(_ID_WORD, m.group(0))
        types = {(scene.get(i).type if scene is not None and scene.get(i) is not None else i.rsplit("_", 1)[0])
                 for i in ids}
        return m.group(0) if len(types) == 1 else " "
    return _ID_RUN.sub(keep, explanation or "")


def missed_mentions(explanation: str, groups: Sequence[Sequence[str]],
                    scene: Scene | None = None) -> list[tuple[str, ...]]:
    """The mention groups the explanation's reason (:func:`reason_text`) does not match
    (empty: all matched)."""
    forms = text_forms(reason_text(explanation, scene))
    return [tuple(g) for g in groups if not matches_any(forms, expand_entries(g, scene))]


def is_named(entity_id: str, explanation: str, scene: Scene | None = None) -> bool:
    return matches_any(text_forms(explanation or ""), aliases(entity_id, scene))


# --------------------------------------------------------------------------- scoring
def score_case(case: Case, reported_issue: str | None, explanation: str | None,
               grounding: Iterable[str] | None, scene: Scene | None = None) -> Score:
    """Grnd / Det / Expl of one outcome. ``scene`` (the case's world) sharpens type names."""
    explanation = explanation or ""
    reported = {str(g).strip().lower() for g in (grounding or [])}
    issue = (reported_issue or "").strip().lower() or None
    det = issue == case.expected_issue

    grnd: bool | None = None
    unnamed: list[str] = []
    if case.grounding is not None:
        expected = {g.lower() for g in case.grounding}
        grnd = issue is not None and reported == expected      # an errored run grounds nothing
        if not grnd and case.category == "IA" and issue == "ambiguity":
            unnamed = [c for c in case.grounding
                       if c.lower() not in reported and not is_named(c, explanation, scene)]
            grnd = not unnamed

    missed = missed_mentions(explanation, case.mentions, scene) if det else list(case.mentions)
    return Score(grnd=grnd, det=det, expl=det and not missed,
                 missed_mentions=tuple(missed), unnamed_candidates=tuple(unnamed))


# --------------------------------------------------------------------------- aggregation
def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def _fraction(flags: Sequence[bool]) -> float | None:
    return sum(1 for f in flags if f) / len(flags) if flags else None


def summarize(results: Sequence[CaseResult]) -> dict[str, Any]:
    """Grnd, Det and Expl as fractions (Grnd over the cases with grounding), Recov_Plan (over the
    cases with an expected recovery whose issue was explained), warnings, timing and cost."""
    times = [r.time_s for r in results if r.time_s is not None and math.isfinite(r.time_s)]
    grounded = [bool(r.grnd) for r in results if r.grnd is not None]
    recovered = [bool(r.recovery_valid) for r in results if r.recovery_valid is not None]
    return {
        "recov_plan": _fraction(recovered),
        "recov_plan_cases": len(recovered),
        "warning_rate": _fraction([bool(r.warnings) for r in results]),
        "cases": len(results),
        "grnd_cases": len(grounded),
        "grnd": _fraction(grounded),
        "det": _fraction([r.det for r in results]),
        "expl": _fraction([r.expl for r in results]),
        "errors": sum(1 for r in results if r.status != "ok"),
        "time_mean_s": _mean(times),
        "time_p95_s": float(np.percentile(times, 95)) if times else None,
        "llm_turns_mean": _mean([r.llm_turns for r in results]),
        "tool_calls_mean": _mean([r.tool_calls for r in results]),
        "prompt_tokens_mean": _mean([r.prompt_tokens for r in results]),
        "completion_tokens_mean": _mean([r.completion_tokens for r in results]),
    }


def breakdown(results: Sequence[CaseResult], key: str, order: Sequence[str] = ()) -> dict[str, Any]:
    """``summarize`` per value of ``key`` (category, query_type, abstraction), known order first."""
    groups: dict[str, list[CaseResult]] = {}
    for r in results:
        groups.setdefault(getattr(r, key), []).append(r)
    keys = [k for k in order if k in groups] + sorted(k for k in groups if k not in order)
    return {k: summarize(groups[k]) for k in keys}


# --------------------------------------------------------------------------- failure reasons
FAILURE_REASONS = ("grounding", "missed check", "wrong reasoning", "wrong format", "error")
_FORMAT_ERRORS = re.compile(r"off-protocol|garbage|no final response|unusable|final answer|not valid json|"
                            r"could not be parsed|format", re.I)


def _decisive_tools() -> dict[str, set[str]]:
    from raider_ros.common.paths import data_dir
    from raider_ros.common.yamlfile import read_yaml_mapping
    doc, _ = read_yaml_mapping(data_dir() / "evaluation" / "decisive_tools.yaml", what="decisive tools file")
    return {str(k): set(v or ()) for k, v in doc.items()}


def classify_failure(case: Case, result: CaseResult) -> str | None:
    """Why a case failed, where it can be told from the outcome alone (paper Fig. 12's
    reasons): ``wrong format`` (the run ended on replies off the protocol), ``error`` (no
    answer for another reason: time limit, unreachable LLM, a node down), ``grounding`` (the
    reported grounding is not the expected one), ``missed check`` (no call of the tools that
    decide the expected category, data/evaluation/decisive_tools.yaml), else ``wrong
    reasoning``. None when the explanation is right."""
    if result.expl:
        return None
    if result.status != "ok":
        return "wrong format" if _FORMAT_ERRORS.search(result.error or "") else "error"
    if result.grnd is False:
        return "grounding"
    needed = _decisive_tools().get(case.category)
    if needed and not needed & set(result.tools_used):
        return "missed check"
    return "wrong reasoning"


def failure_counts(results: Sequence[CaseResult]) -> dict[str, int]:
    counts = {r: 0 for r in FAILURE_REASONS}
    for r in results:
        if r.failure_reason:
            counts[r.failure_reason] = counts.get(r.failure_reason, 0) + 1
    return counts


def warning_counts(results: Sequence[CaseResult]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in results:
        for w in r.warnings:
            counts[w] = counts.get(w, 0) + 1
    return dict(sorted(counts.items()))
