"""The launch file, the executables and the parameter files agree with each other and with
what colcon installed."""
from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path

import pytest
import yaml

from raider_ros.common.graph_spec import GraphSpecError, load_graph_spec

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


def _run_launch_file(share: Path) -> list[dict]:
    """Run launch/raider.launch.py's generate_launch_description() with stand-ins for the
    launch and launch_ros packages (not on PyPI), recording what it would start."""
    recorded: list[dict] = []

    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        return m

    class Node:
        def __init__(self, **kw):
            recorded.append(kw)

    class LaunchConfiguration(str):
        pass

    fakes = {
        "launch": module("launch", LaunchDescription=lambda actions: actions),
        "launch.actions": module("launch.actions", DeclareLaunchArgument=lambda name, **kw: ("arg", name, kw)),
        "launch.conditions": module("launch.conditions", IfCondition=lambda c: ("if", str(c))),
        "launch.substitutions": module("launch.substitutions", LaunchConfiguration=LaunchConfiguration),
        "launch_ros": module("launch_ros"),
        "launch_ros.actions": module("launch_ros.actions", Node=Node),
        "ament_index_python.packages": module("ament_index_python.packages",
                                              get_package_share_directory=lambda _pkg: str(share)),
    }
    saved = {k: sys.modules.get(k) for k in fakes}
    sys.modules.update(fakes)
    try:
        actions = _launch_module().generate_launch_description()
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    args = {a[1]: a[2] for a in actions if isinstance(a, tuple)}
    return recorded, args


def test_launch_file_starts_the_graph_table_with_installed_executables_and_files():
    share = INSTALL / "share" / "raider_ros"
    assert (share / "launch" / "raider.launch.py").is_file() and (share / "launch" / "graph.yaml").is_file()
    spec = load_graph_spec(share / "launch" / "graph.yaml")
    nodes, args = _run_launch_file(share)
    exes = _executables()
    assert [n["executable"] for n in nodes] == [n.executable for n in spec.nodes]
    assert set(args) == set(spec.arguments) and args["sim"]["default_value"] == "true"
    for n in nodes:
        assert n["executable"] in exes, f"launch names unknown executable {n['executable']}"
        assert (INSTALL / "lib" / "raider_ros" / n["executable"]).is_file()
        cfg, overrides = n["parameters"]
        assert Path(cfg).is_file(), f"launch names missing config {cfg}"
        # sim_world only with sim:=true; every other node always, restarted when it dies
        assert n["condition"] == (("if", "sim") if n["executable"] == "sim_world" else None)
        assert n["respawn"] is (n["executable"] != "sim_world")
        for param, value in overrides.items():
            assert value in spec.arguments and spec.arguments[value].sets[n["executable"]] == param
    scene = spec.arguments["scene"].default
    assert (share / "data" / "scenes" / f"{scene}.scene.yaml").is_file()


def test_graph_table_plan_for_simulation_and_robot():
    spec = load_graph_spec()
    sim = spec.plan()
    assert sim[0].executable == "sim_world" and sim[0].overrides == {"scene": "kitchen"}
    robot = spec.plan({"sim": "false", "backend": "openai"})
    assert "sim_world" not in [n.executable for n in robot] and len(robot) == len(sim) - 1
    det = next(n for n in robot if n.executable == "issue_detector")
    assert det.overrides == {"backend": "openai", "toolset": "household"}
    with pytest.raises(GraphSpecError, match="unknown launch argument 'scnee'"):
        spec.plan({"scnee": "x"})
    with pytest.raises(GraphSpecError, match="sim must be true or false"):
        spec.plan({"sim": "yes please"})


def test_graph_table_errors_are_named(tmp_path):
    bad = tmp_path / "g.yaml"
    bad.write_text("format: raider-graph/1\nnodes:\n  - {executable: a}\narguments:\n  x: {default: 1, sets: {b: p}}\n")
    with pytest.raises(GraphSpecError, match=r"arguments.x.sets names 'b', which is not a node"):
        load_graph_spec(bad)
    bad.write_text("format: raider-graph/1\nnodes:\n  - {executable: a, side: moon}\n")
    with pytest.raises(GraphSpecError, match=r"nodes\[0\].side: sim or robot"):
        load_graph_spec(bad)


def test_raider_graph_dry_run_and_help(capsys):
    from raider_ros.cli import graph
    assert graph.main(["sim:=false", "backend:=openai", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "sim_world" not in out and "issue_detector" in out and "backend:=openai" in out
    assert graph.main(["sim=false"]) == 2
    assert "expected ARG:=VALUE" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        graph.main(["--help"])
    assert "toolset:=household" in capsys.readouterr().out


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


def test_installed_executables_can_be_run_by_anyone():
    for name in _executables():
        path = INSTALL / "lib" / "raider_ros" / name
        mode = path.resolve().stat().st_mode
        assert mode & 0o111 == 0o111, f"{name} is mode {oct(mode & 0o777)}: not executable"


@pytest.mark.parametrize("name", [n for n, m in _executables().items() if m.startswith("raider_ros.nodes.")])
def test_every_node_answers_help_with_its_parameters(name):
    import subprocess
    res = subprocess.run([str(INSTALL / "lib" / "raider_ros" / name), "--help"], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    params = _node_params(_executables()[name])
    assert res.stdout.startswith(f"usage: {name} ")
    for p in params.values():
        assert p.name in res.stdout and p.description[:30] in res.stdout


@pytest.mark.parametrize("module", sorted(p.stem for p in (ROOT / "raider_ros" / "cli").glob("*.py") if p.stem != "__init__"))
def test_every_command_line_program_runs_with_python_dash_m(module):
    """`python -m raider_ros.cli.<program>` must run main(), not import and exit silently."""
    import ast
    tree = ast.parse((ROOT / "raider_ros" / "cli" / f"{module}.py").read_text())
    guards = [n for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test)]
    assert guards and "main(" in ast.unparse(guards[0]), f"raider_ros/cli/{module}.py has no __main__ guard calling main()"


def test_camera_report_without_a_camera_names_the_silent_topics():
    import subprocess
    res = subprocess.run([sys.executable, "-m", "raider_ros.cli.camera_report", "--timeout", "1"],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 1
    assert "no complete camera frame within 1 s" in res.stderr and "camera/color/image_raw" in res.stderr


def test_rviz_view_uses_the_markers_frame_and_real_topics():
    view = yaml.safe_load((INSTALL / "share" / "raider_ros" / "rviz" / "raider.rviz").read_text())
    manager = view["Visualization Manager"]
    frames = {_node_params("raider_ros.nodes.scene_graph")["world_frame"].default,
              _node_params("raider_ros.nodes.sim_world")["world_frame"].default}
    assert frames == {manager["Global Options"]["Fixed Frame"]}      # works without a tf tree
    topics = {d["Class"].split("/")[-1]: d["Topic"]["Value"] for d in manager["Displays"] if "Topic" in d}
    assert topics == {"MarkerArray": "/scene_graph/markers", "Pose": "/camera/pose",
                      "Image": "/camera/color/image_raw"}
    sources = {"/scene_graph/markers": "nodes/scene_graph.py", "/camera/pose": "nodes/sim_world.py",
               "/camera/color/image_raw": "nodes/sim_world.py"}
    for topic, src in sources.items():
        assert f'"{topic[1:]}"' in (ROOT / "raider_ros" / src).read_text(), f"{src} does not publish {topic}"
