"""`make evaluate` runs in ROS mode: baseline rows are labelled by method and backend, a
refused setting is one line with status 2 before any node starts, and `ARGS` reaches the
command (issue 10, items 1-4)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _make_evaluate(tmp_path, args: str, backend: str = "rules", env: dict | None = None):
    out = tmp_path / "out"
    res = subprocess.run(["make", "--no-print-directory", "evaluate", "CASES=data/benchmark/dev", f"BACKEND={backend}",
                          f"OUT={out}", f"ARGS={args}"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, **(env or {})})
    return res, out


def test_precond_in_ros_mode_is_labelled_as_the_baseline(tmp_path):
    res, out = _make_evaluate(tmp_path, "--filter ^ki- --limit 2 --set method=precond")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    assert report["backend"] == "precond (rules (no LLM))" and report["mode"] == "ros" and report["cases"] == 2
    assert "pipeline ready in" in res.stdout


def test_refusals_in_ros_mode_are_one_line_with_status_2(tmp_path):
    res, _ = _make_evaluate(tmp_path, "--limit 1 --set method=llm_visual_obs")
    assert res.returncode == 2 and "llm_visual_obs needs a language model" in res.stderr
    assert "Traceback" not in res.stderr
    env = {"OPENAI_API_KEY": "", "RAIDER_LLM_BASE_URL": "", "OPENAI_BASE_URL": ""}
    res, _ = _make_evaluate(tmp_path, "--limit 1", backend="openai", env=env)
    assert res.returncode == 2 and "OPENAI_API_KEY" in res.stderr and "Traceback" not in res.stderr
