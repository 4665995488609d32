"""LLM backends by name: ``make_llm("openai", model=..., base_url=...)``,
``make_llm("scripted", fixture=...)``, ``make_llm("rules", ...)``.

A backend module registers its factory with :func:`register_llm` when imported; the modules
of the known names are imported on first use. ``"openai:<model>"`` is short for
``make_llm("openai", model=<model>)``.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

from raider_ros.agent.llm import LLM

_FACTORIES: dict[str, Callable[..., LLM]] = {}
_MODULES = {
    "openai": "raider_ros.agent.backends.openai_backend",
    "scripted": "raider_ros.agent.backends.scripted",
    "rules": "raider_ros.agent.backends.rules",
}


def register_llm(name: str, factory: Callable[..., LLM]) -> None:
    _FACTORIES[name] = factory


def available_llms() -> list[str]:
    return sorted(set(_FACTORIES) | set(_MODULES))


def make_llm(name: str, **config: Any) -> LLM:
    """Build the backend ``name`` with its keyword configuration. Unknown names and bad
    settings raise ValueError naming them."""
    base, _, model = name.partition(":")
    if model:
        config.setdefault("model", model)
    if base not in _FACTORIES and base in _MODULES:
        try:
            importlib.import_module(_MODULES[base])
        except ImportError as e:
            raise ValueError(f"LLM backend {base!r} is not available: {e}") from None
    factory = _FACTORIES.get(base)
    if factory is None:
        raise ValueError(f"unknown LLM backend {name!r} (known: {', '.join(available_llms())})")
    try:
        return factory(**config)
    except TypeError as e:
        raise ValueError(f"bad settings for LLM backend {base!r}: {e}") from None
