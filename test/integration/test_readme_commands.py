"""The README's commands work exactly as written: every ```sh block (but `make test`, which is
this suite, and `make demo`, which test_demo.py runs), the ```python client against a running
graph, and the ```yaml scene."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from raider_ros.ros.graph import NodeGraph
from raider_ros.sim.plausibility import check_plausibility
from raider_ros.sim.scene import load_yaml_text, parse_scene
from support.graph import PERCEPTION, GraphClient

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
ELSEWHERE = {"make test": "this suite", "make demo": "test/integration/test_demo.py"}


def _blocks(tag: str) -> list[str]:
    return re.findall(rf"^```{tag}\n(.*?)^```", README, re.M | re.S)


def _commands() -> list[str]:
    out = []
    for block in _blocks("sh"):
        for line in block.splitlines():
            cmd = re.sub(r"\s+#\s.*$", "", line).strip()          # drop a trailing "  # comment"
            if cmd and not any(cmd.startswith(k) for k in ELSEWHERE):
                out.append(cmd)
    return out


def test_the_readme_has_commands_to_run():
    assert len(_commands()) >= 3 and _blocks("python") and _blocks("yaml")


@pytest.mark.parametrize("command", _commands())
def test_sh_command_runs_as_written(command, tmp_path):
    script = f"set -e\ncd {ROOT}\n" + (command if command.startswith("source ") else f"source scripts/env.sh\n{command}")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY",)}
    res = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=900, env=env)
    assert res.returncode == 0, f"{command}\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"


def test_the_python_client_gets_an_answer(tmp_path):
    (code,) = _blocks("python")
    with NodeGraph(tmp_path / "logs") as graph:
        graph.start("sim_world", {"skill_duration_s": 0.0})
        for name in PERCEPTION:
            graph.start(name, {"preload_user_info": False} if name == "scene_graph" else None)
        graph.start("issue_detector")
        client = GraphClient(graph)
        try:
            client.wait_refreshed(client.apply(""), timeout=60)
        finally:
            client.close()
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    status, issue, *_ = res.stdout.split()
    assert (status, issue) == ("ok", "none"), res.stdout


def test_the_scene_example_loads_and_is_plausible():
    (text,) = _blocks("yaml")
    scene = parse_scene(load_yaml_text(text, "README"), "README")
    assert check_plausibility(scene) == []
