"""The launch file, the executables and the parameter files agree with each other and with
what colcon installed."""
from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "install" / "raider_ros"


def _executables() -> dict[str, str]:
    out = {}
    for line in (ROOT / "raider_ros" / "executables.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, module = line.split()[:2]
            out[name] = module
    return out


def _launch_module():
    spec = importlib.util.spec_from_file_location("raider_launch", ROOT / "launch" / "raider.launch.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_executable_has_a_main():
    for name, module in _executables().items():
        mod = importlib.import_module(module)
        assert callable(getattr(mod, "main", None)), f"{module} has no main() for executable {name}"


def test_executables_are_installed():
    installed = INSTALL / "lib" / "raider_ros"
    for name in _executables():
        assert (installed / name).is_file(), f"{name} missing under {installed}"


def test_launch_names_installed_executables_and_files():
    launch = _launch_module()
    exes = _executables()
    share = INSTALL / "share" / "raider_ros"
    assert (share / "launch" / "raider.launch.py").is_file()
    for executable, config in launch.NODES:
        assert executable in exes, f"launch names unknown executable {executable}"
        assert (INSTALL / "lib" / "raider_ros" / executable).is_file()
        assert (share / "config" / config).is_file(), f"launch names missing config {config}"
    for arg, (default, _desc, targets) in launch.ARGUMENTS.items():
        for exe in targets:
            assert exe in dict(launch.NODES), f"argument {arg} targets {exe}, not launched"
    scene = launch.ARGUMENTS["scene"][0]
    assert (share / "data" / "scenes" / f"{scene}.scene.yaml").is_file()


def _node_params(module: str) -> dict:
    mod = importlib.import_module(module)
    return {p.name: p for p in getattr(mod, "PARAMS", ())}


@pytest.mark.parametrize("config", sorted((ROOT / "config").glob("*.yaml")), ids=lambda p: p.name)
def test_config_matches_declared_parameters(config):
    doc = yaml.safe_load(config.read_text())
    (node_name, body), = doc.items()
    exes = _executables()
    assert node_name in exes, f"{config.name} configures unknown node {node_name}"
    declared = _node_params(exes[node_name])
    values = body["ros__parameters"]
    assert set(values) == set(declared), f"{config.name} and {exes[node_name]}.PARAMS differ"
    for k, v in values.items():
        assert type(v) is type(declared[k].default), f"{config.name}: {k} has type {type(v).__name__}"
        assert v == declared[k].default, f"{config.name}: {k} = {v!r} but the node declares {declared[k].default!r}"
        assert declared[k].description, f"{k} has no description"
