"""Module selection (RACCOON §III-A): which modules' state answers a question.

The training questions are embedded with all-MiniLM-L6-v2 (the vector store); a linear
support vector machine (scikit-learn ``LinearSVC``, one-vs-rest) gives the primary class, and
a k-nearest-neighbour search in the store adds the labels of the nearest questions, up to
``max_labels`` in all (the paper's SVM+2NN: at most three). A question with several labels
trains the SVM once per label. ``toxic`` as the primary class means the request is refused,
``unknown`` that the question is not about the robot's state.

Settings are data (``data/state_qa/selector.yaml``, tuned by leave-one-out on the training
split only): ``svm_margin`` also takes the SVM's runner-up classes whose decision value is
within that margin of the best (None: the best only); ``knn_margin`` keeps only the
neighbours whose similarity is within that margin of the nearest one (None: all k).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Sequence

import numpy as np

from raider_ros.common.yamlfile import read_yaml_mapping

from .dataset import LabelledQuestion, load_questions
from .modules import CONVENIENCE, TOXIC, UNKNOWN, ModuleCatalog, StateQAError, load_catalog, state_qa_dir
from raider_ros.common.shared import Shared

Encoder = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class SelectorConfig:
    C: float = 1.0
    class_weight: str | None = None
    svm_margin: float | None = None
    k: int = 2                      # nearest neighbours whose labels may be added
    max_labels: int = 3
    knn_margin: float | None = None
    knn_min_similarity: float = 0.0

    @classmethod
    def load(cls, path: Any = None) -> "SelectorConfig":
        doc, p = read_yaml_mapping(path or state_qa_dir() / "selector.yaml", what="selector settings",
                                   error=StateQAError)
        known = {f.name for f in fields(cls)}
        bad = sorted(set(doc) - known - {"format"})
        if bad:
            raise StateQAError(f"{p}: unknown setting {bad[0]!r}; known: {', '.join(sorted(known))}")
        cfg = cls(**{k: v for k, v in doc.items() if k in known})
        cfg.check(str(p))
        return cfg

    def check(self, source: str = "selector settings") -> None:
        if self.class_weight not in (None, "balanced"):
            raise StateQAError(f"{source}: class_weight: expected null or balanced, got {self.class_weight!r}")
        if self.svm_margin is not None and not (isinstance(self.svm_margin, (int, float)) and self.svm_margin >= 0):
            raise StateQAError(f"{source}: svm_margin must be >= 0 or null, got {self.svm_margin!r}")
        if not isinstance(self.C, (int, float)) or self.C <= 0:
            raise StateQAError(f"{source}: C must be positive, got {self.C!r}")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 0:
            raise StateQAError(f"{source}: k must be an integer >= 0, got {self.k!r}")
        if isinstance(self.max_labels, bool) or not isinstance(self.max_labels, int) or not 1 <= self.max_labels <= 3:
            raise StateQAError(f"{source}: max_labels must be 1, 2 or 3, got {self.max_labels!r}")
        if self.knn_margin is not None and not (isinstance(self.knn_margin, (int, float)) and self.knn_margin >= 0):
            raise StateQAError(f"{source}: knn_margin must be >= 0 or null, got {self.knn_margin!r}")


@dataclass(frozen=True)
class Neighbour:
    text: str
    labels: tuple[str, ...]
    similarity: float


@dataclass(frozen=True)
class Selection:
    labels: tuple[str, ...]                 # SVM class(es) first, then kNN additions; at most max_labels
    neighbours: tuple[Neighbour, ...] = field(default=())

    @property
    def primary(self) -> str:
        return self.labels[0]

    @property
    def modules(self) -> tuple[str, ...]:
        """The labels that are robot modules (without the convenience classes)."""
        return tuple(x for x in self.labels if x not in CONVENIENCE)

    @property
    def refused(self) -> bool:
        return self.primary == TOXIC

    @property
    def unknown(self) -> bool:
        return self.primary == UNKNOWN


class ModuleSelector:
    """``select(question) -> Selection``. Embeds the store and fits the SVM on first use."""

    def __init__(self, questions: Sequence[LabelledQuestion], *, config: SelectorConfig | None = None,
                 encoder: Encoder | None = None, catalog: ModuleCatalog | None = None):
        if not questions:
            raise StateQAError("module selector: no training questions")
        self.questions = list(questions)
        self.config = config or SelectorConfig()
        self.config.check()
        self.catalog = catalog or load_catalog()
        self._encoder = encoder
        self._lock = threading.Lock()
        self._X: np.ndarray | None = None
        self._svm = None

    @classmethod
    def from_data(cls, split: str = "train", **kw: Any) -> "ModuleSelector":
        return cls(load_questions(split), config=kw.pop("config", None) or SelectorConfig.load(), **kw)

    # ------------------------------------------------------------------ fitting
    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        if self._encoder is None:
            from . import embedding
            self._encoder = embedding.encode
        X = np.asarray(self._encoder(list(texts)), dtype=np.float32)
        if X.ndim != 2 or X.shape[0] != len(texts):
            raise StateQAError(f"module selector: the encoder returned shape {X.shape} for {len(texts)} texts")
        return X

    def embeddings(self) -> np.ndarray:
        with self._lock:
            if self._X is None:
                self._X = self._encode([q.text for q in self.questions])
            return self._X

    def _fit(self, X: np.ndarray, qs: Sequence[LabelledQuestion]):
        from sklearn.svm import LinearSVC
        rows, ys = [], []
        for x, q in zip(X, qs):
            for lab in q.labels:
                rows.append(x)
                ys.append(lab)
        c = self.config
        svm = LinearSVC(C=float(c.C), class_weight=c.class_weight, random_state=0)
        svm.fit(np.stack(rows), np.asarray(ys))
        return svm

    def _svm_labels(self, svm, q: np.ndarray) -> list[str]:
        d = np.atleast_2d(svm.decision_function(q[None, :]))[0]
        classes = [str(c) for c in svm.classes_]
        if d.shape[0] != len(classes):          # two classes only: one decision value
            d = np.array([-d[0], d[0]])
        order = np.argsort(-d)
        out = [classes[order[0]]]
        m = self.config.svm_margin
        if m is not None:
            out += [classes[i] for i in order[1:self.config.max_labels] if d[i] >= d[order[0]] - m]
        return out

    def _model(self):
        X = self.embeddings()
        with self._lock:
            if self._svm is None:
                self._svm = self._fit(X, self.questions)
            return self._svm

    # ------------------------------------------------------------------ selecting
    def select(self, question: str) -> Selection:
        if not isinstance(question, str) or not question.strip():
            raise StateQAError("module selector: the question is empty")
        return self.select_many([question])[0]

    def select_many(self, questions: Sequence[str]) -> list[Selection]:
        svm = self._model()
        X = self.embeddings()
        Q = self._encode(list(questions))
        return [self._combine(self._svm_labels(svm, q), X @ q, self.questions) for q in Q]

    def _combine(self, svm_labels: list[str], sims: np.ndarray, store: Sequence[LabelledQuestion],
                 exclude: int | None = None) -> Selection:
        c = self.config
        order = np.argsort(-sims)
        if exclude is not None:
            order = order[order != exclude]
        nearest = order[: c.k]
        labels = list(svm_labels[: c.max_labels])
        neighbours = []
        top = float(sims[nearest[0]]) if len(nearest) else 0.0
        for i in nearest:
            s = float(sims[i])
            neighbours.append(Neighbour(store[i].text, store[i].labels, s))
            if s < c.knn_min_similarity or (c.knn_margin is not None and s < top - c.knn_margin):
                continue
            for lab in store[i].labels:
                if lab not in labels and len(labels) < c.max_labels:
                    labels.append(lab)
        return Selection(tuple(labels), tuple(neighbours))

    def leave_one_out(self) -> list[Selection]:
        """Each training question classified by a selector fitted on all the others."""
        X = self.embeddings()
        out = []
        idx = np.arange(len(self.questions))
        for i in idx:
            keep = idx != i
            qs = [q for j, q in enumerate(self.questions) if j != i]
            svm = self._fit(X[keep], qs)
            out.append(self._combine(self._svm_labels(svm, X[i]), X @ X[i], self.questions, exclude=int(i)))
        return out


_default = Shared(lambda: ModuleSelector.from_data("train"))


def default_selector() -> ModuleSelector:
    """The selector trained on ``data/state_qa/train.yaml`` with ``selector.yaml``; one per
    process, built on first use."""
    return _default()
