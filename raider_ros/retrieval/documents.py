"""The scene graph as documents (EmbodiedRAG §4.1): one document per object or person, its
label as content, its attributes as metadata, its relations as edges of a networkx graph, its
embeddings in a vector index: two per document, the label ("canister") and the label with the
general knowledge of its type, the one-line description of ``object_types.yaml`` ("canister: a
round container with a lid for keeping dry food or other goods"), the two texts the rules
reasoner compares a noun phrase with when it grounds it.

:meth:`DocumentStore.sync` folds in a scene-graph snapshot incrementally: nodes whose
attribute dict is the very one seen last time are skipped (the scene graph shares the
attributes of unchanged unseen nodes between frames), metadata of the others is refreshed, and
only documents that are new or whose content changed are embedded and written to the index.
"""
from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import networkx as nx
import numpy as np

from raider_ros.common.text import singular, split_words, word_key

from .embedder import Embedder
from .index import DEFAULT_INDEX, make_index

ROBOT_ID = "robot"
SUPPORT_RELATIONS = ("on top of", "inside")
_ID_SUFFIX = re.compile(r"^(.*)_(\d+)$")
META_KEYS = ("kind", "type", "visible", "held", "room", "last_seen", "state", "properties", "distance_m",
             "name", "looking_at_robot", "hands_free", "last_relation", "memory", "center")


def type_key(type_name: str) -> str:
    """'CoffeeMachine' -> 'coffeemachine' (singular words run together)."""
    return word_key(singular(w) for w in split_words(type_name) if not w.isdigit())


def label_of(node_id: str, attrs: Mapping[str, Any]) -> str:
    """A document's content: the type in words ('coffee machine'); a person with their name."""
    kind = attrs.get("kind")
    typ = str(attrs.get("type") or _ID_SUFFIX.sub(r"\1", node_id))
    words = " ".join(w for w in split_words(typ) if not w.isdigit()) or typ.lower()
    if kind == "person":
        name = attrs.get("name")
        return f"person {name}".strip() if name else "person"
    return words


def label_key(key: int) -> int:
    """The index key of a document's label vector."""
    return 2 * key


def text_key(key: int) -> int:
    """The index key of a document's described text ("<label>: <type description>")."""
    return 2 * key + 1


def doc_key(index_key: int) -> int:
    """The document key an index key belongs to."""
    return int(index_key) // 2


@dataclass
class Document:
    id: str
    key: int
    content: str
    meta: dict[str, Any]
    text: str = ""             # the label with its type's description (the label when none is known)

    def __post_init__(self) -> None:
        self.text = self.text or self.content

    @property
    def present(self) -> bool:
        """In sight now, or in the robot's gripper."""
        return bool(self.meta.get("visible") or self.meta.get("held"))

    @property
    def kind(self) -> str:
        return str(self.meta.get("kind") or "object")


@dataclass
class SyncStats:
    documents: int = 0
    added: int = 0
    removed: int = 0
    changed: int = 0           # metadata refreshed
    embedded: int = 0          # content (re-)embedded and written to the index
    ms: float = 0.0


@dataclass
class DocumentStore:
    embedder: Embedder
    index_kind: str = DEFAULT_INDEX
    describe: Callable[[str], str | None] | None = None   # type -> its one-line description
    docs: dict[str, Document] = field(default_factory=dict)
    graph: nx.DiGraph = field(default_factory=nx.DiGraph)
    robot: dict[str, Any] = field(default_factory=dict)
    stamp: float = 0.0

    def __post_init__(self) -> None:
        self.index = make_index(self.index_kind, self.embedder.dim, capacity=1024)
        self.by_key: dict[int, str] = {}
        self.by_type: dict[str, set[str]] = {}
        self.present: set[str] = set()
        self.people: set[str] = set()
        self._attrs: dict[str, Any] = {}
        self._next_key = 0
        self._frame_edges: list[tuple[str, str, str]] = []
        self._lock = threading.RLock()
        self.last_sync = SyncStats()

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return len(self.docs)

    def vector(self, doc_id: str) -> np.ndarray:
        return self.embedder.embed([self.docs[doc_id].content])[0]

    def text_vector(self, doc_id: str) -> np.ndarray:
        return self.embedder.embed([self.docs[doc_id].text])[0]

    def text_of(self, node_id: str, attrs: Mapping[str, Any], label: str) -> str:
        """'canister: a round container with a lid ...': the label and its type's description."""
        if attrs.get("kind") == "person" or self.describe is None:
            return label
        desc = self.describe(str(attrs.get("type") or _ID_SUFFIX.sub(r"\1", node_id)))
        return f"{label}: {desc}" if desc else label

    def objects(self) -> int:
        return sum(1 for d in self.docs.values() if d.kind == "object")

    # ------------------------------------------------------------------ writing
    def sync(self, snapshot: Any) -> SyncStats:
        """Fold in a :class:`~raider_ros.perception.scene_graph.SceneSnapshot`."""
        t0 = time.perf_counter()
        st = SyncStats()
        with self._lock:
            g = snapshot.graph
            self.stamp = float(getattr(snapshot, "stamp", 0.0) or 0.0)
            to_embed: list[Document] = []
            seen: set[str] = set()
            for nid, a in g.nodes(data=True):
                if a.get("kind") == "robot":
                    self.robot = dict(a, id=nid)
                    continue
                seen.add(nid)
                if self._attrs.get(nid) is a:
                    continue
                self._attrs[nid] = a
                content = label_of(nid, a)
                text = self.text_of(nid, a, content)
                doc = self.docs.get(nid)
                if doc is None:
                    doc = Document(nid, self._next_key, content, {}, text)
                    self._next_key += 1
                    self.docs[nid] = doc
                    self.by_key[doc.key] = nid
                    to_embed.append(doc)
                    st.added += 1
                elif doc.content != content or doc.text != text:
                    self._untype(doc)
                    doc.content, doc.text = content, text
                    to_embed.append(doc)
                self._untype(doc)
                doc.meta = {k: a.get(k) for k in META_KEYS if a.get(k) is not None}
                self.by_type.setdefault(type_key(str(a.get("type") or "")), set()).add(nid)
                (self.present.add if doc.present else self.present.discard)(nid)
                (self.people.add if doc.kind == "person" else self.people.discard)(nid)
                self._set_memory_edge(doc)
                st.changed += 1
            gone = [i for i in self.docs if i not in seen]
            if gone:
                self.index.remove([k for i in gone for k in (label_key(self.docs[i].key), text_key(self.docs[i].key))])
            for i in gone:
                doc = self.docs.pop(i)
                self._untype(doc)
                self.by_key.pop(doc.key, None)
                self.present.discard(i)
                self.people.discard(i)
                self._attrs.pop(i, None)
                if i in self.graph:
                    self.graph.remove_node(i)
            st.removed = len(gone)
            if to_embed:
                vecs = self.embedder.embed([t for d in to_embed for t in (d.content, d.text)])
                self.index.upsert([k for d in to_embed for k in (label_key(d.key), text_key(d.key))], vecs)
                st.embedded = len(to_embed)
            self._set_frame_edges(g)
            st.documents = len(self.docs)
        st.ms = (time.perf_counter() - t0) * 1000.0
        self.last_sync = st
        return st

    def _untype(self, doc: Document) -> None:
        t = type_key(str(doc.meta.get("type") or ""))
        s = self.by_type.get(t)
        if s is not None:
            s.discard(doc.id)

    def _set_memory_edge(self, doc: Document) -> None:
        """A remembered object's last support as an edge marked ``remembered``."""
        if doc.id in self.graph:
            for _, o, d in list(self.graph.out_edges(doc.id, data=True)):
                if d.get("remembered"):
                    self.graph.remove_edge(doc.id, o)
        rel = doc.meta.get("last_relation")
        if rel and not doc.present and len(rel) == 2:
            self.graph.add_edge(doc.id, str(rel[1]), relations={str(rel[0]): {}}, remembered=True)

    def _set_frame_edges(self, g: nx.DiGraph) -> None:
        """The relations of the current frame (replacing the last frame's)."""
        edges = [(s, o, rels) for s, o, rels in g.edges(data="relations") if rels and s != ROBOT_ID]
        key = [(s, o, tuple(sorted(rels))) for s, o, rels in edges]
        if key == self._frame_edges:
            return
        for s, o, _ in self._frame_edges:
            if self.graph.has_edge(s, o) and not self.graph.edges[s, o].get("remembered"):
                self.graph.remove_edge(s, o)
        for s, o, rels in edges:
            self.graph.add_edge(s, o, relations=dict(rels), remembered=False)
        self._frame_edges = key
