"""`pip install .` into a plain venv without the ROS wheels installs the ROS-free core and the
`raider-evaluate` console script, which scores a benchmark directory in local mode.

The venv is made offline: the distributions the core needs (requirements/core.txt and what
they require, found from the project venv's metadata) are linked into the new venv's
site-packages, nothing else, so no ROS wheel is there; then pip installs the project with
--no-index, as it would from a registry that already has the dependencies."""
from __future__ import annotations

import importlib.metadata as md
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("setup.py", "package.xml", "requirements", "raider_ros", "data", "config")


def _closure(names: list[str]) -> set[md.Distribution]:
    out: dict[str, md.Distribution] = {}
    todo = list(names)
    while todo:
        req = Requirement(todo.pop())
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        try:
            dist = md.distribution(req.name)
        except md.PackageNotFoundError:
            continue                      # optional or platform-specific: pip will tell
        key = dist.metadata["Name"].lower()
        if key not in out:
            out[key] = dist
            todo += dist.requires or []
    return set(out.values())


def _core_requirements() -> list[str]:
    lines = (ROOT / "requirements" / "core.txt").read_text().splitlines()
    return [ln.split("#")[0].strip() for ln in lines if ln.split("#")[0].strip()]


@pytest.fixture(scope="module")
def plain_venv(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pip")
    venv = tmp / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = Path(subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    ours = Path(sysconfig.get_paths()["purelib"])
    dists = _closure(_core_requirements() + ["setuptools", "wheel"])
    assert not any(d.metadata["Name"].lower().startswith(("ros-", "rclpy")) for d in dists)
    for dist in dists:                     # link each distribution's top-level entries and metadata
        norm = re.sub(r"[-_.]+", "_", dist.metadata["Name"]).lower()
        for old in site.glob("*.dist-info"):   # the venv's own setuptools is older than torch wants
            if old.name.split("-")[0].lower() == norm:
                shutil.rmtree(old)
                for top in {"setuptools", "_distutils_hack", "pkg_resources", "distutils-precedence.pth"} \
                        if norm == "setuptools" else ():
                    target = site / top
                    (shutil.rmtree if target.is_dir() else Path.unlink)(target)
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            src, dst = ours / top, site / top
            if src.exists() and not dst.exists() and top != "__pycache__":
                dst.symlink_to(src)
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        (shutil.copytree if (ROOT / name).is_dir() else shutil.copy)(ROOT / name, src / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AMENT_PREFIX_PATH", "LD_LIBRARY_PATH")}
    env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
    res = subprocess.run([py, "-m", "pip", "install", "--no-index", "--no-build-isolation", "-q", str(src)],
                         capture_output=True, text=True, env=env, cwd=tmp, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return venv, env, tmp


def test_the_plain_venv_has_no_ros(plain_venv):
    venv, env, tmp = plain_venv
    res = subprocess.run([venv / "bin" / "python", "-c", "import rclpy"], capture_output=True, text=True,
                         env=env, cwd=tmp)
    assert res.returncode != 0 and "No module named 'rclpy'" in res.stderr
    res = subprocess.run([venv / "bin" / "python", "-c", "import raider_ros.nodes"], capture_output=True,
                         text=True, env=env, cwd=tmp)
    assert res.returncode != 0          # the ROS adapters are not part of the pip install


def test_the_console_script_scores_a_benchmark_directory_locally(plain_venv):
    venv, env, tmp = plain_venv
    where = subprocess.run([venv / "bin" / "python", "-c",
                            "from raider_ros.common.paths import data_dir; print(data_dir())"],
                           capture_output=True, text=True, env=env, cwd=tmp, check=True).stdout.strip()
    assert "site-packages" in where and Path(where, "benchmark", "dev").is_dir()
    out = tmp / "report"
    res = subprocess.run([venv / "bin" / "raider-evaluate", "--cases", str(Path(where, "benchmark", "dev")),
                          "--backend", "rules", "--filter", "^ki-", "--limit", "4", "--out", str(out)],
                         capture_output=True, text=True, env=env, cwd=tmp, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())
    assert report["cases"] == 4 and report["mode"] == "local"
    assert all(r["status"] == "ok" for r in report["results"]), [r["error"] for r in report["results"]]
    assert re.search(r"Det", res.stdout)
