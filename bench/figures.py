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


def shared_examples() -> Path | None:
    """The shared benchmark examples (written outside the project): $RAIDER_SHARED_DIR, else a
    `shared/` folder beside the repository or one of its parents; None when there is none
    (a user's clone), and the bench reports the project's own sets only."""
    import os
    env = os.environ.get("RAIDER_SHARED_DIR")
    candidates = [Path(env)] if env else [p / "shared" for p in Path(__file__).resolve().parents]
    for c in candidates:
        if (c / "benchmark" / "examples").is_dir():
            return c / "benchmark" / "examples"
    return None
