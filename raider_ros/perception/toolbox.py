"""The tools the agent calls (paper §3.4 and §5.2), answered from the scene graph.

``ToolBox(graph, provider, config).call(name, args) -> ToolResult``; the result schema of each
tool is the table in docs/architecture.md ("Tool names, arguments and JSON results").

* Geometry (distances, relations, free paths) comes from the perceived point clouds and boxes
  in the scene graph, never from the simulator truth. States, properties, names, gaze and hands
  come from the graph's provider data; the robot's pose, reach and gripper from the provider.
* Names go through :mod:`raider_ros.perception.matching`. A name matching several instances
  ("mug") answers for each of them, as a list, so the agent can judge the ambiguity; an
  unknown name fails with ``{"error": "not found", "closest": [...]}``; an object known but
  out of sight fails with ``{"error": "not visible", "last_seen_s_ago": ...}``.
* The object in the gripper is present (grounding may refer to it) but not visible: state and
  property tools answer for it, distance tools answer 0 with ``held_by_robot: true``.
"""
from __future__ import annotations

import inspect
import json
import math
import threading
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from raider_ros.common.geometry import floor_path_end
from raider_ros.common.limits import MAX_TOOL_ARG_CHARS, tool_args_problem
from raider_ros.common.paths import data_dir
from raider_ros.common.tool_contract import (ToolExecutorBase, ToolFailure, ToolResult, check_implementations,
                                             tool_catalogue)

from .base_scan import LASER_HEIGHT_M, ScanObstacleParams, floor_obstacles
from .matching import NoMatch
from .provider import Provider, RobotInfo
from .relations import RelationParams
from .relations import check_free_path as relations_free_path
from .scene_graph import SceneGraph, SceneSnapshot, jsonable
from raider_ros.common.vocabulary import RELATIONS

__all__ = ["ToolBox", "ToolConfig", "ToolResult", "TOOL_PARAMS", "normalise_relation"]

# other ways of naming the relations of types.RELATIONS (same direction: "X <rel> obj")
_RELATION_ALIASES = {
    "in": "inside", "inside of": "inside", "within": "inside", "contained in": "inside",
    "on": "on top of", "on top": "on top of", "ontop of": "on top of", "on the top of": "on top of",
    "over": "above", "under": "below", "underneath": "below", "beneath": "below",
    "left": "on the left of", "left of": "on the left of", "to the left of": "on the left of",
    "right": "on the right of", "right of": "on the right of", "to the right of": "on the right of",
    "occluding": "blocking", "occludes": "blocking", "blocks": "blocking", "obstructing": "blocking",
    "next to": "near", "close to": "near", "nearby": "near", "beside": "near",
}


def normalise_relation(name: Any) -> str:
    """'On_top_of', 'to the left of' -> the relation of types.RELATIONS; ValueError otherwise."""
    key = " ".join(str(name).replace("_", " ").replace("-", " ").lower().split()) if isinstance(name, str) else ""
    key = _RELATION_ALIASES.get(key, key)
    if key not in RELATIONS:
        raise ValueError(f"unknown relationship {name!r}; allowed: {', '.join(RELATIONS)}")
    return key


@dataclass(frozen=True)
class ToolConfig:
    path_clearance_m: float = 0.3     # an obstacle closer than this to the floor path blocks it
    max_results: int = 12             # answers per call when a name matches many instances
    default_reach_m: float = 1.1      # used only when no robot information is available
    user_info_corpus: str = ""        # path; "" = data/user_info/corpus.yaml
    user_info_wait_s: float = 0.0     # while the embedding model loads, a call waits this long and
                                      # then answers "loading" (0: it waits until the model is ready)
    max_arg_chars: int = MAX_TOOL_ARG_CHARS   # longer arguments are refused (never echoed back)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any] | None) -> "ToolConfig":
        if raw is None:
            return cls()
        if isinstance(raw, cls):
            return raw
        if not isinstance(raw, Mapping):
            raise ValueError(f"tool config: expected a mapping, got {type(raw).__name__}")
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(raw) - set(known))
        if unknown:
            raise ValueError(f"tool config: unknown key {unknown[0]!r}; known: {', '.join(known)}")
        try:
            cfg = cls(**{k: type(getattr(cls(), k))(v) for k, v in raw.items()})
        except (TypeError, ValueError) as e:
            raise ValueError(f"tool config: bad value: {e}") from None
        if not cfg.path_clearance_m > 0 or cfg.max_results < 1 or not cfg.default_reach_m > 0 \
                or cfg.user_info_wait_s < 0 or cfg.max_arg_chars < 1:
            raise ValueError(f"tool config: values must be positive, got {cfg}")
        return cfg


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def _r(x: float) -> float:
    return round(float(x), 3)


class ToolBox(ToolExecutorBase):
    """Answers the agent's tools from a :class:`SceneGraph` (and a :class:`Provider`)."""

    def __init__(self, graph: SceneGraph, provider: Provider | None = None,
                 config: ToolConfig | Mapping[str, Any] | None = None, *, user_info: Any = None):
        self.graph = graph
        self.provider = provider
        self.config = ToolConfig.from_dict(config)
        self._user_info = user_info
        self._user_info_lock = threading.Lock()
        self._relation_params = replace(RelationParams(), path_corridor_m=self.config.path_clearance_m)
        self._scan_params = ScanObstacleParams()
        self._tools: dict[str, Callable[..., Any]] = {n: getattr(self, "_t_" + n) for n in TOOL_PARAMS}

    @classmethod
    def implemented(cls) -> dict[str, tuple[str, ...]]:
        """Tool -> parameter names, read off the ``_t_<tool>(self, snap, ...)`` methods."""
        return {name[3:]: tuple(list(inspect.signature(fn).parameters)[2:])
                for name, fn in inspect.getmembers(cls, inspect.isfunction) if name.startswith("_t_")}

    # ---------------------------------------------------------------------- public API
    @property
    def names(self) -> list[str]:
        return list(self._tools)

    @staticmethod
    def signature(name: str) -> str:
        return f"{name}({', '.join(TOOL_PARAMS[name])})"

    def call(self, name: str, args: Sequence[Any] | Mapping[str, Any] | None = (), *,
             deadline: float | None = None) -> ToolResult:
        if not isinstance(name, str) or name not in self._tools:
            return ToolResult.fail(f"unknown tool {name!r}; available tools: "
                                   + ", ".join(self.signature(n) for n in self._tools))
        if deadline is not None and time.monotonic() >= deadline:
            return ToolResult.fail("time limit reached before the call started")
        raw = list(args.values()) if isinstance(args, Mapping) else ([args] if isinstance(args, str) else args)
        if isinstance(raw, (list, tuple)):
            problem = tool_args_problem(name, raw, max_chars=self.config.max_arg_chars)
            if problem:
                return ToolResult.fail(f"argument refused: {problem}")
        try:
            values = self._bind(name, args)
            data = self._tools[name](self.graph.snapshot(), *values)
        except ToolFailure as e:
            return ToolResult.fail(e.error, jsonable(e.data) if e.data is not None else None)
        except Exception as e:  # noqa: BLE001 - a tool bug fails the call, never the agent
            return ToolResult.fail(f"{name} failed: {type(e).__name__}: {e}")
        return ToolResult.ok(jsonable(data))

    def _bind(self, name: str, args: Any) -> list[str]:
        params = TOOL_PARAMS[name]
        sig = self.signature(name)
        if args is None:
            args = []
        elif isinstance(args, str):
            args = [args]
        elif isinstance(args, Mapping):
            extra = sorted(set(args) - set(params))
            missing = [p for p in params if p not in args]
            if extra or missing:
                raise ToolFailure(f"{sig}: " + (f"unknown argument {extra[0]!r}" if extra else f"missing argument {missing[0]!r}"))
            args = [args[p] for p in params]
        elif not isinstance(args, (list, tuple)):
            raise ToolFailure(f"{sig}: arguments must be a list, got {type(args).__name__}")
        if len(args) != len(params):
            n = len(params)
            raise ToolFailure(f"{sig} takes {n} argument{'s' if n != 1 else ''}, got {len(args)}: "
                              f"{json.dumps(jsonable(list(args)))}")
        out = []
        for p, v in zip(params, args):
            if isinstance(v, bool) or not isinstance(v, (str, int, float)):
                raise ToolFailure(f"{sig}: argument {p!r} must be a name (a string), got {json.dumps(jsonable(v))}")
            out.append(str(v))
        return out

    # ---------------------------------------------------------------------- helpers
    def _robot(self, snap: SceneSnapshot) -> RobotInfo | None:
        if snap.robot is not None:
            return snap.robot
        if self.provider is not None:
            try:
                return self.provider.robot()
            except Exception:  # noqa: BLE001 - no robot information: callers say so
                return None
        return None

    def _reach(self, snap: SceneSnapshot) -> float:
        r = self._robot(snap)
        return float(r.reach) if r is not None else self.config.default_reach_m

    def _resolve(self, snap: SceneSnapshot, query: str, kinds: tuple[str, ...]) -> list[str]:
        m = snap.matcher.match(query, kinds)
        if isinstance(m, NoMatch):
            msg = m.message
            if len(snap.graph) == 0 or snap.frame == 0:
                msg += " (the scene graph is empty: no perception frame yet)"
            raise ToolFailure(msg, m.to_data())
        return list(m.ids[: self.config.max_results])

    def _each(self, snap: SceneSnapshot, query: str, kinds: tuple[str, ...],
              fn: Callable[[str], dict], key: str) -> Any:
        """One answer for one instance; a list of answers (failures inline) for several."""
        ids = self._resolve(snap, query, kinds)
        if len(ids) == 1:
            return fn(ids[0])
        out = []
        for i in ids:
            try:
                out.append(fn(i))
            except ToolFailure as e:
                out.append({key: i, "error": e.error})
        return out

    def _present(self, snap: SceneSnapshot, nid: str, *, allow_held: bool = True,
                 allow_remembered: bool = False) -> dict:
        a = snap.node(nid)
        if a is None:  # matcher and graph come from the same snapshot: cannot happen
            raise ToolFailure(f"{nid} is not in the scene graph", {"error": "not found", "query": nid, "closest": []})
        if a.get("visible") or (allow_held and a.get("held")):
            return a
        if allow_remembered and a.get("kind") == "person" and nid in snap.perceived:
            return a   # a person seen a moment ago, out of view now: where they were is known
        if a.get("held"):
            raise ToolFailure(f"{nid} is in the robot's gripper, out of the camera's view",
                              {"error": "held by robot", "object": nid})
        ago = snap.seconds_since_seen(nid)
        when = f" (last seen {ago:.1f} s ago)" if ago is not None else ""
        raise ToolFailure(f"{nid} is known but not currently visible{when}",
                          {"error": "not visible", "object": nid,
                           "last_seen_s_ago": _r(ago) if ago is not None else None})

    def _distance(self, snap: SceneSnapshot, nid: str, key: str) -> dict:
        a = self._present(snap, nid)
        reach = self._reach(snap)
        if a.get("held"):
            return {key: nid, "distance_m": 0.0, "reach_m": reach, "within_reach": True, "held_by_robot": True}
        d = a.get("distance_m")
        if not _finite(d):
            raise ToolFailure(f"distance to {nid} unknown: no valid depth among its {a.get('pixel_count', 0)} "
                              f"visible pixels", {"error": "no depth", key: nid})
        return {key: nid, "distance_m": _r(d), "reach_m": reach, "within_reach": bool(d <= reach)}

    # ---------------------------------------------------------------------- the tools
    def _t_object_detection(self, snap: SceneSnapshot) -> list[str]:
        return sorted(snap.visible_objects(), key=_natural)

    def _t_robot_holding(self, snap: SceneSnapshot) -> str | None:
        r = self._robot(snap)
        if r is None:
            raise ToolFailure("no robot information available (the provider has not reported the robot yet)")
        return r.holding

    def _t_dist_to_target(self, snap: SceneSnapshot, target: str) -> Any:
        return self._each(snap, target, ("object", "person"), lambda i: self._distance(snap, i, "target"), "target")

    def _t_dist_robot_to_obj(self, snap: SceneSnapshot, obj: str) -> Any:
        return self._each(snap, obj, ("object",), lambda i: self._distance(snap, i, "target"), "target")

    def _t_get_obj_state(self, snap: SceneSnapshot, obj: str) -> Any:
        def one(i: str) -> dict:
            a = self._present(snap, i)
            if a.get("state") is None:
                raise ToolFailure(f"no state information about {i}", {"error": "no information", "object": i})
            return {"object": i, "state": dict(a["state"])}
        return self._each(snap, obj, ("object",), one, "object")

    def _t_get_obj_properties(self, snap: SceneSnapshot, obj: str) -> Any:
        def one(i: str) -> dict:
            a = self._present(snap, i)
            if a.get("properties") is None:
                raise ToolFailure(f"no property information about {i}", {"error": "no information", "object": i})
            out = {"object": i, "properties": sorted(a["properties"])}
            if a.get("colour"):
                out["colour"] = a["colour"]
            rgb = a.get("rgb")
            if rgb is not None and len(rgb) == 3:   # the measured shade behind the name, 0..1
                out["rgb"] = [round(float(x), 3) for x in rgb]
            return out
        return self._each(snap, obj, ("object",), one, "object")

    def _t_check_obj_relationship(self, snap: SceneSnapshot, relationship: str, obj: str) -> Any:
        try:
            rel = normalise_relation(relationship)
        except ValueError as e:
            try:  # the arguments the wrong way round: the answer names both, so no doubt remains
                rel, obj = normalise_relation(obj), relationship
            except ValueError:
                raise ToolFailure(str(e), {"error": "unknown relationship", "relationship": relationship,
                                           "allowed": list(RELATIONS)}) from None

        def one(i: str) -> dict:
            self._present(snap, i, allow_held=False)
            found = dict(snap.related(i, rel))
            if rel == "blocking":   # what the base laser sees on the floor path (part (b) of blocking)
                for ob in self._laser_obstacles(snap, i):
                    ev = dict(found.get(ob.name) or {})
                    laser = ob.evidence()
                    ev["path_distance_m"] = min(float(ev.get("path_distance_m", math.inf)), laser.pop("distance_to_path_m"))
                    laser["seen_by"] = f"camera and {laser['seen_by']}" if ob.name in found else laser["seen_by"]
                    found[ob.name] = {**ev, **laser}
            names = sorted(found, key=_natural)
            return {"relationship": rel, "object": i, "related": names, "evidence": {s: found[s] for s in names}}
        return self._each(snap, obj, ("object", "person"), one, "object")

    def _t_check_free_path(self, snap: SceneSnapshot, target: str) -> Any:
        return self._each(snap, target, ("object", "person"), lambda i: self._free_path(snap, i), "target")

    def _t_dist_between_objs(self, snap: SceneSnapshot, obj1: str, obj2: str) -> Any:
        a_ids = self._resolve(snap, obj1, ("object", "person"))
        b_ids = self._resolve(snap, obj2, ("object", "person"))
        pairs = [(a, b) for a in a_ids for b in b_ids if a != b][: self.config.max_results]
        if not pairs:
            raise ToolFailure(f"{obj1!r} and {obj2!r} name the same object ({a_ids[0]})",
                              {"error": "same object", "objects": [a_ids[0], b_ids[0]]})
        if len(pairs) == 1:
            return self._gap(snap, *pairs[0])
        out = []
        for a, b in pairs:
            try:
                out.append(self._gap(snap, a, b))
            except ToolFailure as e:
                out.append({"objects": [a, b], "error": e.error})
        return out

    def _known_people(self, snap: SceneSnapshot) -> list[str]:
        """People in view, then people seen recently (kept in the graph until forgotten):
        a robot that turned away from someone still knows they are there."""
        unseen = [p for p in snap.ids("person", visible=False) if p in snap.perceived]
        return sorted(snap.visible_people(), key=_natural) + sorted(unseen, key=_natural)

    def _t_check_humans_around(self, snap: SceneSnapshot) -> list[str]:
        return self._known_people(snap)

    def _t_recognize_humans(self, snap: SceneSnapshot) -> dict[str, str | None]:
        names = {}
        if self.provider is not None:   # identity may have been learnt since (a person said who they are)
            try:
                names = {p.id: p.name for p in self.provider.people()}
            except Exception:  # noqa: BLE001 - no provider answer: what the graph saw
                names = {}
        return {p: names.get(p, snap.node(p).get("name")) for p in self._known_people(snap)}

    def _t_dist_robot_to_human(self, snap: SceneSnapshot, human: str) -> Any:
        def one(i: str) -> dict:
            a = self._present(snap, i, allow_remembered=True)
            if a.get("visible"):
                d = self._distance(snap, i, "human")
                return {"human": i, "distance_m": d["distance_m"]}
            robot = self._robot(snap)
            pts = snap.perceived[i].points
            if robot is None or not len(pts):
                raise ToolFailure(f"distance to {i} unknown: out of view and no earlier geometry",
                                  {"error": "not visible", "human": i})
            d = float(np.min(np.hypot(pts[:, 0] - robot.x, pts[:, 1] - robot.y)))
            return {"human": i, "distance_m": _r(d), "in_view": False,
                    "last_seen_s_ago": _r(snap.seconds_since_seen(i) or 0.0)}
        return self._each(snap, human, ("person",), one, "human")

    def _person_flag(self, snap: SceneSnapshot, human: str, key: str, what: str) -> Any:
        def one(i: str) -> dict:
            a = self._present(snap, i)
            if a.get(key) is None:
                raise ToolFailure(f"no information about {what} of {i}", {"error": "no information", "human": i})
            return {"human": i, key: bool(a[key])}
        return self._each(snap, human, ("person",), one, "human")

    def _t_human_hands_free(self, snap: SceneSnapshot, human: str) -> Any:
        return self._person_flag(snap, human, "hands_free", "the hands")

    def _t_detect_human_gaze(self, snap: SceneSnapshot, human: str) -> Any:
        return self._person_flag(snap, human, "looking_at_robot", "the gaze")

    def _t_retrieve_user_information(self, snap: SceneSnapshot, query: str) -> dict:
        if not query.strip():
            raise ToolFailure("retrieve_user_information(query): the query is empty")
        try:
            retriever = self._user_info_retriever()
            wait = self.config.user_info_wait_s
            if wait > 0 and not retriever.ready:
                retriever.start_loading()
                if not retriever.wait_ready(wait):
                    raise ToolFailure(
                        f"loading: the user-information model is still loading (for {retriever.loading_for_s():.1f} s); "
                        "ask again in a few seconds", {"error": "loading", "retry_after_s": 2.0})
            ans = retriever.query(query)
        except ToolFailure:
            raise
        except Exception as e:  # noqa: BLE001 - model or corpus unavailable: say why
            raise ToolFailure(f"user information unavailable: {e}") from None
        return {"query": query, "answer": ans.answer, "score": _r(ans.score)}

    def _user_info_retriever(self):
        with self._user_info_lock:
            if self._user_info is None:
                from .user_info import UserInfoRetriever
                path = self.config.user_info_corpus or str(data_dir() / "user_info" / "corpus.yaml")
                self._user_info = UserInfoRetriever(Path(path))
            return self._user_info

    def preload_user_info(self) -> None:
        """Start loading the sentence-embedding model and the corpus in the background (a node
        does this at start), so that no tool call pays for the load."""
        try:
            self._user_info_retriever().start_loading()
        except Exception:  # noqa: BLE001 - a bad corpus is reported by the first call
            pass

    # ---------------------------------------------------------------------- geometry
    def _gap(self, snap: SceneSnapshot, a: str, b: str) -> dict:
        for i in (a, b):
            self._present(snap, i, allow_held=False)
        ta, tb = snap.kdtree(a), snap.kdtree(b)
        if ta is None or tb is None:
            which = a if ta is None else b
            raise ToolFailure(f"no 3-D points for {which}: its pixels have no valid depth",
                              {"error": "no depth", "objects": [a, b]})
        small, big = (ta, tb) if ta.n <= tb.n else (tb, ta)
        d, _ = big.query(small.data, k=1)
        ca, cb = snap.perceived[a].centroid, snap.perceived[b].centroid
        return {"objects": [a, b], "distance_m": _r(float(np.min(d))),
                "centroid_distance_m": _r(float(np.linalg.norm(ca - cb)))}

    def _free_path(self, snap: SceneSnapshot, target: str) -> dict:
        """The floor-path half of the ``blocking`` relation (relations.check_free_path, on the
        boxes of the objects in view): obstacles within ``path_clearance_m`` of the floor
        segment from the robot base to the target's footprint; objects that carry or contain
        the target do not count. Evidence per obstacle: its distance to the path."""
        a = self._present(snap, target, allow_remembered=True)
        if a.get("held"):
            return {"target": target, "free": True, "blocking": [], "evidence": {}, "held_by_robot": True}
        robot = self._robot(snap)
        if robot is None:
            raise ToolFailure("no robot pose available to plan a path from")
        po = snap.perceived.get(target)
        if po is None or not len(po.points):
            raise ToolFailure(f"no 3-D points for {target}: its pixels have no valid depth",
                              {"error": "no depth", "target": target})
        key = ("free_path", target)
        found = snap._cache.get(key)
        if found is None:
            objs = {n: snap.perceived[n] for n in snap.ids(visible=True) if n in snap.perceived}
            objs[target] = po   # a remembered person: the path goes to where they were seen
            found = relations_free_path(target, objs, (robot.x, robot.y), params=self._relation_params)
            snap._cache[key] = found
        evidence = {b: {"distance_to_path_m": _r(ev.get("path_distance_m", 0.0))}
                    for b, ev in found["evidence"].items()}
        for ob in self._laser_obstacles(snap, target):   # what the base laser sees on the path
            laser = ob.evidence()
            if ob.name in evidence:
                laser["distance_to_path_m"] = min(evidence[ob.name]["distance_to_path_m"], laser["distance_to_path_m"])
                laser["seen_by"] = f"camera and {laser['seen_by']}"
            evidence[ob.name] = laser
        blocking = sorted(evidence, key=_natural)
        end = floor_path_end((robot.x, robot.y), a["box_min"], a["box_max"])
        return {"target": target, "free": not blocking, "blocking": blocking,
                "evidence": {b: evidence[b] for b in blocking},
                "path_length_m": _r(math.hypot(end[0] - robot.x, end[1] - robot.y)),
                "clearance_m": self.config.path_clearance_m}


    def _laser_obstacles(self, snap: SceneSnapshot, target: str) -> list:
        """Floor obstacles the base laser sees on the path to ``target``
        (:func:`raider_ros.perception.base_scan.floor_obstacles`); none without a scan, a robot
        pose or a box of the target (camera only, as before)."""
        key = ("laser", target)
        if key in snap._cache:
            return snap._cache[key]
        out: list = []
        robot = self._robot(snap)
        a = snap.node(target)
        if snap.scan is not None and robot is not None and a is not None and not a.get("held") \
                and a.get("box_min") is not None:
            boxes = {n: (po.aabb_min, po.aabb_max) for n in snap.ids(visible=True)
                     if n != target and (po := snap.perceived.get(n)) is not None and po.has_points}
            out = floor_obstacles(snap.scan.world_points(), (robot.x, robot.y), (a["box_min"], a["box_max"]), boxes,
                                  self.config.path_clearance_m, base_yaw_deg=robot.yaw_deg,
                                  scan_height_m=snap.scan.height_m if snap.scan.height_m is not None else LASER_HEIGHT_M,
                                  params=self._scan_params)
        snap._cache[key] = out
        return out


def _natural(s: str):
    """'Mug_2' < 'Mug_10'."""
    head, _, tail = s.rpartition("_")
    return (head, int(tail)) if tail.isdigit() else (s, -1)


def _tool_params() -> dict[str, tuple[str, ...]]:
    """The catalogue's tools and arguments (data/toolsets), after checking that the ToolBox
    implements exactly those tools with exactly those parameters."""
    catalogue = tool_catalogue()
    check_implementations(catalogue, ToolBox.implemented(), "implementation in perception/toolbox.py")
    return {name: tuple(spec.arg_names) for name, spec in catalogue.items()}


# tool -> parameter names, in call order (from data/toolsets; checked against the methods)
TOOL_PARAMS: dict[str, tuple[str, ...]] = _tool_params()
