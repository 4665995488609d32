"""Retrieval of the task-relevant subgraph (EmbodiedRAG §4.3 and §4.5).

``Retriever(graph).retrieve(task, context)`` -> :class:`Subgraph`:

1. pre-retrieval: the entities and attributes the task needs (:mod:`.abstraction`);
2. entry points: per entity, the documents above a similarity threshold, at most ``k_sight``
   among the objects in sight (and in the gripper) and ``k_memory`` among the remembered ones
   (a search of the vector index); an explicit id, and the member types of a category word,
   count as exact hits; a generic word ("thing") is found through its relations. A document's
   score is the rules reasoner's meaning score (``grounding.meaning_score``): the similarity of
   the phrase to its label or to its label with its type's description, whichever is higher,
   plus a bonus when the phrase's words are in that description. When nothing in sight reaches
   the reasoner's own bar for "the phrase names this type" (``MEANING_SCORE``), the phrase is
   one the general knowledge does not resolve ("the till"): the ``k_sight`` closest objects in
   sight become its entry points, for the detector to judge;
3. the induced subgraph of the entry points, plus the neighbours the task's relations need:
   what carries or contains an entry point, and, where its preconditions ask, what blocks it,
   stands on it or is inside it; the people when people take part; the robot and what it holds;
4. attributes filtered to the task: every node keeps its kind, type and whether it is in sight
   (or its room and age when remembered), plus the attributes its entity asked for.

Modes: ``full`` (the whole graph, every attribute), ``rag`` (the subgraph; the whole graph on
explicit request), ``rag-strict`` (never the whole graph). :meth:`Retriever.self_query` adds
the entities that tool arguments or an LLM's thoughts mention.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from raider_ros.agent.backends.rules.grounding import MEANING_SCORE, meaning_score
from raider_ros.agent.backends.rules.knowledge import Knowledge, load_knowledge
from raider_ros.agent.backends.rules.knowledge import type_key as kb_type_key
from raider_ros.common.geometry import carries, floor_path_end, segment_box_distance_2d

from .abstraction import EntityQuery, RulesAbstractor, TaskAbstraction, mentioned_entities
from .documents import ROBOT_ID, SUPPORT_RELATIONS, DocumentStore, doc_key, type_key
from .embedder import Embedder, shared_embedder
from .index import DEFAULT_INDEX

MODES = ("full", "rag", "rag-strict")
BASE_KEYS = ("kind", "type", "visible", "held", "name")
MEMORY_KEYS = ("room", "last_seen", "last_relation")


class RetrievalError(ValueError):
    """A request that cannot be served (unknown mode, the whole graph asked for in rag-strict)."""


@dataclass(frozen=True)
class RetrievalSettings:
    mode: str = "rag"
    threshold: float = 0.5              # entry points: cosine similarity at least this
    sight_threshold: float = 0.45       # ... among the objects in sight (few, cheap to include)
    k_sight: int = 12                   # entry points per entity among the objects in sight
    k_memory: int = 3                   # ... among the remembered objects
    max_neighbours: int = 8             # per entry point and relation
    path_margin_m: float = 0.3          # objects within this of the floor path to a target that
                                        # must not be blocked join the subgraph
    index: str = DEFAULT_INDEX

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise RetrievalError(f"unknown retrieval mode {self.mode!r}; known: {', '.join(MODES)}")
        if not (0.0 <= self.threshold <= 1.0 and 0.0 <= self.sight_threshold <= 1.0):
            raise RetrievalError(f"retrieval thresholds must lie in 0..1, got {self.threshold}, {self.sight_threshold}")
        if self.k_sight < 1 or self.k_memory < 0 or self.max_neighbours < 0:
            raise RetrievalError("retrieval: k_sight >= 1, k_memory >= 0 and max_neighbours >= 0 expected")


@dataclass
class RetrievedNode:
    id: str
    score: float
    reasons: list[str]
    attributes: dict[str, Any]


@dataclass
class Subgraph:
    task: str
    mode: str
    nodes: dict[str, RetrievedNode] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    total_objects: int = 0
    full: bool = False
    entities: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0
    stamp: float = 0.0
    asked: dict[str, set] = field(default_factory=dict, repr=False)   # attributes each node's entities need

    @property
    def ids(self) -> list[str]:
        return list(self.nodes)

    def in_sight(self) -> list[str]:
        return [i for i, n in self.nodes.items()
                if n.attributes.get("kind") == "object" and n.attributes.get("visible")]

    def remembered(self) -> list[str]:
        return [i for i, n in self.nodes.items() if n.attributes.get("kind") == "object"
                and not n.attributes.get("visible") and not n.attributes.get("held")]

    def people(self) -> list[str]:
        return [i for i, n in self.nodes.items() if n.attributes.get("kind") == "person"]

    def objects(self) -> list[str]:
        return [i for i, n in self.nodes.items() if n.attributes.get("kind") == "object"]

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "mode": self.mode, "full": self.full, "entities": self.entities, "stamp": self.stamp,
                "total_objects": self.total_objects, "elapsed_ms": round(self.elapsed_ms, 3),
                "nodes": [{"id": n.id, "score": round(n.score, 4), "reasons": n.reasons, **n.attributes}
                          for n in self.nodes.values()],
                "edges": [{"subject": s, "relation": r, "object": o} for s, r, o in self.edges]}


class Retriever:
    """Retrieval over a scene graph; ``graph`` is a :class:`~raider_ros.perception.scene_graph.SceneGraph`
    (anything with ``snapshot()``). Thread-safe; the document store syncs before each request."""

    def __init__(self, graph: Any, settings: RetrievalSettings | None = None, *,
                 embedder: Embedder | None = None, abstractor: Any = None):
        self.graph = graph
        self.settings = settings or RetrievalSettings()
        self.embedder = embedder or shared_embedder()
        self.abstractor = abstractor or RulesAbstractor()
        kb = getattr(self.abstractor, "kb", None)
        self.kb: Knowledge = kb if isinstance(kb, Knowledge) else load_knowledge()
        self.store = DocumentStore(self.embedder, self.settings.index, describe=self._describe)
        self._lock = threading.RLock()
        self._snap: Any = None

    def _describe(self, type_name: str) -> str | None:
        return self.kb.type_descriptions.get(kb_type_key(type_name))

    # ------------------------------------------------------------------ sync
    def sync(self):
        """Bring the documents up to date with the graph's newest snapshot."""
        with self._lock:
            snap = self.graph.snapshot()
            if snap is not self._snap:
                self.store.sync(snap)
                self._snap = snap
            return self.store.last_sync

    # ------------------------------------------------------------------ requests
    def retrieve(self, task: str, context: str = "", *, mode: str | None = None,
                 full: bool = False, abstraction: TaskAbstraction | None = None) -> Subgraph:
        mode = mode or self.settings.mode
        if mode not in MODES:
            raise RetrievalError(f"unknown retrieval mode {mode!r}; known: {', '.join(MODES)}")
        if full and mode == "rag-strict":
            raise RetrievalError("the whole scene graph is never given out in mode rag-strict")
        t0 = time.perf_counter()
        with self._lock:
            self.sync()
            if mode == "full" or full:
                sub = self._full(task, mode)
            else:
                ab = abstraction or self.abstractor.abstract(task, context)
                sub = Subgraph(task=ab.task, mode=mode, entities=ab.phrases)
                self._expand(sub, ab.entities, ab.people)
                self._finish(sub)
        sub.elapsed_ms = (time.perf_counter() - t0) * 1000.0
        return sub

    def self_query(self, sub: Subgraph, texts: Iterable[str]) -> list[str]:
        """Add what ``texts`` (tool arguments, thoughts) mention; returns the new ids."""
        if sub.full:
            return []
        with self._lock:
            self.sync()
            st = self.store
            names = {str(d.meta.get("name")).lower(): i for i, d in st.docs.items()
                     if d.kind == "person" and d.meta.get("name")}
            ents = mentioned_entities(list(texts), st.docs.keys(), [k for k, v in st.by_type.items() if v], names)
            before = set(sub.nodes)
            self._expand(sub, ents, False, reason_prefix="self-query")
            self._finish(sub)
        new = [i for i in sub.nodes if i not in before]
        sub.entities += [e.phrase for e in ents if e.phrase not in sub.entities]
        return new

    # ------------------------------------------------------------------ the whole graph
    def _full(self, task: str, mode: str) -> Subgraph:
        st = self.store
        sub = Subgraph(task=task, mode=mode, full=True, stamp=st.stamp)
        order = sorted(st.docs, key=lambda i: (not st.docs[i].present, st.docs[i].kind != "object", i))
        for i in order:
            sub.nodes[i] = RetrievedNode(i, 1.0, ["whole graph"], self._attrs(i, None, full=True))
        sub.edges = [(s, r, o) for s, o, rels in st.graph.edges(data="relations") for r in (rels or {})
                     if s in sub.nodes and o in sub.nodes]
        sub.total_objects = st.objects()
        return sub

    # ------------------------------------------------------------------ the subgraph
    def _add(self, sub: Subgraph, doc_id: str, score: float, reason: str, ent: EntityQuery | None) -> bool:
        node = sub.nodes.get(doc_id)
        if node is None:
            sub.nodes[doc_id] = RetrievedNode(doc_id, float(score), [reason], {})
            node = sub.nodes[doc_id]
            added = True
        else:
            node.score = max(node.score, float(score))
            if reason not in node.reasons:
                node.reasons.append(reason)
            added = False
        asked = sub.asked.setdefault(doc_id, set())
        if ent is not None:
            asked.update(ent.attributes)
        return added

    def _expand(self, sub: Subgraph, entities: list[EntityQuery], people: bool, reason_prefix: str = "entity") -> None:
        st, s = self.store, self.settings
        if not st.docs:
            return
        phrases = list(dict.fromkeys(e.phrase for e in entities if e.phrase and not e.id_hint and not e.generic))
        qv = dict(zip(phrases, self.embedder.embed(phrases))) if phrases else {}
        present = [i for i in st.present if st.docs[i].kind == "object"]
        if present:
            label_vecs = self.embedder.embed([st.docs[i].content for i in present])
            text_vecs = self.embedder.embed([st.docs[i].text for i in present])
        entries: dict[int, list[str]] = {}
        for n, e in enumerate(entities):
            reason = f"{reason_prefix} '{e.phrase}'"
            hits: dict[str, float] = {}
            closest: set[str] = set()
            if e.id_hint:
                exact = next((i for i in st.docs if i.lower() == e.id_hint.lower()), None)
                if exact is not None:
                    hits[exact] = 1.0
            if e.person:
                for p in sorted(st.people, key=lambda i: (not st.docs[i].present, i)):
                    hits.setdefault(p, 0.9)
            if not e.person and not e.generic:
                for t in (*e.types, type_key(e.phrase)):
                    for i in st.by_type.get(t, ()):
                        hits[i] = max(hits.get(i, 0.0), 0.95 if t != type_key(e.phrase) else 1.0)
                v = qv.get(e.phrase)
                words = e.phrase.split()
                scored: dict[tuple[str, str], float] = {}      # (label, text) -> meaning score

                def score(i: str, sim_label: float, sim_text: float) -> float:
                    d = st.docs[i]
                    k = (d.content, d.text)
                    if k not in scored:     # at most 1: the word bonus can lift a score above it
                        scored[k] = min(1.0, meaning_score(self.kb, words, d.content, d.text, sim_label, sim_text))
                    return scored[k]

                if v is not None and present:
                    sc = {i: score(i, a, b) for i, a, b in zip(present, label_vecs @ v, text_vecs @ v)}
                    named = any(i in hits for i in present) or max(sc.values()) >= MEANING_SCORE
                    for i, x in sc.items():
                        if x >= s.sight_threshold:
                            hits[i] = max(hits.get(i, 0.0), x)
                    if not named:       # nothing in sight is surely what the phrase names: the closest
                        for i in sorted(sc, key=lambda i: (-sc[i], i))[: s.k_sight]:
                            if i not in hits:
                                hits[i] = sc[i]
                                closest.add(i)
                if v is not None and s.k_memory > 0:
                    keys, _ = st.index.search(v, 2 * (s.k_memory + len(st.present)) + 16)
                    for i in dict.fromkeys(st.by_key.get(doc_key(k)) for k in keys):
                        if i is None or i in hits or (st.docs[i].present and st.docs[i].kind == "object"):
                            continue
                        x = score(i, float(st.vector(i) @ v), float(st.text_vector(i) @ v))
                        if x >= s.threshold:
                            hits[i] = x
            sight = sorted((i for i in hits if st.docs[i].present), key=lambda i: -hits[i])[: s.k_sight]
            memory = sorted((i for i in hits if not st.docs[i].present),
                            key=lambda i: (-hits[i], -float(st.docs[i].meta.get("last_seen") or 0.0), i))
            memory = memory[: max(s.k_memory, 1 if e.id_hint else 0)]
            if e.role == "mentioned" and not e.id_hint and sight:
                memory = []      # a type a thought mentions: the instances in sight, else remembered ones
            chosen = sight + memory
            for i in chosen:
                self._add(sub, i, hits[i], f"closest in sight to '{e.phrase}'" if i in closest else reason, e)
            entries[n] = chosen
        # generic heads ("the thing left of the vase"): what stands in the relation to the reference
        for n, e in enumerate(entities):
            if not e.generic:
                continue
            refs = [i for m, ids in entries.items() if entities[m].role == "reference" for i in ids]
            rels = {r for group in e.via for r in group}
            found = []
            for ref in refs:
                if ref in st.graph:
                    found += [x for x, _, d in st.graph.in_edges(ref, data=True)
                              if rels & set(d.get("relations") or {}) and x in st.docs]
                    found += [x for _, x, d in st.graph.out_edges(ref, data=True)
                              if rels & set(d.get("relations") or {}) and x in st.docs]
            if not found and not rels:
                found = sorted(st.present)
            for i in dict.fromkeys(found):
                if st.docs[i].kind == "object":
                    self._add(sub, i, 0.8, f"{reason_prefix} '{e.phrase}' (by relation)", e)
            entries[n] = list(dict.fromkeys(found))
        # neighbours the relations in question need
        for n, e in enumerate(entities):
            for i in entries.get(n, []):
                self._neighbours(sub, i, e.relations)
        if people:
            for p in sorted(st.people, key=lambda i: (not st.docs[i].present, i)):
                self._add(sub, p, 0.9, "people take part", None)

    def _neighbours(self, sub: Subgraph, node: str, relations: tuple[str, ...]) -> None:
        st, s = self.store, self.settings
        g = st.graph
        if node not in g:
            return
        score = sub.nodes[node].score if node in sub.nodes else 0.5
        if not st.docs[node].present:
            return      # a remembered object: its last support is part of its description
        for _, o, d in g.out_edges(node, data=True):         # what carries or contains it
            rels = set(d.get("relations") or {})
            for r in SUPPORT_RELATIONS:
                if r in rels and o in st.docs:
                    self._add(sub, o, score * 0.8, f"{'contains' if r == 'inside' else 'carries'} {node}", None)
        for r in relations:                                 # X <r> node, as its preconditions ask
            found = [x for x, _, d in g.in_edges(node, data=True) if r in (d.get("relations") or {}) and x in st.docs]
            for x in found[: s.max_neighbours]:
                self._add(sub, x, score * 0.8, f"{r} {node}", None)
        if "blocking" in relations and node in sub.nodes and \
                not any(r.startswith("closest in sight") for r in sub.nodes[node].reasons):
            # what stands by the way there (not for the closest objects taken as a guess)
            for x in self._near_path(node)[: s.max_neighbours]:
                self._add(sub, x, score * 0.7, f"near the floor path to {node}", None)

    def _supported(self, node: str) -> bool:
        """Whether the graph says something carries or contains ``node`` (it is not on the floor)."""
        g = self.store.graph
        return node in g and any(r in (d.get("relations") or {}) for _, _, d in g.out_edges(node, data=True)
                                 for r in SUPPORT_RELATIONS)

    def _near_path(self, node: str) -> list[str]:
        """Objects in sight whose footprint comes within ``path_margin_m`` of the floor path from
        the robot's base to ``node`` (whatever their height: a chair seen only at its top still
        stands there), except what carries or contains ``node`` and what stands on furniture;
        nearest first. The blocking
        relation decides whether they block; retrieval only keeps them at hand."""
        st, s = self.store, self.settings
        robot = st.robot or {}
        a = st._attrs.get(node) or {}
        if robot.get("x") is None or a.get("box_min") is None or a.get("box_max") is None:
            return []
        base = (float(robot["x"]), float(robot["y"]))
        lo, hi = np.asarray(a["box_min"], float), np.asarray(a["box_max"], float)
        end = floor_path_end(base, lo, hi)
        near = []
        for x in st.present:
            b = st._attrs.get(x) or {}
            if x == node or b.get("kind") != "object" or b.get("held") or b.get("box_min") is None:
                continue
            blo, bhi = np.asarray(b["box_min"], float), np.asarray(b["box_max"], float)
            if carries(blo, bhi, lo, hi) or self._supported(x):
                continue            # its support, or a thing standing on furniture, not on the floor
            d = segment_box_distance_2d(base, end, blo, bhi)
            if d <= s.path_margin_m:
                near.append((d, x))
        return [x for _, x in sorted(near)]

    def _finish(self, sub: Subgraph) -> None:
        st = self.store
        # the robot's own state is always part of the task: what it holds
        held = st.robot.get("holding") if st.robot else None
        if held and held in st.docs:
            self._add(sub, held, 1.0, "in the gripper", None)
        for i, node in sub.nodes.items():
            node.attributes = self._attrs(i, sub.asked.get(i, set()))
        order = sorted(sub.nodes.values(), key=lambda n: -n.score)
        sub.nodes = {n.id: n for n in order}
        g = st.graph
        sub.edges = [(a, r, b) for a in sub.nodes if a in g for b in g.successors(a) if b in sub.nodes
                     for r in (g.edges[a, b].get("relations") or {})]
        if held and held in sub.nodes:
            sub.edges.append((ROBOT_ID, "holding", held))
        sub.total_objects = st.objects()
        sub.stamp = st.stamp

    def _attrs(self, doc_id: str, asked: set[str] | None, full: bool = False) -> dict[str, Any]:
        doc = self.store.docs[doc_id]
        m = doc.meta
        out = {k: m[k] for k in BASE_KEYS if m.get(k) is not None}
        out["visible"] = bool(m.get("visible"))
        if not doc.present:
            for k in MEMORY_KEYS:
                if m.get(k) is not None:
                    out[k] = m[k]
        if full:
            for k in ("state", "properties", "distance_m", "looking_at_robot", "hands_free"):
                if m.get(k) is not None:
                    out[k] = m[k]
            return out
        for k in asked or ():
            if k in ("properties", "distance_m", "looking_at_robot", "hands_free"):
                if m.get(k) is not None:
                    out[k] = m[k]
            elif isinstance(m.get("state"), Mapping) and k in m["state"]:
                out.setdefault("state", {})[k] = m["state"][k]
        return out


RetrieveFn = Callable[..., Subgraph]
