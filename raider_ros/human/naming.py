"""Naming things as a person would, for what the robot says to people.

The planners write ids (``Medicine_1``); a person hears "the medicine by the plant".
``PersonNames(graph).rewrite(text)`` replaces every id the scene graph knows by a description:
the type in words when it is the only one of its type in the graph ("the chair"), else the
type with a relation to something of another type that tells it apart from the others of its
type ("the medicine by the plant", "the mug on the shelf", "the cup left of the kettle"), the
object in the gripper as "the medicine I am holding", and
a person by the name recognition reports ("Adriana") or "the person". An id it cannot tell
apart keeps its number ("medicine 1"). Scene graphs are the dicts of
``SceneSnapshot.to_dict()`` (the ``scene_graph/json`` topic's ``graph``).
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from raider_ros.common.text import split_words

_ID = re.compile(r"\b([A-Z][A-Za-z0-9]*)_(\d+)\b")
# relation -> how it reads, in order of preference (the most natural first)
_PHRASES = (("near", "by"), ("on top of", "on"), ("inside", "in"), ("on the left of", "left of"),
            ("on the right of", "right of"), ("above", "above"), ("below", "under"))


def type_words(type_name: str) -> str:
    return " ".join(w for w in split_words(type_name) if not w.isdigit()) or type_name.lower()


class PersonNames:
    def __init__(self, graph: Mapping[str, Any] | None = None):
        self.nodes: dict[str, dict] = {}
        self.edges: list[tuple[str, str, str]] = []
        if graph:
            for n in graph.get("nodes") or []:
                if isinstance(n, Mapping) and n.get("id") and n.get("kind") in ("object", "person"):
                    self.nodes[str(n["id"])] = dict(n)
            for e in graph.get("edges") or []:
                if isinstance(e, Mapping):
                    self.edges.append((str(e.get("subject")), str(e.get("relation")), str(e.get("object"))))

    def _type(self, ident: str) -> str:
        n = self.nodes.get(ident)
        return str(n.get("type") or ident.rsplit("_", 1)[0]) if n else ident.rsplit("_", 1)[0]

    def describe(self, ident: str) -> str:
        """"the medicine by the plant"; "Adriana"; "the chair"; the id itself when unknown."""
        n = self.nodes.get(ident)
        if n is None:
            return ident
        if n.get("kind") == "person":
            return str(n["name"]) if n.get("name") else "the person"
        kind = self._type(ident)
        words = type_words(kind)
        if n.get("held"):
            return f"the {words} I am holding"
        twins = [i for i, m in self.nodes.items() if i != ident and m.get("kind") == "object" and self._type(i) == kind]
        if not twins:
            return f"the {words}"
        for relation, reads in _PHRASES:
            refs = [o for s, r, o in self.edges if s == ident and r == relation and o in self.nodes
                    and self._type(o) != kind]
            for ref in refs:
                ref_type = self._type(ref)
                shared = any((t, relation) for t in twins for s, r, o in self.edges
                             if s == t and r == relation and o in self.nodes and self._type(o) == ref_type)
                unique_ref = sum(1 for i in self.nodes if self._type(i) == ref_type) == 1
                if not shared and unique_ref:
                    return f"the {words} {reads} the {type_words(ref_type)}"
        number = ident.rsplit("_", 1)[-1]
        return f"{words} {number}"

    def rewrite(self, text: str, capitalise: bool = True) -> str:
        """``text`` with every known id replaced by its description, an article before it kept
        once, no doubled words; a sentence start capitalised unless ``capitalise`` is false."""
        def repl(m: re.Match) -> str:
            ident = m.group(0)
            return self.describe(ident) if ident in self.nodes else ident

        out = _ID.sub(repl, text)
        out = re.sub(r"\b([Tt]he) the\b", r"\1", out)                 # "the Medicine_1" -> "the the medicine"
        out = re.sub(r"(^|[.!?]\s+)[Tt]he person, ", r"\1", out)      # "Person_1, could you" with no name
        out = dedupe_words(out)
        return _capitalise(out) if capitalise else out


def dedupe_words(text: str) -> str:
    """Drop a word or phrase said twice in a row ("step 1 step 1 done" -> "step 1 done";
    "the chair or the chair" -> "the chair")."""
    text = re.sub(r"\b((?:\w+ ){0,3}\w+) (?:or|and) \1\b", r"\1", text)
    return re.sub(r"\b((?:\w+ ){0,3}\w+) \1\b", r"\1", text)


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text
