"""Constraint files (format ``raider-constraints/1``): the rules a robot starts with.

A file under ``data/safety/constraints/`` (or any path)::

    format: raider-constraints/1
    constraints:
      - "You have to enter the living room before the bathroom."        # English: translated
      - {ltl: "G !switched_on(stove)"}                                    # a formula
      - {ltl: "G !pick(knife)", text: "Never pick up the knife."}        # a formula with its sentence

:func:`load_constraints` returns the entries as ``{"ltl": ..., "text": ...}`` mappings, ready
for :meth:`SafetyMonitor.add_many` (all or none). Errors name the file and the entry.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from raider_ros.common.paths import data_dir
from raider_ros.common.yamlfile import read_yaml_mapping

from .ltl import LTLError

FORMAT = "raider-constraints/1"


class ConstraintFileError(LTLError):
    """A constraints file that cannot be read; names the file and the entry."""


def constraints_dir() -> Path:
    return data_dir() / "safety" / "constraints"


def load_constraints(spec: str | Path) -> tuple[list[dict[str, Any]], Path]:
    """``spec``: a path, or a name under ``data/safety/constraints`` (with or without .yaml)."""
    doc, p = read_yaml_mapping(spec, folder=constraints_dir(), what="constraints file", error=ConstraintFileError)
    if doc.get("format") != FORMAT:
        raise ConstraintFileError(f"{p}: format: expected {FORMAT!r}, got {doc.get('format')!r}")
    raw = doc.get("constraints")
    if not isinstance(raw, list):
        raise ConstraintFileError(f"{p}: constraints: expected a list of sentences or {{ltl, text}} mappings")
    out: list[dict[str, Any]] = []
    for i, entry in enumerate(raw):
        where = f"{p}: constraints[{i}]"
        if isinstance(entry, str) and entry.strip():
            out.append({"ltl": None, "text": entry.strip()})
            continue
        if not isinstance(entry, dict):
            raise ConstraintFileError(f"{where}: expected a sentence or a mapping with 'ltl' and/or 'text', got {entry!r}")
        unknown = sorted(set(entry) - {"ltl", "text"})
        if unknown:
            raise ConstraintFileError(f"{where}: unknown key {unknown[0]!r}; expected 'ltl' and/or 'text'")
        ltl, text = entry.get("ltl"), entry.get("text")
        for key, v in (("ltl", ltl), ("text", text)):
            if v is not None and (not isinstance(v, str) or not v.strip()):
                raise ConstraintFileError(f"{where}.{key}: expected a non-empty string, got {v!r}")
        if ltl is None and text is None:
            raise ConstraintFileError(f"{where}: give a formula ('ltl') or a sentence ('text')")
        out.append({"ltl": ltl.strip() if ltl else None, "text": text.strip() if text else None})
    return out, p
