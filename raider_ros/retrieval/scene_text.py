"""The scene's representation in a prompt: the objects in sight (the first message's usual
"Objects in sight:" line) and the objects seen earlier, each with its room, age, support and
the states the task needs (all states for the whole graph). Templates:
``data/prompts/retrieval/scene.yaml``; token counts are cl100k (common/token_count.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from raider_ros.agent.prompt import fill
from raider_ros.common.paths import data_dir
from raider_ros.common.text import one_line
from raider_ros.common.token_count import count_tokens
from raider_ros.common.yamlfile import read_yaml_mapping

from .retriever import Subgraph


@lru_cache(maxsize=4)
def templates(path: str | None = None) -> dict[str, Any]:
    doc, _ = read_yaml_mapping(path or str(data_dir() / "prompts" / "retrieval" / "scene.yaml"),
                               what="scene representation templates")
    return doc


@lru_cache(maxsize=2)
def _objects_line() -> str:
    doc, _ = read_yaml_mapping(str(data_dir() / "prompts" / "issue_detection" / "messages.yaml"),
                               what="issue detection messages")
    return str(doc["user"]["objects"])


@dataclass
class SceneText:
    in_sight: list[str]           # ids for the "Objects in sight:" line
    lines: list[str]              # further lines of the first message (objects seen earlier)
    text: str                     # the whole representation, as it appears in the prompt
    tokens: int


def _details(attrs: Mapping[str, Any], now: float, t: Mapping[str, Any]) -> str:
    parts = []
    if attrs.get("room"):
        parts.append(str(attrs["room"]))
    if attrs.get("last_seen") is not None and now:
        parts.append(fill(t["seen_ago"], {"minutes": max(0, round((now - float(attrs["last_seen"])) / 60.0))}))
    rel = attrs.get("last_relation")
    if rel and len(rel) == 2 and rel[0] in (t.get("support") or {}):
        parts.append(fill(t["support"][rel[0]], {"other": rel[1]}))
    for k, v in sorted((attrs.get("state") or {}).items()):
        parts.append(fill(t["state_true"] if v else t["state_false"], {"key": k}))
    return one_line(", ".join(parts))         # rooms and names come from the world: one line each


def scene_text(sub: Subgraph, template_file: str | None = None) -> SceneText:
    """The representation of ``sub`` (a retrieved subgraph or the whole graph)."""
    t = templates(template_file)
    in_sight = sub.in_sight()
    items = [fill(t["remembered_item"], {"id": one_line(i), "details": _details(sub.nodes[i].attributes, sub.stamp, t)})
             for i in sub.remembered()]
    lines = [fill(t["remembered"], {"objects": ", ".join(items)})] if items else []
    first = fill(_objects_line(), {"objects": ", ".join(map(one_line, in_sight)) if in_sight else "none"})
    text = "\n".join([first, *lines])
    return SceneText(in_sight, lines, text, count_tokens(text))


def update_text(sub: Subgraph, new_ids: list[str], template_file: str | None = None) -> str:
    """The message that brings self-queried objects into the conversation."""
    t = templates(template_file)
    items = []
    for i in new_ids:
        a = sub.nodes[i].attributes
        d = _details(a, sub.stamp, t) if not a.get("visible") else ""
        items.append(fill(t["remembered_item"], {"id": one_line(i), "details": d}) if d else one_line(i))
    return fill(t["update"], {"objects": ", ".join(items)})


def recovery_context(sub: Subgraph, context: str = "", template_file: str | None = None) -> str:
    """The recovery planner's context: what the person said, then the scene's representation."""
    t = templates(template_file)
    scene = scene_text(sub, template_file).text.replace("\n", "; ")
    return " ".join(x for x in (context.strip(), fill(t["recovery_context"], {"scene": scene})) if x)
