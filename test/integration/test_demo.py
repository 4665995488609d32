"""`make demo`, exactly as the README writes it: the four tasks on the full node graph, offline (rules backend, scripted
person), must succeed with the interactions of the paper's Fig. 17, in the third the Safety Chip paper's example, and in
the fourth learning from a correction."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from support.demo_story import check_demo_story

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(900)     # four tasks, each starting its own graph: minutes on a loaded 2-core machine
def test_demo_runs_all_tasks_offline():
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "RAIDER_LLM_BASE_URL")}
    proc = subprocess.run(["make", "--no-print-directory", "demo"], cwd=ROOT, env=env,   # as the README says
                          capture_output=True, text=True, timeout=840)
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-2000:]
    check_demo_story(out)
