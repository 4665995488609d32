"""The agent's tools answered from a scene's TRUE geometry, for reasoner tests.

``SceneTools(scene, tools=None)`` is a :class:`ToolExecutor` whose results follow the JSON
shapes of docs/architecture.md. Geometry (relations, distances, free paths) comes from the
benchmark oracle (:class:`OracleGeometry`), states, properties, names and people from the
scene itself; names are resolved with the tools' own :class:`Matcher`, so unknown names fail
like the real tools do (``not found ...; closest: ...``). ``tools`` limits the answered tools
(e.g. to a toolset); every call is logged in ``calls``.

``drive(llm, tools, system, user)`` is a minimal agent loop (no flow manager): it feeds the
reasoner's tool calls to ``tools`` and their results back, until a final response.
"""
from __future__ import annotations

import json
import math
import time
from typing import Any, Iterable, Sequence

from raider_ros.agent.parsing import parse_reply
from raider_ros.common.tool_contract import ToolExecutorBase, ToolFailure, ToolResult
from raider_ros.sim.render import visible_pixel_counts
from raider_ros.sim.scene import Scene
from raider_ros.common.geometry import box_gap
from raider_ros.perception.colour import measure_rgb, name_colour
from raider_ros.perception.matching import Entity, Matcher, NoMatch
from raider_ros.perception.oracle import OracleGeometry
from raider_ros.perception.toolbox import TOOL_PARAMS, normalise_relation

PATH_CORRIDOR_M = 0.3


def _natural(s: str):
    head, _, tail = s.rpartition("_")
    return (head, int(tail)) if tail.isdigit() else (s, -1)


def _r(x: float) -> float:
    return round(float(x), 3)


class SceneTools(ToolExecutorBase):
    def __init__(self, scene: Scene, tools: Iterable[str] | None = None):
        self.scene = scene
        self.oracle = OracleGeometry(scene)
        self.names = list(tools) if tools is not None else list(TOOL_PARAMS)
        counts = visible_pixel_counts(self.oracle.frame)
        self.visible = sorted((e for e, n in counts.items() if n > 0), key=_natural)
        self.visible_objects = [o.id for o in scene.objects if o.id in self.visible]
        self.visible_people = [p.id for p in scene.people if p.id in self.visible]
        held = scene.robot.holding
        ents = [Entity(o.id, o.type, "object", None, o.id in self.visible or o.id == held) for o in scene.objects]
        ents += [Entity(p.id, "Person", "person", p.name, p.id in self.visible) for p in scene.people]
        self.matcher = Matcher(ents)
        self.calls: list[tuple[str, list]] = []

    # ------------------------------------------------------------------ executor
    def call(self, name: str, args: Sequence[Any], *, deadline: float = math.inf) -> ToolResult:
        self.calls.append((name, list(args)))
        if name not in self.names or name not in TOOL_PARAMS:
            return ToolResult.fail(f"unknown tool {name!r}")
        if len(args) != len(TOOL_PARAMS[name]):
            return ToolResult.fail(f"{name} takes {len(TOOL_PARAMS[name])} argument(s), got {len(args)}")
        try:
            return ToolResult.ok(getattr(self, "_t_" + name)(*[str(a) for a in args]))
        except ToolFailure as e:
            return ToolResult.fail(e.error, e.data)

    # ------------------------------------------------------------------ helpers
    def _one(self, query: str, kinds=("object", "person")) -> str:
        m = self.matcher.match(query, kinds)
        if isinstance(m, NoMatch):
            raise ToolFailure(m.message, m.to_data())
        return m.ids[0]

    def _present(self, eid: str, allow_held: bool = True) -> None:
        if eid == self.scene.robot.holding:
            if allow_held:
                return
            raise ToolFailure(f"{eid} is in the robot's gripper, out of the camera's view",
                              {"error": "held by robot", "object": eid})
        if eid not in self.visible:
            raise ToolFailure(f"{eid} is known but not currently visible", {"error": "not visible", "object": eid})

    def _distance(self, eid: str, key: str) -> dict:
        self._present(eid)
        reach = self.scene.robot.reach
        if eid == self.scene.robot.holding:
            return {key: eid, "distance_m": 0.0, "reach_m": reach, "within_reach": True, "held_by_robot": True}
        d = self.oracle.distance(eid)
        return {key: eid, "distance_m": _r(d), "reach_m": reach, "within_reach": bool(d <= reach)}

    # ------------------------------------------------------------------ tools
    def _t_object_detection(self) -> list[str]:
        return list(self.visible_objects)

    def _t_robot_holding(self) -> str | None:
        return self.scene.robot.holding

    def _t_dist_to_target(self, target: str) -> dict:
        return self._distance(self._one(target), "target")

    def _t_dist_robot_to_obj(self, obj: str) -> dict:
        return self._distance(self._one(obj, ("object",)), "target")

    def _t_get_obj_state(self, obj: str) -> dict:
        eid = self._one(obj, ("object",))
        self._present(eid)
        return {"object": eid, "state": dict(self.scene.object(eid).state)}

    def _t_get_obj_properties(self, obj: str) -> dict:
        eid = self._one(obj, ("object",))
        self._present(eid)
        out = {"object": eid, "properties": sorted(self.scene.object(eid).properties)}
        frame = self.oracle.frame
        iid = frame.ids.get(eid)
        colour = name_colour(measure_rgb(frame.rgb, frame.instance == iid)) if iid is not None else None
        if colour:
            out["colour"] = colour
        return out

    def _t_check_obj_relationship(self, relationship: str, obj: str) -> dict:
        try:
            rel = normalise_relation(relationship)
        except ValueError as e:
            raise ToolFailure(str(e), {"error": "unknown relationship", "relationship": relationship}) from None
        eid = self._one(obj)
        self._present(eid, allow_held=False)
        related, evidence = [], {}
        for a in self.visible:
            if a == eid:
                continue
            ans = self.oracle.answer(a, rel, eid)
            if ans.holds:
                related.append(a)
                evidence[a] = {k: (_r(v) if isinstance(v, float) and math.isfinite(v) else v)
                               for k, v in ans.evidence.items() if not isinstance(v, float) or math.isfinite(v)}
        return {"relationship": rel, "object": eid, "related": related, "evidence": evidence}

    def _t_check_free_path(self, target: str) -> dict:
        eid = self._one(target)
        self._present(eid)
        if eid == self.scene.robot.holding:
            return {"target": eid, "free": True, "blocking": [], "evidence": {}, "held_by_robot": True}
        evidence = {}
        for a in self.visible:
            if a == eid:
                continue
            d = self.oracle.path_distance(a, eid)
            if d < PATH_CORRIDOR_M:
                evidence[a] = {"distance_to_path_m": _r(d)}
        blocking = sorted(evidence, key=_natural)
        return {"target": eid, "free": not blocking, "blocking": blocking, "evidence": evidence}

    def _t_dist_between_objs(self, obj1: str, obj2: str) -> dict:
        a, b = self._one(obj1), self._one(obj2)
        for e in (a, b):
            self._present(e, allow_held=False)
        if a == b:
            raise ToolFailure(f"{obj1!r} and {obj2!r} name the same object ({a})", {"error": "same object"})
        return {"objects": [a, b], "distance_m": _r(box_gap(*self.oracle.boxes[a], *self.oracle.boxes[b]))}

    def _t_check_humans_around(self) -> list[str]:
        return list(self.visible_people)

    def _t_recognize_humans(self) -> dict:
        return {p: self.scene.person(p).name for p in self.visible_people}

    def _t_dist_robot_to_human(self, human: str) -> dict:
        pid = self._one(human, ("person",))
        return {"human": pid, "distance_m": self._distance(pid, "human")["distance_m"]}

    def _t_human_hands_free(self, human: str) -> dict:
        pid = self._one(human, ("person",))
        self._present(pid)
        return {"human": pid, "hands_free": self.scene.person(pid).hands_free}

    def _t_detect_human_gaze(self, human: str) -> dict:
        pid = self._one(human, ("person",))
        self._present(pid)
        return {"human": pid, "looking_at_robot": self.scene.person(pid).looking_at_robot}

    def _t_retrieve_user_information(self, query: str) -> dict:
        raise ToolFailure("no user information in test scenes")


# --------------------------------------------------------------------------- a minimal loop
def drive(llm, tools: ToolExecutorBase, system: str, user: str, *, max_turns: int = 12,
          time_limit_s: float = 60.0) -> tuple[dict | None, list[dict]]:
    """Run ``llm`` against ``tools`` until a final response; (final dict or None, messages)."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    deadline = time.monotonic() + time_limit_s
    for _ in range(max_turns):
        reply = llm.complete(list(messages), deadline=deadline)
        messages.append({"role": "assistant", "content": reply.text})
        parsed = parse_reply(reply.text)
        if parsed.tool_calls:
            results = tools.call_many([(c.tool, c.args) for c in parsed.tool_calls], deadline=deadline)
            for c, r in zip(parsed.tool_calls, results):
                verb = f"returned {r.text}" if r.success else f"failed: {r.error}"
                messages.append({"role": "user", "content": f"Call to tool {c.tool} with args {json.dumps(c.args)} {verb}"})
            continue
        if parsed.final is not None:
            f = parsed.final
            return {"issue": f.issue, "explanation": f.explanation, "grounding": f.grounding}, messages
        messages.append({"role": "user", "content": "WARNING 4 (missing tool call or final response): answer."})
    return None, messages


def visible_ids(scene: Scene) -> list[str]:
    return SceneTools(scene).visible
