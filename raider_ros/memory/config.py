"""``data/memory/learning.yaml``: retrieval parameters, lesson thresholds and the offline
vocabulary of corrections (format ``raider-memory-learning/1``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from raider_ros.common.paths import data_dir
from raider_ros.common.yamlfile import read_yaml_mapping

LEARNING_FORMAT = "raider-memory-learning/1"
EDIT_ACTIONS = ("close", "open", "turn_on", "turn_off")


class LearningConfigError(ValueError):
    """learning.yaml does not follow the format; names the file and the field."""


@dataclass(frozen=True)
class LearningConfig:
    gamma: float = 0.6
    k: int = 8
    recent: int = 3
    task_threshold: float = 0.7
    recovery_threshold: float = 0.4
    role_threshold: float = 0.7
    feedback: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    corrections: Mapping[str, Any] = field(default_factory=dict)
    sentences: Mapping[str, Any] = field(default_factory=dict)
    source: str = "<defaults>"

    @classmethod
    def load(cls, path: str | Path | None = None) -> "LearningConfig":
        doc, p = read_yaml_mapping(path or (data_dir() / "memory" / "learning.yaml"),
                                   what="learning configuration", error=LearningConfigError)

        def fail(where: str, msg: str) -> LearningConfigError:
            return LearningConfigError(f"{p}: {where}: {msg}")

        if doc.get("format") != LEARNING_FORMAT:
            raise fail("format", f"expected {LEARNING_FORMAT!r}, got {doc.get('format')!r}")
        r = _mapping(doc, "retrieval", fail)
        les = _mapping(doc, "lessons", fail)
        gamma = _number(r, "gamma", fail, "retrieval", lo=0.0, hi=1.0)
        if gamma <= 0:
            raise fail("retrieval.gamma", "expected a number in (0, 1]")
        k = r.get("k")
        recent = r.get("recent")
        for name, v in (("k", k), ("recent", recent)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise fail(f"retrieval.{name}", f"expected a positive integer, got {v!r}")
        fb = _mapping(doc, "feedback", fail)
        feedback = {key: _phrases(fb, key, fail, "feedback")
                    for key in ("learn_request", "correction", "complaint", "negative_start", "satisfied")}
        cor = _mapping(doc, "corrections", fail)
        corrections: dict[str, Any] = {}
        for key in ("clause_breaks", "situation_words", "fillers", "deliver_verbs", "move_verbs",
                    "move_closer_words", "before_words", "stop_words", "object_ends"):
            corrections[key] = _phrases(cor, key, fail, "corrections")
        av = _mapping(cor, "action_verbs", fail, "corrections.")
        unknown = set(av) - set(EDIT_ACTIONS)
        if unknown:
            raise fail(f"corrections.action_verbs.{sorted(unknown)[0]}",
                       f"not an action a correction may add; expected {', '.join(EDIT_ACTIONS)}")
        corrections["action_verbs"] = {a: _phrases(av, a, fail, "corrections.action_verbs") for a in av}
        corrections["object_similarity"] = _number(cor, "object_similarity", fail, "corrections", lo=-1, hi=1)
        sentences = _mapping(doc, "sentences", fail)
        for key, sub in (("problem", ("deliver", "action", "move_closer")),
                         ("improvement", ("deliver", "action_after", "action_before", "move_closer"))):
            m = _mapping(sentences, key, fail, "sentences.")
            for s in sub:
                if not isinstance(m.get(s), str):
                    raise fail(f"sentences.{key}.{s}", "expected a sentence")
        for key in ("no_problem", "same_plan"):
            if not isinstance(sentences.get(key), str):
                raise fail(f"sentences.{key}", "expected a sentence")
        return cls(gamma=gamma, k=k, recent=recent,
                   task_threshold=_number(les, "task_threshold", fail, "lessons", lo=-1, hi=1),
                   recovery_threshold=_number(les, "recovery_threshold", fail, "lessons", lo=-1, hi=1),
                   role_threshold=_number(les, "role_threshold", fail, "lessons", lo=-1, hi=2),
                   feedback=feedback, corrections=corrections, sentences=sentences, source=str(p))


def _mapping(doc: Mapping, key: str, fail, prefix: str = "") -> Mapping:
    v = doc.get(key)
    if not isinstance(v, Mapping):
        raise fail(f"{prefix}{key}", "expected a mapping")
    return v


def _number(doc: Mapping, key: str, fail, prefix: str, lo: float, hi: float) -> float:
    v = doc.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
        raise fail(f"{prefix}.{key}", f"expected a number in [{lo}, {hi}], got {v!r}")
    return float(v)


def _phrases(doc: Mapping, key: str, fail, prefix: str) -> tuple[str, ...]:
    v = doc.get(key)
    if not isinstance(v, list) or not v or not all(isinstance(x, str) and x.strip() for x in v):
        raise fail(f"{prefix}.{key}", "expected a non-empty list of words or phrases")
    return tuple(" ".join(x.lower().replace("\u2019", "'").split()) for x in v)
