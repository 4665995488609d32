"""Evaluation of state QA (ROS-free): module-selection recall / precision, and answer
truthfulness.

Selection, per question with true labels T and predicted labels P (then averaged over the
questions, as the paper's "93.5 % recall with 62.7 % precision, 1.49 labels per query"):
recall = |P ∩ T| / |T|, precision = |P ∩ T| / |P|.

Truthfulness of an answer (:func:`truthful`): for a factual question, the answer contains every
expected mention (a mention may list alternatives); for an "unknown" question, it says it does
not know (a phrase of ``data/state_qa/answers.yaml: dont_know_markers``); and in both cases it
names no id (``Word_12``) and no capitalised name that appears neither in any summary nor in
the question. Words of the answerer's own templates (:func:`template_words`) are no names.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

from raider_ros.common.yamlfile import read_yaml_mapping

from .dataset import LabelledQuestion
from .modules import StateQAError, state_qa_dir
from .selector import Selection
from .summary import StateSummary


@dataclass(frozen=True)
class SelectionScores:
    recall: float
    precision: float
    mean_labels: float
    all_found: float          # share of questions whose every true label was selected
    n: int

    def as_dict(self, prefix: str = "") -> dict:
        return {f"{prefix}recall": round(self.recall, 4), f"{prefix}precision": round(self.precision, 4),
                f"{prefix}mean_labels": round(self.mean_labels, 3), f"{prefix}all_found": round(self.all_found, 4),
                f"{prefix}n": self.n}


def selection_scores(selections: Sequence[Selection], truth: Sequence[LabelledQuestion]) -> SelectionScores:
    if len(selections) != len(truth):
        raise StateQAError(f"selection scores: {len(selections)} selections for {len(truth)} questions")
    if not truth:
        raise StateQAError("selection scores: no questions")
    r = p = m = full = 0.0
    for sel, q in zip(selections, truth):
        P, T = set(sel.labels), set(q.labels)
        hit = len(P & T)
        r += hit / len(T)
        p += hit / len(P)
        m += len(P)
        full += T <= P
    n = len(truth)
    return SelectionScores(r / n, p / n, m / n, full / n, n)


# --------------------------------------------------------------------------- truthfulness
_ID = re.compile(r"\b[A-Z][A-Za-z0-9]*_\d+\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")


_PLACEHOLDER = re.compile(r"\{[a-z_]+\}")


def template_words() -> frozenset[str]:
    """The words of the answerer's own templates (lower case, placeholders left out): the fixed
    answers and history phrases of ``answers.yaml``, the fact sentences of ``facts.yaml`` and
    the module titles of ``modules.yaml``. They are the answerer's wording, not names of things
    ("Earlier (12 s ago), my issue detector reported: ..."), wherever they stand in an answer."""
    from .modules import load_catalog
    from .rules import load_answer_texts, load_fact_templates
    texts = list(load_answer_texts().values())
    texts += [t.say for t in load_fact_templates().values()]
    catalog = load_catalog()
    texts += [catalog.title(m) for m in catalog.names]
    return frozenset(w.lower() for t in texts for w in _WORD.findall(_PLACEHOLDER.sub(" ", t)))


@lru_cache(maxsize=1)
def _answer_words() -> tuple[tuple[str, ...], frozenset[str]]:
    doc, p = read_yaml_mapping(state_qa_dir() / "answers.yaml", what="answer templates", error=StateQAError)
    markers = doc.get("dont_know_markers")
    common = doc.get("capitalised_words_not_names", [])
    if not isinstance(markers, list) or not markers:
        raise StateQAError(f"{p}: dont_know_markers: expected a list of phrases")
    return tuple(str(m).lower() for m in markers), frozenset(str(w).lower() for w in common) | template_words()


def says_dont_know(answer: str) -> bool:
    low = " ".join(answer.lower().replace("\u2019", "'").split())
    return any(m in low for m in _answer_words()[0])


def named_things(text: str) -> set[str]:
    """Ids and capitalised words that are not the first word of a sentence."""
    found = set(_ID.findall(text))
    stripped = _ID.sub(" ", text)
    for sentence in re.split(r"(?<=[.!?:;])\s+|\n+|\"", stripped):
        words = _WORD.findall(sentence)
        for w in words[1:]:
            if w[0].isupper() and w.lower() not in _answer_words()[1]:
                found.add(w)
    return found


def invented_names(answer: str, summaries: Iterable[StateSummary], question: str = "") -> list[str]:
    """Names/ids in ``answer`` found in no summary (text, fact keys or values) nor the question."""
    corpus = [question]
    for s in summaries:
        corpus.append(s.text)
        corpus.extend(f"{k} {v}" for k, v in s.facts)
    blob = " ".join(corpus).lower()
    blob_words = set(re.findall(r"[a-z0-9_']+", blob))
    out = []
    for name in sorted(named_things(answer)):
        low = name.lower()
        if low not in blob_words and low.strip("'") not in blob_words:
            out.append(name)
    return out


def _mentioned(answer: str, mention: str | Sequence[str]) -> bool:
    alts = [mention] if isinstance(mention, str) else list(mention)
    low = answer.lower()
    return any(str(a).lower() in low for a in alts)


@dataclass(frozen=True)
class Truthfulness:
    truthful: bool
    missing: tuple[str, ...] = ()
    invented: tuple[str, ...] = ()
    said_dont_know: bool = False


def truthful(answer: str, *, expected: str | Sequence, summaries: Iterable[StateSummary],
             question: str = "") -> Truthfulness:
    """``expected``: "unknown", or a list of mentions (each a string or a list of alternatives)."""
    summaries = list(summaries)
    invented = tuple(invented_names(answer, summaries, question))
    dk = says_dont_know(answer)
    if isinstance(expected, str):
        if expected != "unknown":
            raise StateQAError(f"truthfulness: expected must be 'unknown' or a list of mentions, got {expected!r}")
        return Truthfulness(dk and not invented, (), invented, dk)
    missing = tuple(str(m if isinstance(m, str) else m[0]) for m in expected if not _mentioned(answer, m))
    return Truthfulness(not missing and not invented, missing, invented, dk)
