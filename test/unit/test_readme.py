"""The README's interface table matches what the nodes create, and its code blocks are tagged
(```sh: run by test/integration/test_readme_commands.py; ```console: needs a robot, an LLM or
a placeholder filled in; ```python / ```yaml: run or loaded by that test)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
KINDS = {"create_publisher": "topic", "create_service": "service", "ActionServer": "action"}


def _created() -> set[tuple[str, str, str]]:
    out = set()
    for f in sorted((ROOT / "raider_ros" / "nodes").glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if not isinstance(node, ast.Call):
                continue
            fn = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if fn not in KINDS:
                continue
            arg = node.args[2] if fn == "ActionServer" else node.args[1]
            if isinstance(arg, ast.Constant):
                name = arg.value
            elif isinstance(arg, ast.JoinedStr):       # f"scene_graph/tools/{name}"
                name = "".join(v.value if isinstance(v, ast.Constant) else "<tool>" for v in arg.values)
            else:
                continue
            out.add((name, KINDS[fn], f.stem))
    return out


def _table() -> set[tuple[str, str, str]]:
    section = README[README.index("## Interfaces"):]
    section = section[:section.index("\n## ", 5)]
    rows = re.findall(r"^\| `([^`]+)` \| ([a-z]+)[^|]*\| [^|]+\| ([a-z_]+) \|", section, re.M)
    return set(rows)


def test_the_interface_table_lists_exactly_what_the_nodes_create():
    created, table = _created(), _table()
    assert len(created) > 25
    assert table == created, f"missing from the README: {sorted(created - table)}; not in the code: {sorted(table - created)}"


def test_every_code_block_is_tagged():
    tags = re.findall(r"^```(\S*)", README, re.M)[::2]        # opening fences
    assert set(tags) <= {"sh", "console", "python", "yaml", ""}, tags
    assert "sh" in tags and "python" in tags


def _summary_publishers() -> set[str]:
    """Nodes that create the state-summary helper (it creates the state/summaries publisher)."""
    out = set()
    for f in sorted((ROOT / "raider_ros" / "nodes").glob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == \
                    "StateSummaryPublisher":
                out.add(f.stem)
    return out


def test_the_state_summaries_row_names_every_node_that_publishes_them():
    section = README[README.index("## Interfaces"):]
    (row,) = re.findall(r"^\| `state/summaries` \| topic[^|]*\| StateSummary \| ([^|]+) \|", section, re.M)
    named = {n.strip() for n in row.split(",")}
    assert len(_summary_publishers()) >= 6
    assert named == _summary_publishers(), (sorted(named), sorted(_summary_publishers()))
