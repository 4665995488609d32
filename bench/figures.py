"""Shared by the bench scripts: print figures and write bench/results/<name>.json."""
from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def write_figures(name: str, figures: dict) -> Path:
    """Print one line per figure and write them as a flat JSON object of named numbers."""
    width = max((len(k) for k in figures), default=0)
    for k, v in figures.items():
        print(f"{k:<{width}}  {v}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"{name}.json"
    out.write_text(json.dumps(figures, indent=1) + "\n")
    print(f"wrote {out}")
    return out
