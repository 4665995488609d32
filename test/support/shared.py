"""The shared benchmark examples (../shared/benchmark/examples, written outside the project):
CI has them beside the repository, a user's clone has not. Tests of those files use
``requires_shared``; every other test runs on the project's own scenes."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _find() -> Path:
    """RAIDER_SHARED_DIR when set; else ``shared/`` beside the repository, or beside one of its
    ancestors (a git worktree lies deeper, e.g. ``<top>/wt/<branch>`` next to ``<top>/shared``)."""
    env = os.environ.get("RAIDER_SHARED_DIR")
    if env:
        return Path(env) / "benchmark" / "examples"
    for parent in ROOT.parents:
        candidate = parent / "shared" / "benchmark" / "examples"
        if (candidate / "kitchen_example.scene.yaml").is_file():
            return candidate
    return ROOT.parent / "shared" / "benchmark" / "examples"


EXAMPLES = _find()
KITCHEN_EXAMPLE = EXAMPLES / "kitchen_example.scene.yaml"
HAVE_SHARED = KITCHEN_EXAMPLE.is_file()
requires_shared = pytest.mark.skipif(
    not HAVE_SHARED,
    reason=f"the shared benchmark examples are not beside this clone ({EXAMPLES}); "
           "these tests check the project against them (CI has them; set RAIDER_SHARED_DIR to point elsewhere)")
