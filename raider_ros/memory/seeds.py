"""The memory's prior knowledge: ``data/memory/seed_examples.yaml`` (format
``raider-memory-seeds/1``, described in the file and in docs/memory.md)."""
from __future__ import annotations

from pathlib import Path

from raider_ros.common.paths import data_dir
from raider_ros.common.yamlfile import read_yaml_mapping
from raider_ros.memory.episode import Episode, EpisodeError
from raider_ros.recovery.plan import PlanError, parse_plan

SEEDS_FORMAT = "raider-memory-seeds/1"


class SeedError(ValueError):
    """A seed file that does not follow the format; names the file and the example."""


def default_seed_file() -> Path:
    return data_dir() / "memory" / "seed_examples.yaml"


def load_seeds(path: str | Path | None = None) -> list[Episode]:
    doc, p = read_yaml_mapping(path or default_seed_file(), what="seed example file", error=SeedError)
    if doc.get("format") != SEEDS_FORMAT:
        raise SeedError(f"{p}: format: expected {SEEDS_FORMAT!r}, got {doc.get('format')!r}")
    raw = doc.get("examples")
    if not isinstance(raw, list) or not raw:
        raise SeedError(f"{p}: examples: expected a non-empty list")
    out, keys = [], set()
    for i, entry in enumerate(raw):
        where = f"{p}: examples[{i}]"
        if not isinstance(entry, dict):
            raise SeedError(f"{where}: expected a mapping")
        key = entry.get("key")
        if not isinstance(key, str) or not key.strip():
            raise SeedError(f"{where}.key: expected a unique name")
        if key in keys:
            raise SeedError(f"{where}.key: {key!r} is used twice")
        keys.add(key)
        fields = dict(entry)
        fields.setdefault("source", f"seed file {p.name}")
        try:
            ep = Episode.from_dict({**fields, "kind": "seed"}, where=f"{where} ({key})")
        except EpisodeError as exc:
            raise SeedError(str(exc)) from None
        try:
            parse_plan(ep.plan)
        except PlanError as exc:
            raise SeedError(f"{where} ({key}).plan: {exc}") from None
        out.append(ep)
    return out
