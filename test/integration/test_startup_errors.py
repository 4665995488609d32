"""Nodes that cannot start say why and exit with status 1 (no hang, no traceback)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from raider_ros.ros.graph import executable_path


@pytest.mark.parametrize("executable, params, expected", [
    ("sim_world", ["scene:=/nonexistent/room.scene.yaml"], "no such scene file"),
    ("sim_world", ["rate_hz:=0.0"], "rate_hz must be positive"),
    ("object_detector", ["backend:=yolo-nonexistent"], "unknown detector backend"),
    ("issue_detector", ["backend:=no-such-llm"], "unknown LLM backend"),
    ("issue_detector", ["backend:=scripted"], "needs a fixture"),
    ("human_interface", ["backend:=scripted"], "needs a scenario"),
    ("scene_graph", ["provider:=oracle"], "unknown provider"),
])
def test_bad_parameters_end_the_node_with_a_reason(executable, params, expected, tmp_path):
    cmd = [sys.executable, str(executable_path(executable)), "--ros-args"]
    for p in params:
        cmd += ["-p", p]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert expected in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_broken_scene_file_is_named(tmp_path):
    bad = tmp_path / "broken.scene.yaml"
    bad.write_text("format: raider-scene/1\nname: broken\nrobot: {pose: [0, 0, 0]}\nobjects:\n  - {id: A_1, type: A, "
                   "shape: box, center: [1, 0, 0.5], size: [0.1, -0.2, 0.1]}\n")
    proc = subprocess.run([sys.executable, str(executable_path("sim_world")), "--ros-args", "-p", f"scene:={bad}"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "broken.scene.yaml" in proc.stderr and "size" in proc.stderr
