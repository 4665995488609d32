"""The package layout holds: no two folders import each other (the folder import graph has no
cycle), the ROS-free core imports neither rclpy nor generated interfaces, `common/` depends on
no other folder, and LLM output is never executed."""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "raider_ros"
CORE = ("common", "sim", "perception", "agent", "recovery", "executor", "human", "evaluation",
        "safety", "retrieval", "state_qa", "memory")
GENERATED = ("msg", "srv", "action")
ROS_MODULES = ("rclpy", "rosidl", "builtin_interfaces", "std_msgs", "sensor_msgs", "geometry_msgs",
               "visualization_msgs", "action_msgs")


def _imports(path: Path) -> list[str]:
    rel = path.relative_to(PKG)
    package = ["raider_ros", *rel.parts[:-1]]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                out.append(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                out.append(node.module)
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return out


def _folder_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for f in PKG.rglob("*.py"):
        parts = f.relative_to(PKG).parts
        if len(parts) < 2:
            continue
        for mod in _imports(f):
            m = mod.split(".")
            if m[0] == "raider_ros" and len(m) > 1 and m[1] != parts[0]:
                graph[parts[0]].add(m[1])
    return graph


def test_no_two_folders_import_each_other():
    graph = _folder_graph()
    assert graph, "the scan found no imports"
    # depth-first search for a cycle, reporting it
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                raise AssertionError("folder import cycle: " + " -> ".join(path[path.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])


def test_common_depends_on_no_other_folder():
    assert _folder_graph().get("common", set()) == set()


def test_the_core_imports_no_ros():
    offenders = []
    for folder in CORE:
        for f in (PKG / folder).rglob("*.py") if (PKG / folder).is_dir() else ():
            for mod in _imports(f):
                m = mod.split(".")
                if m[0] in ROS_MODULES or (m[0] == "raider_ros" and len(m) > 1 and m[1] in GENERATED + ("ros", "nodes")):
                    offenders.append(f"{f.relative_to(PKG)} imports {mod}")
    assert not offenders, offenders


def test_no_exec_or_eval_of_text():
    hits = []
    for f in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("exec", "eval"):
                hits.append(f"{f.relative_to(PKG)}:{node.lineno}")
    assert not hits, hits


def test_one_file_per_node_named_after_it_with_one_class_and_main():
    exes = dict(line.split()[:2] for line in (PKG / "executables.txt").read_text().splitlines()
                if line.strip() and not line.startswith("#"))
    for f in sorted((PKG / "nodes").glob("*.py")):
        if f.name == "__init__.py":
            continue
        assert exes.get(f.stem) == f"raider_ros.nodes.{f.stem}", f"{f.name} is not the executable {f.stem}"
        tree = ast.parse(f.read_text())
        classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef) and re.search(r"Node$", n.name)]
        mains = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
        assert len(classes) == 1 and len(mains) == 1, (f.name, classes)


def test_test_files_have_unique_names_across_tiers():
    """pytest imports test modules by basename (no __init__.py in the tiers): two files of one
    name in test/unit and test/node stop `make test` at collection."""
    from collections import Counter
    root = Path(__file__).resolve().parents[1]
    names = Counter(p.name for p in root.rglob("test_*.py"))
    assert [n for n, k in names.items() if k > 1] == []
