"""Labelled questions for the module selector (``data/state_qa/train.yaml``, ``heldout.yaml``)::

    format: raider-stateqa-questions/1
    split: train
    questions:
      - {q: "What are you holding?", labels: [robot]}
      - {q: "What graspable objects do you see now?", labels: [world_model, robot]}
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from raider_ros.common.yamlfile import read_yaml_mapping

from .modules import ModuleCatalog, StateQAError, load_catalog, state_qa_dir

QUESTIONS_FORMAT = "raider-stateqa-questions/1"
SPLITS = ("train", "heldout")


@dataclass(frozen=True)
class LabelledQuestion:
    text: str
    labels: tuple[str, ...]


def load_questions(spec: str | Path = "train", catalog: ModuleCatalog | None = None) -> list[LabelledQuestion]:
    """A split name (train | heldout) or a file path."""
    catalog = catalog or load_catalog()
    path = state_qa_dir() / f"{spec}.yaml" if spec in SPLITS else Path(spec)
    doc, p = read_yaml_mapping(path, what="question file", error=StateQAError)
    if doc.get("format", QUESTIONS_FORMAT) != QUESTIONS_FORMAT:
        raise StateQAError(f"{p}: format: expected {QUESTIONS_FORMAT!r}, got {doc.get('format')!r}")
    raw = doc.get("questions")
    if not isinstance(raw, list) or not raw:
        raise StateQAError(f"{p}: questions: expected a non-empty list")
    classes = set(catalog.classes)
    out = []
    for i, e in enumerate(raw):
        where = f"{p}: questions[{i}]"
        if not isinstance(e, dict) or not isinstance(e.get("q"), str) or not e["q"].strip():
            raise StateQAError(f"{where}: expected {{q: text, labels: [...]}}")
        labels = e.get("labels")
        if not isinstance(labels, list) or not labels or not all(isinstance(x, str) for x in labels):
            raise StateQAError(f"{where} ({e['q']!r}): labels: expected a non-empty list of class names")
        bad = [x for x in labels if x not in classes]
        if bad:
            raise StateQAError(f"{where} ({e['q']!r}): unknown class {bad[0]!r}; known: {', '.join(catalog.classes)}")
        out.append(LabelledQuestion(" ".join(e["q"].split()), tuple(dict.fromkeys(labels))))
    return out
