"""The node graph as one table (launch/graph.yaml), read by the launch file and by the
launch-free starter (``raider_ros.cli.graph``), so the two cannot drift. ROS-free.

``load_graph_spec()`` -> :class:`GraphSpec`; ``spec.plan({"sim": "false", "backend": "openai"})``
-> the nodes to start, each with its parameter overrides, after checking the argument names
and the ``sim`` value.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from raider_ros.common.paths import share_dir
from raider_ros.common.yamlfile import read_yaml_mapping


class GraphSpecError(ValueError):
    """A graph table or a launch argument that cannot be used; the message names it."""


@dataclass(frozen=True)
class NodeSpec:
    executable: str
    config: str
    side: str                 # sim | robot
    respawn: bool


@dataclass(frozen=True)
class ArgumentSpec:
    name: str
    default: str
    description: str
    sets: Mapping[str, str] = field(default_factory=dict)      # executable -> parameter


@dataclass(frozen=True)
class PlannedNode:
    executable: str
    config: str
    respawn: bool
    overrides: dict


@dataclass(frozen=True)
class GraphSpec:
    nodes: tuple[NodeSpec, ...]
    arguments: dict[str, ArgumentSpec]
    source: str = "<memory>"

    def defaults(self) -> dict[str, str]:
        return {a.name: a.default for a in self.arguments.values()}

    def plan(self, args: Mapping[str, str] | None = None) -> list[PlannedNode]:
        values = self.defaults()
        for k, v in (args or {}).items():
            if k not in self.arguments:
                raise GraphSpecError(f"unknown launch argument {k!r}; known: {', '.join(self.arguments)}")
            values[k] = str(v)
        sim = values.get("sim", "true").strip().lower()
        if sim not in ("true", "false"):
            raise GraphSpecError(f"sim must be true or false, got {values['sim']!r}")
        out = []
        for n in self.nodes:
            if n.side == "sim" and sim == "false":
                continue
            overrides = {param: values[a.name] for a in self.arguments.values()
                         for exe, param in a.sets.items() if exe == n.executable}
            out.append(PlannedNode(n.executable, n.config, n.respawn, overrides))
        return out


def graph_spec_path() -> Path:
    return share_dir() / "launch" / "graph.yaml"


def load_graph_spec(path: str | Path | None = None) -> GraphSpec:
    p = Path(path) if path else graph_spec_path()
    doc, p = read_yaml_mapping(p, what="graph table", error=GraphSpecError)
    if doc.get("format") != "raider-graph/1":
        raise GraphSpecError(f"{p}: format must be raider-graph/1, got {doc.get('format')!r}")
    nodes = []
    for i, raw in enumerate(doc.get("nodes") or []):
        where = f"{p}: nodes[{i}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("executable"), str):
            raise GraphSpecError(f"{where}: expected {{executable, config, side, respawn}}")
        side = raw.get("side", "robot")
        if side not in ("sim", "robot"):
            raise GraphSpecError(f"{where}.side: sim or robot, got {side!r}")
        nodes.append(NodeSpec(raw["executable"], str(raw.get("config") or f"{raw['executable']}.yaml"), side,
                              bool(raw.get("respawn", False))))
    names = {n.executable for n in nodes}
    arguments = {}
    for name, raw in (doc.get("arguments") or {}).items():
        if not isinstance(raw, dict) or "default" not in raw:
            raise GraphSpecError(f"{p}: arguments.{name}: expected {{default, description, sets}}")
        sets = dict(raw.get("sets") or {})
        for exe in sets:
            if exe not in names:
                raise GraphSpecError(f"{p}: arguments.{name}.sets names {exe!r}, which is not a node of the graph")
        arguments[name] = ArgumentSpec(name, str(raw["default"]), str(raw.get("description", "")), sets)
    if not nodes:
        raise GraphSpecError(f"{p}: no nodes")
    return GraphSpec(tuple(nodes), arguments, str(p))
