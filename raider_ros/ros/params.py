"""Parameters declared once: each node lists ``Param`` entries (name, default, description);
``declare`` declares them with descriptors and returns their values. config/<node>.yaml holds
the same names for robots to edit; a unit test checks the two agree."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from rcl_interfaces.msg import ParameterDescriptor


@dataclass(frozen=True)
class Param:
    name: str
    default: Any
    description: str
    read_only: bool = False


def declare(node, params: Sequence[Param]) -> dict[str, Any]:
    values = {}
    for p in params:
        desc = ParameterDescriptor(description=p.description, read_only=p.read_only)
        node.declare_parameter(p.name, p.default, desc)
        values[p.name] = node.get_parameter(p.name).value
    return values
