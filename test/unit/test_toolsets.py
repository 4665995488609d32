"""One source of truth for the tools: the toolset files (data/toolsets/*.yaml) describe every
tool's name and arguments; the implementations, the rules backend and the docs agree with them."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from raider_ros.common.paths import share_dir
from raider_ros.common.tool_contract import ToolsetError, check_implementations, load_toolset, tool_catalogue
from raider_ros.perception.toolbox import TOOL_PARAMS, ToolBox

RULES_DIR = Path(__file__).resolve().parents[2] / "raider_ros" / "agent" / "backends" / "rules"


def test_every_toolset_tool_is_implemented_with_the_same_arguments():
    catalogue = tool_catalogue()
    check_implementations(catalogue, ToolBox.implemented())       # raises on any disagreement
    assert TOOL_PARAMS == {n: tuple(s.arg_names) for n, s in catalogue.items()}
    for f in sorted((share_dir() / "data" / "toolsets").glob("*.yaml")):
        for spec in load_toolset(f).tools:
            assert ToolBox.implemented()[spec.name] == tuple(spec.arg_names), (f.name, spec.name)


def test_a_disagreement_is_named():
    catalogue = tool_catalogue()
    impl = dict(ToolBox.implemented())
    impl["dist_to_target"] = ("obj",)                 # renamed parameter
    impl.pop("robot_holding")                          # missing implementation
    impl["teleport"] = ("where",)                      # implementation without a description
    with pytest.raises(ToolsetError) as e:
        check_implementations(catalogue, impl)
    msg = str(e.value)
    assert "dist_to_target(target)" in msg and "dist_to_target(obj)" in msg
    assert "robot_holding: described in data/toolsets but has no implementation" in msg
    assert "teleport: has an implementation but no toolset file describes it" in msg


def test_two_files_describing_one_tool_differently_are_rejected(tmp_path):
    for name, arg in (("a", "obj"), ("b", "target")):
        (tmp_path / f"{name}.yaml").write_text(
            f"name: {name}\ntools:\n  - name: measure\n    args: [{arg}]\n    description: Measures.\n")
    with pytest.raises(ToolsetError, match=r"measure has arguments \['obj'\] in a.yaml but \['target'\] in b.yaml"):
        tool_catalogue(tmp_path)


def _tool_literals_in_rules_backend() -> set[str]:
    """String constants the rules backend passes as a tool name: obs.get("t", ...), obs.has("t"),
    and the tool names of its tuples of tools."""
    found: set[str] = set()
    catalogue_like = re.compile(r"^[a-z]+(_[a-z]+)+$")
    for f in RULES_DIR.glob("*.py"):
        tree = ast.parse(f.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in ("get", "has") and isinstance(node.func.value, ast.Attribute | ast.Name) \
                    and getattr(node.func.value, "attr", getattr(node.func.value, "id", "")) == "obs":
                if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                    found.add(node.args[0].value)
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "_person_flag":
                found.add(node.args[1].value)
            if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                                   and catalogue_like.match(e.value) for e in node.elts) \
                    and node.elts and any(e.value.startswith(("dist_", "check_", "recognize_")) for e in node.elts):
                found |= {e.value for e in node.elts}
    return found


def test_the_rules_backend_uses_only_described_tools():
    used = _tool_literals_in_rules_backend()
    assert len(used) >= 10, used                     # the scan finds the backend's tool names
    assert used <= set(tool_catalogue()), sorted(used - set(tool_catalogue()))


def test_the_architecture_doc_lists_the_catalogue():
    doc = (share_dir() / "docs" / "architecture.md").read_text()
    table = doc[doc.index("| tool | args |"):].split("\n\n", 1)[0]
    listed = dict(re.findall(r"^\| ([a-z_]+) \| ([^|]*) \|", table, re.M))
    listed.pop("tool")                               # the header row
    catalogue = tool_catalogue()
    assert set(listed) == set(catalogue)
    for name, args in listed.items():
        documented = [a.strip() for a in args.replace("–", "").split(",") if a.strip()]
        assert documented == catalogue[name].arg_names, name
