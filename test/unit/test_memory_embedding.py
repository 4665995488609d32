"""The MiniLM encoder's fast path (TorchScript graph behind the tokenizer) gives the model's own
embeddings, and when it cannot be built the plain sentence-transformers wrapper answers."""
from __future__ import annotations

import numpy as np
import pytest

from raider_ros.memory.embedding import MiniLMEncoder, shared_encoder

SENTENCES = ["Could you fetch the book from the shelf?", "Switch off the lamp in the bedroom.",
             "No, you should have closed the fridge afterwards.", "bring",
             "query: open(Fridge_1), issue: unfeasibility, explanation: the robot's hands are full. robot holding: Egg_1"]


@pytest.fixture(scope="module")
def both():
    fast = shared_encoder()
    fast.encode(["load"])
    assert fast.wait_fast(600), fast.fast_path
    plain = MiniLMEncoder(fast=False)
    return fast, plain


def test_the_fast_path_is_built_and_gives_the_models_embeddings(both):
    fast, plain = both
    a, b = fast.encode(SENTENCES), plain.encode(SENTENCES)
    assert fast.fast_path == "torchscript" and plain.fast_path == "off"
    assert a.shape == b.shape == (len(SENTENCES), 384) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert float(np.min(np.sum(a * b, axis=1))) > 0.9999
    # one at a time (no padding) gives the same as in a batch (padding masked out)
    one = np.stack([fast.encode([s])[0] for s in SENTENCES])
    assert float(np.min(np.sum(one * a, axis=1))) > 0.9999


def test_more_than_one_batch_keeps_the_order(both):
    fast, _ = both
    texts = [f"bring me item number {i}" for i in range(70)]
    many = fast.encode(texts)
    assert many.shape == (70, 384)
    assert float(np.dot(many[69], fast.encode([texts[69]])[0])) > 0.9999
    assert fast.encode([]).shape == (0, 384)


class NotAMiniLM(list):
    """A model whose modules are not Transformer + mean Pooling."""

    def encode(self, texts, **kw):
        return np.ones((len(texts), 384), dtype=np.float32)


def test_a_model_laid_out_otherwise_keeps_the_plain_path():
    enc = MiniLMEncoder()
    enc._build_fast(NotAMiniLM([object(), object()]))
    assert enc.wait_fast(0) is False
    assert enc.fast_path.startswith("off (ValueError: expected Transformer + mean Pooling")
