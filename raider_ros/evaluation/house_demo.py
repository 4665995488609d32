"""A demo moment for house-scale retrieval: one query on a scene embedded in a house, the
tokens of the scene's representation with the whole graph and with the retrieved subgraph,
and the retrieved ids (for raider_ros/cli/demo.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from raider_ros.common.paths import data_dir
from raider_ros.sim.scene import load_scene

from .local import LocalPipeline


def show_retrieval(query: str = "Please pick up the mug.", scene: str | Path | None = None, n_objects: int = 1000,
                   print_fn: Callable[[str], None] = print) -> dict:
    """Print and return the tokens (full vs rag), the first message's tokens and the retrieved ids."""
    from raider_ros.retrieval.scene_text import scene_text
    pipe = LocalPipeline(scale=n_objects, retrieval="rag")
    pipe.prepare(load_scene(scene or data_dir() / "scenes" / "kitchen.scene.yaml"), None)
    sub = pipe.retriever.retrieve(query)
    rag, full = scene_text(sub), scene_text(pipe.retriever.retrieve(query, mode="full"))
    out = {"query": query, "objects": sub.total_objects, "full_tokens": full.tokens, "rag_tokens": rag.tokens,
           "retrieved": sub.ids, "retrieve_ms": round(sub.elapsed_ms, 1)}
    print_fn(f"{query!r} in a house of {sub.total_objects} objects: the whole scene graph is {full.tokens} tokens, "
             f"the retrieved subgraph {rag.tokens} ({full.tokens / max(1, rag.tokens):.0f}x fewer, "
             f"{sub.elapsed_ms:.0f} ms)")
    print_fn(f"retrieved: {', '.join(sub.ids)}")
    return out
