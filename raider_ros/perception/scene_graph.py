"""The scene graph: what the robot has perceived, with ids that stay stable across frames.

Nodes are the robot (id ``robot``), objects and people. Node attributes: ``kind`` (robot |
object | person), ``type``, ``visible``, ``held``, ``first_seen``, ``last_seen``, ``box_min``,
``box_max``, ``center``, ``size``, ``distance_m``, ``pixel_count``, ``valid_depth_pixels``,
``rgb`` and ``colour`` (measured from the image, perception/colour.py; None without RGB),
``state``, ``properties`` (objects), ``name``, ``looking_at_robot``, ``hands_free`` (people).
A directed edge ``subject -> object`` carries ``relations``: ``{relation name: evidence}`` for
every relation that holds from subject to object (one edge per ordered pair keeps the update
cheap); the robot's edge to the object in its gripper carries ``{"holding": {}}``.

Ids. A detection whose name is an instance id (the sim detector reports world ids) keeps it.
A detection without one (its name is empty or just its label, or ``trust_names=False``) is
associated with a node of the same type from earlier frames: best 3-D box overlap (IoU at
least ``assoc_iou``), else the nearest centroid within ``assoc_dist_m``; failing both it gets a
new ``Type_N`` id (N never reused).

Unseen policy. An entity missing from the latest frame stays in the graph with
``visible=False``, its last geometry and ``last_seen``; its relation edges go (relations are
facts of one frame). It is forgotten ``forget_after_s`` after it was last seen, except the
object in the gripper, which is kept (``held=True``) while it is held. Tools report such
objects as known but not visible; a type match prefers instances that are present.

Memory. :meth:`SceneGraph.remember` adds objects the robot saw earlier, elsewhere (a house's
other rooms): remembered nodes (``visible=False``, ``memory=True``) with their last geometry,
``last_seen``, ``room`` and the support they were last seen on or in (``last_relation``).
They are kept until :meth:`clear`, whatever ``forget_after_s`` says, and carry no relation
edges (relations are facts of the current frame).

Threads. :meth:`SceneGraph.update` builds a new immutable :class:`SceneSnapshot` and swaps it
in under a lock; readers take :meth:`SceneGraph.snapshot` and use it without locking.
"""
from __future__ import annotations

import json
import math
import re
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import networkx as nx
import numpy as np

from .colour import name_colour
from .matching import Entity, Matcher
from .base_scan import BaseScan
from .provider import Provider, ProviderError, RobotInfo
from .types import PerceivedObject

ROBOT_ID = "robot"
_KEEP = object()      # update(): keep the snapshot's scan
_ID_SUFFIX = re.compile(r"^(.*)_(\d+)$")


def jsonable(value: Any) -> Any:
    """Plain JSON values: numpy scalars/arrays to Python, NaN/inf to None, tuples to lists."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return round(v, 4) if math.isfinite(v) else None
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset, np.ndarray)):
        return [jsonable(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    return str(value)


def _ask(fn: Callable[[], Any], default: Any) -> Any:
    """A provider answer, or ``default`` while the provider has nothing yet."""
    try:
        return fn()
    except ProviderError:
        return default


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def type_from_id(obj_id: str) -> str:
    m = _ID_SUFFIX.match(obj_id)
    return m.group(1) if m else obj_id


def _box_iou(a_min, a_max, b_min, b_max) -> float:
    inter = np.clip(np.minimum(a_max, b_max) - np.maximum(a_min, b_min), 0.0, None).prod()
    if inter <= 0.0:
        return 0.0
    union = np.prod(a_max - a_min) + np.prod(b_max - b_min) - inter
    return float(inter / union) if union > 0 else 0.0


@dataclass(frozen=True)
class GraphUpdate:
    """What one update did (for logs and tests)."""
    frame: int
    added: tuple[str, ...]
    lost: tuple[str, ...]          # visible in the previous frame, not in this one
    forgotten: tuple[str, ...]
    renamed: Mapping[str, str]     # detection name -> graph id, where they differ
    dropped_relations: int         # relations naming an entity not in the graph
    elapsed_ms: float


@dataclass(frozen=True)
class SceneSnapshot:
    """One consistent view of the graph. Never mutated after :meth:`SceneGraph.update` built it."""
    graph: nx.DiGraph
    perceived: Mapping[str, PerceivedObject]    # latest geometry of every object/person node
    robot: RobotInfo | None
    stamp: float
    frame: int
    scan: BaseScan | None = None                # the latest base laser scan (None: camera only)
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    # look-ups -----------------------------------------------------------------------
    def node(self, node_id: str) -> dict | None:
        return self.graph.nodes[node_id] if node_id in self.graph else None

    def ids(self, kind: str | None = None, *, visible: bool | None = None) -> list[str]:
        return [n for n, a in self.graph.nodes(data=True)
                if (kind is None or a["kind"] == kind) and (visible is None or a.get("visible") == visible)]

    def visible_objects(self) -> list[str]:
        return self.ids("object", visible=True)

    def visible_people(self) -> list[str]:
        return self.ids("person", visible=True)

    def seconds_since_seen(self, node_id: str) -> float | None:
        a = self.node(node_id)
        if a is None or a.get("last_seen") is None:
            return None
        return max(0.0, self.stamp - a["last_seen"])

    def related(self, obj: str, relation: str) -> list[tuple[str, dict]]:
        """``[(X, evidence)]`` for every edge ``X <relation> obj``."""
        if obj not in self.graph:
            return []
        return [(s, rels[relation]) for s, _, rels in self.graph.in_edges(obj, data="relations")
                if relation in rels]

    def relation_triples(self) -> list[tuple[str, str, str]]:
        """Every ``(subject, relation, object)`` of the graph."""
        return [(s, r, o) for s, o, rels in self.graph.edges(data="relations") for r in rels]

    @property
    def matcher(self) -> Matcher:
        m = self._cache.get("matcher")
        if m is None:
            m = Matcher([Entity(n, a["type"], a["kind"], a.get("name"), bool(a.get("visible") or a.get("held")))
                         for n, a in self.graph.nodes(data=True) if a["kind"] != "robot"])
            self._cache["matcher"] = m
        return m

    def kdtree(self, node_id: str):
        """cKDTree of an entity's points, built once per snapshot (None without points)."""
        key = ("kd", node_id)
        if key not in self._cache:
            from scipy.spatial import cKDTree
            po = self.perceived.get(node_id)
            self._cache[key] = cKDTree(po.points) if po is not None and len(po.points) else None
        return self._cache[key]

    # export -------------------------------------------------------------------------
    def to_dict(self, *, plain: bool = True) -> dict:
        """Nodes (without point clouds) and one entry per relation; ``plain=False`` leaves the
        evidence values as the relation stage produced them (to_json's fast path)."""
        nodes = []
        for n, a in self.graph.nodes(data=True):
            d = {"id": n}
            d.update({k: v for k, v in a.items() if k != "marker_id"})
            nodes.append(jsonable(d))
        edges = [{"subject": s, "relation": r, "object": o, "evidence": jsonable(ev) if plain else ev}
                 for s, o, rels in self.graph.edges(data="relations") for r, ev in rels.items()]
        return {"frame": self.frame, "stamp": jsonable(self.stamp), "nodes": nodes, "edges": edges}

    def to_json(self) -> str:
        """The graph as JSON for a latched topic: NaN/inf become null, numpy values plain."""
        cached = self._cache.get("json")
        if cached is None:
            try:  # most evidence is plain already: skip the recursive clean-up
                cached = json.dumps(self.to_dict(plain=False), allow_nan=False, default=_json_default)
            except (TypeError, ValueError):
                cached = json.dumps(self.to_dict(), allow_nan=False)
            self._cache["json"] = cached
        return cached

    def markers(self) -> list[dict]:
        """Plain dicts a ROS adapter turns into a visualization_msgs/MarkerArray (one cube each)."""
        out = []
        for n, a in self.graph.nodes(data=True):
            if a["kind"] == "robot" or a.get("center") is None or a.get("held"):
                continue  # the object in the gripper is not where it was last seen
            visible = bool(a.get("visible"))
            dist = a.get("distance_m")
            label = n if a.get("name") is None else f"{n} ({a['name']})"
            if visible and dist is not None and math.isfinite(dist):
                label += f" {dist:.2f} m"
            elif not visible:
                label += " (unseen)"
            out.append({
                "id": n, "marker_id": a["marker_id"], "ns": a["kind"], "type": a["type"],
                "center": list(a["center"]), "size": [max(s, 0.01) for s in a["size"]],
                "color": list(_colour(a["type"], a["kind"], visible)),
                "text": label, "visible": visible,
            })
        return out


def _colour(type_name: str, kind: str, visible: bool) -> tuple[float, float, float, float]:
    if not visible:
        return (0.5, 0.5, 0.5, 0.25)
    if kind == "person":
        return (0.2, 0.4, 1.0, 0.6)
    h = zlib.crc32(type_name.encode()) % 360 / 60.0        # a steady hue per type
    x = 1 - abs(h % 2 - 1)
    r, g, b = [(1, x, 0), (x, 1, 0), (0, 1, x), (0, x, 1), (x, 0, 1), (1, 0, x)][int(h) % 6]
    return (0.2 + 0.8 * r, 0.2 + 0.8 * g, 0.2 + 0.8 * b, 0.6)


def _empty_snapshot() -> SceneSnapshot:
    g = nx.DiGraph()
    return SceneSnapshot(g, {}, None, stamp=0.0, frame=0)


class SceneGraph:
    """Keeps the latest :class:`SceneSnapshot`; :meth:`update` folds in one perception frame."""

    def __init__(self, *, forget_after_s: float = 30.0, trust_names: bool = True,
                 assoc_iou: float = 0.1, assoc_dist_m: float = 0.3,
                 clock: Callable[[], float] = time.monotonic):
        if not forget_after_s > 0 or not assoc_dist_m > 0 or not 0 <= assoc_iou <= 1:
            raise ValueError(f"scene graph: bad settings forget_after_s={forget_after_s}, "
                             f"assoc_dist_m={assoc_dist_m}, assoc_iou={assoc_iou}")
        self.forget_after_s = float(forget_after_s)
        self.trust_names = trust_names
        self.assoc_iou = float(assoc_iou)
        self.assoc_dist_m = float(assoc_dist_m)
        self._clock = clock
        self._lock = threading.Lock()
        self._snap = _empty_snapshot()
        self._marker_ids: dict[str, int] = {}
        self._next_index: dict[str, int] = {}

    # reading --------------------------------------------------------------------------
    def snapshot(self) -> SceneSnapshot:
        return self._snap

    def to_json(self) -> str:
        return self._snap.to_json()

    def markers(self) -> list[dict]:
        return self._snap.markers()

    def clear(self) -> None:
        """Forget everything (a new scene was loaded)."""
        with self._lock:
            self._snap = _empty_snapshot()
            self._marker_ids.clear()
            self._next_index.clear()

    def remember(self, entries: Iterable[Mapping[str, Any]], *, stamp: float | None = None) -> int:
        """Add remembered objects (memory of what was seen elsewhere); returns how many.

        Each entry: ``id``, ``type``, ``center``, ``size`` (metres), ``seen_s_ago`` (or
        ``last_seen``, seconds on this graph's clock), optional ``state``, ``properties``,
        ``room`` and ``last_relation`` (``[relation, other id]``). An id already in the graph
        is left as it is (what is seen now wins). Errors name the entry and field."""
        with self._lock:
            prev = self._snap
            now = float(self._clock() if stamp is None else stamp)
            g = nx.DiGraph()
            for nid, a in prev.graph.nodes(data=True):   # attribute dicts shared, never mutated
                g.add_node(nid)
                g._node[nid] = a
            g.add_edges_from(prev.graph.edges(data=True))
            added = 0
            for i, e in enumerate(entries):
                if not isinstance(e, Mapping) or not isinstance(e.get("id"), str) or not e["id"]:
                    raise ValueError(f"scene graph memory: entry {i}: expected a mapping with a string id, got {e!r}")
                nid = e["id"]
                if nid in g:
                    continue
                try:
                    c = np.asarray(e["center"], dtype=float).reshape(3)
                    sz = np.asarray(e["size"], dtype=float).reshape(3)
                    seen = float(e["last_seen"]) if e.get("last_seen") is not None else now - float(e["seen_s_ago"])
                except (KeyError, TypeError, ValueError) as exc:
                    raise ValueError(f"scene graph memory: entry {i} ({nid}): needs center, size and "
                                     f"seen_s_ago or last_seen as numbers ({type(exc).__name__}: {exc})") from None
                rel = e.get("last_relation")
                g.add_node(nid, kind="object", type=str(e.get("type") or type_from_id(nid)), visible=False, held=False,
                           memory=True, first_seen=seen, last_seen=seen, marker_id=self._marker(nid),
                           box_min=tuple((c - sz / 2).tolist()), box_max=tuple((c + sz / 2).tolist()),
                           center=tuple(c.tolist()), size=tuple(sz.tolist()), distance_m=None,
                           pixel_count=0, valid_depth_pixels=0,
                           state=dict(e["state"]) if e.get("state") is not None else None,
                           properties=list(e["properties"]) if e.get("properties") is not None else None,
                           room=e.get("room") or None,
                           last_relation=[str(rel[0]), str(rel[1])] if rel else None)
                self._note_index(nid)
                added += 1
            snap = SceneSnapshot(g, dict(prev.perceived), prev.robot, stamp=max(prev.stamp, now), frame=prev.frame,
                                 scan=prev.scan)
            snap.matcher
            self._snap = snap
        return added

    # writing --------------------------------------------------------------------------
    def set_scan(self, scan: BaseScan | None) -> None:
        """Hand the latest base laser scan to the tools (a new snapshot with the same graph);
        None goes back to camera only."""
        if scan is not None and not isinstance(scan, BaseScan):
            raise TypeError(f"scene graph: expected a BaseScan or None, got {type(scan).__name__}")
        with self._lock:
            prev = self._snap
            snap = SceneSnapshot(prev.graph, prev.perceived, prev.robot, stamp=prev.stamp, frame=prev.frame, scan=scan)
            snap._cache["matcher"] = prev.matcher
            self._snap = snap

    def update(self, result: Any, provider: Provider | None = None, *, stamp: float | None = None,
               scan: Any = _KEEP) -> GraphUpdate:
        """Fold in a ``PerceptionResult`` (anything with ``objects: dict[name, PerceivedObject]``
        and ``relations: list[Relation]``). ``provider`` adds states, properties, people info
        and the robot; ``stamp`` (seconds) defaults to the clock; ``scan`` (a
        :class:`BaseScan` or None) replaces the base laser scan, which is kept when not given."""
        if scan is not _KEEP and scan is not None and not isinstance(scan, BaseScan):
            raise TypeError(f"scene graph: expected a BaseScan or None, got {type(scan).__name__}")
        t0 = time.perf_counter()
        objects = getattr(result, "objects", None)
        relations = getattr(result, "relations", None)
        if not isinstance(objects, Mapping) or relations is None:
            raise TypeError(f"scene graph: expected a perception result with objects (dict) and relations, "
                            f"got {type(result).__name__}")
        with self._lock:
            prev = self._snap
            now = float(self._clock() if stamp is None else stamp)
            robot = _ask(provider.robot, prev.robot) if provider is not None else prev.robot
            ids = self._assign_ids(objects, prev)

            g = nx.DiGraph()
            perceived: dict[str, PerceivedObject] = {}
            people = {p.id: p for p in _ask(provider.people, [])} if provider is not None else {}
            added = []
            for name, po in objects.items():
                if not isinstance(po, PerceivedObject):
                    raise TypeError(f"scene graph: objects[{name!r}] is a {type(po).__name__}, not a PerceivedObject")
                nid = ids[name]
                old = prev.graph.nodes[nid] if nid in prev.graph else None
                if old is None:
                    added.append(nid)
                attrs = self._geometry_attrs(nid, po, now, old)
                if old is not None and old.get("memory"):
                    attrs.update(memory=True, room=old.get("room"))
                if po.is_person:
                    info = people.get(nid)
                    attrs.update(name=info.name if info else None,
                                 looking_at_robot=info.looking_at_robot if info else None,
                                 hands_free=info.hands_free if info else None)
                else:
                    attrs.update(self._provider_attrs(provider, nid, old))
                g.add_node(nid, **attrs)
                perceived[nid] = po

            holding = robot.holding if robot is not None else None
            forgotten, lost = [], []
            for nid, a in prev.graph.nodes(data=True):
                if nid in g or a["kind"] == "robot":
                    continue
                if a.get("visible"):
                    lost.append(nid)
                seen = a.get("last_seen")
                if nid != holding and not a.get("memory") and (seen is None or now - seen > self.forget_after_s):
                    forgotten.append(nid)
                    continue
                if a.get("visible") or a.get("held") or nid == holding:
                    g.add_node(nid, **{**a, "visible": False, "held": nid == holding})
                else:   # unseen before and now: the same attributes (shared, never mutated)
                    g.add_node(nid)
                    g._node[nid] = a
                if nid in prev.perceived:
                    perceived[nid] = prev.perceived[nid]

            if holding is not None:
                if holding in g:
                    if g.nodes[holding]["kind"] == "object":
                        g.nodes[holding].update(self._provider_attrs(provider, holding, None), held=True)
                else:  # picked before it was ever seen: no geometry
                    g.add_node(holding, kind="object", type=self._type_of(provider, holding), visible=False,
                               held=True, first_seen=None, last_seen=None, marker_id=self._marker(holding),
                               center=None, size=None, box_min=None, box_max=None, distance_m=None,
                               pixel_count=0, valid_depth_pixels=0,
                               **self._provider_attrs(provider, holding, None))
            if robot is not None:
                g.add_node(ROBOT_ID, kind="robot", type="Robot", visible=True, x=robot.x, y=robot.y,
                           yaw_deg=robot.yaw_deg, reach=robot.reach, holding=holding)
                if holding is not None:
                    g.add_edge(ROBOT_ID, holding, relations={"holding": {}})

            edges: dict[tuple[str, str], dict] = {}
            dropped, current = 0, set(ids.values())
            for r in relations:
                s, o = ids.get(r.subject, r.subject), ids.get(r.object, r.object)
                if s in current and o in current:
                    rels = edges.get((s, o))
                    if rels is None:
                        rels = edges[(s, o)] = {}
                    rels[r.relation] = r.evidence
                else:
                    dropped += 1
            g.add_edges_from((s, o, {"relations": rels}) for (s, o), rels in edges.items())

            snap = SceneSnapshot(g, perceived, robot, stamp=now, frame=prev.frame + 1,
                                 scan=prev.scan if scan is _KEEP else scan)
            snap.matcher  # built here, off the tool-call path
            self._snap = snap
        renamed = {k: v for k, v in ids.items() if k != v}
        return GraphUpdate(snap.frame, tuple(added), tuple(lost), tuple(forgotten), renamed, dropped,
                           (time.perf_counter() - t0) * 1000.0)

    # helpers --------------------------------------------------------------------------
    def _marker(self, nid: str) -> int:
        return self._marker_ids.setdefault(nid, len(self._marker_ids) + 1)

    @staticmethod
    def _type_of(provider: Provider | None, nid: str) -> str:
        fn = getattr(provider, "object_type", None)
        if fn is not None:
            try:
                return str(fn(nid))
            except (KeyError, ProviderError):
                pass
        return type_from_id(nid)

    def _geometry_attrs(self, nid: str, po: PerceivedObject, now: float, old: dict | None) -> dict:
        lo = np.asarray(po.aabb_min, dtype=float)
        hi = np.asarray(po.aabb_max, dtype=float)
        return {
            "kind": "person" if po.is_person else "object",
            "type": "Person" if po.is_person else po.label,
            "visible": True, "held": False,
            "first_seen": old["first_seen"] if old and old.get("first_seen") is not None else now,
            "last_seen": now,
            "box_min": tuple(lo.tolist()), "box_max": tuple(hi.tolist()),
            "center": tuple(((lo + hi) / 2).tolist()), "size": tuple((hi - lo).tolist()),
            "distance_m": float(po.distance_m),
            "pixel_count": int(po.pixel_count), "valid_depth_pixels": int(po.valid_depth_pixels),
            "rgb": po.rgb if po.rgb is not None else (old or {}).get("rgb"),
            "colour": name_colour(po.rgb) if po.rgb is not None else (old or {}).get("colour"),
            "marker_id": old["marker_id"] if old else self._marker(nid),
        }

    @staticmethod
    def _provider_attrs(provider: Provider | None, nid: str, old: dict | None) -> dict:
        state = properties = None
        if provider is not None:
            try:
                state = dict(provider.state(nid))
                properties = list(provider.properties(nid))
            except (KeyError, ProviderError):
                state = properties = None
        if state is None and old is not None:
            return {"state": old.get("state"), "properties": old.get("properties")}
        return {"state": state, "properties": properties}

    def _assign_ids(self, objects: Mapping[str, PerceivedObject], prev: SceneSnapshot) -> dict[str, str]:
        """Detection name -> stable graph id."""
        ids: dict[str, str] = {}
        unnamed = []
        for name, po in objects.items():
            label = getattr(po, "label", "") or ""
            if self.trust_names and name and name.lower() != label.lower():
                ids[name] = name
                self._note_index(name)
            else:
                unnamed.append((name, po))
        if not unnamed:
            return ids
        taken = set(ids.values())
        pairs = []
        for name, po in unnamed:
            typ = "Person" if po.is_person else po.label
            c = np.asarray(po.centroid, dtype=float)
            for nid, a in prev.graph.nodes(data=True):
                if nid in taken or a["type"] != typ or a.get("box_min") is None:
                    continue
                iou = _box_iou(np.asarray(po.aabb_min), np.asarray(po.aabb_max),
                               np.asarray(a["box_min"]), np.asarray(a["box_max"]))
                d = float(np.linalg.norm(c - np.asarray(a["center"])))
                if iou >= self.assoc_iou and iou > 0:
                    pairs.append((1.0 + iou, name, nid))
                elif d <= self.assoc_dist_m:
                    pairs.append((1.0 - d / self.assoc_dist_m, name, nid))
        pairs.sort(key=lambda p: -p[0])
        for _, name, nid in pairs:
            if name not in ids and nid not in taken:
                ids[name] = nid
                taken.add(nid)
        for name, po in unnamed:
            if name not in ids:
                ids[name] = self._mint("Person" if po.is_person else (po.label or "Object"), taken | set(prev.graph))
                taken.add(ids[name])
        return ids

    def _note_index(self, nid: str) -> None:
        m = _ID_SUFFIX.match(nid)
        if m:
            t, n = m.group(1), int(m.group(2))
            self._next_index[t] = max(self._next_index.get(t, 1), n + 1)

    def _mint(self, typ: str, used: Iterable[str]) -> str:
        used = set(used)
        n = self._next_index.get(typ, 1)
        while f"{typ}_{n}" in used:
            n += 1
        self._next_index[typ] = n + 1
        return f"{typ}_{n}"

