"""A small in-memory world behind the agent's tools, for agent tests (no rendering).

``world_tools(world)`` returns a :class:`FunctionTools` answering the household, assistive and
preferences tools from a scene-graph-like dict (the same shape the LLMVisualObs baseline
reads)::

    {"robot": {"holding": None, "reach": 1.1},
     "objects": [{"id": "Apple_1", "type": "Apple", "distance_m": 0.8,
                  "state": {"sliced": False}, "properties": ["pickupable", "sliceable"]}],
     "people": [{"id": "Person_1", "name": "Adriana", "distance_m": 1.2,
                 "state": {"looking_at_robot": True, "hands_free": True}}],
     "relations": [["Apple_1", "on top of", "Table_1"]],
     "user_info": ["The user loves apples."]}

Results follow the JSON shapes of docs/architecture.md. ``delays`` adds a sleep per tool.
"""
from __future__ import annotations

import time
from typing import Any, Mapping

from raider_ros.common.tool_contract import FunctionTools, ToolFailure


def kitchen_world() -> dict:
    return {
        "robot": {"holding": None, "reach": 1.1},
        "objects": [
            {"id": "Apple_1", "type": "Apple", "distance_m": 0.8, "state": {"sliced": False},
             "properties": ["pickupable", "sliceable"]},
            {"id": "Bowl_1", "type": "Bowl", "distance_m": 0.9, "state": {"clean": True},
             "properties": ["pickupable", "receptacle", "dirtyable"]},
            {"id": "Mug_1", "type": "Mug", "distance_m": 0.7, "state": {"clean": False},
             "properties": ["pickupable", "receptacle", "dirtyable"]},
            {"id": "Mug_2", "type": "Mug", "distance_m": 1.6, "state": {"clean": True},
             "properties": ["pickupable", "receptacle", "dirtyable"]},
            {"id": "Fridge_1", "type": "Fridge", "distance_m": 1.0, "state": {"open": False},
             "properties": ["openable", "receptacle"]},
            {"id": "Knife_1", "type": "Knife", "distance_m": 0.6, "state": {},
             "properties": ["pickupable"]},
            {"id": "CerealBox_1", "type": "CerealBox", "distance_m": 0.75, "state": {},
             "properties": ["pickupable"]},
            {"id": "Table_1", "type": "Table", "distance_m": 0.5, "state": {}, "properties": ["receptacle"]},
        ],
        "people": [],
        "relations": [["Apple_1", "on the left of", "Bowl_1"], ["Apple_1", "on top of", "Table_1"],
                      ["CerealBox_1", "blocking", "Mug_1"], ["Bowl_1", "on top of", "Table_1"]],
        "user_info": ["The user loves apples.", "The user drinks coffee from the blue mug."],
    }


def world_tools(world: Mapping[str, Any], delays: Mapping[str, float] | None = None) -> FunctionTools:
    objects = {o["id"]: o for o in world.get("objects", [])}
    people = {p["id"]: p for p in world.get("people", [])}
    robot = world.get("robot", {})
    reach = float(robot.get("reach", 1.1))
    delays = dict(delays or {})

    def find(name: Any, pool: Mapping[str, dict]) -> dict:
        key = str(name).strip().lower()
        for i, e in pool.items():
            if i.lower() == key:
                return e
        hits = [e for e in pool.values() if e.get("type", "").lower() == key or str(e.get("name", "")).lower() == key]
        if len(hits) == 1:
            return hits[0]
        closest = sorted(pool, key=lambda i: (key not in i.lower(), i))[:3]
        raise ToolFailure(f"{name} not found", {"error": "not found", "closest": closest})

    def dist(target: str) -> dict:
        o = find(target, {**objects, **people})
        return {"target": o["id"], "distance_m": o["distance_m"], "reach_m": reach,
                "within_reach": o["distance_m"] <= reach}

    def related(relationship: str, obj: str) -> dict:
        o = find(obj, objects)
        return {"relationship": relationship, "object": o["id"],
                "related": [s for s, r, t in world.get("relations", []) if r == relationship and t == o["id"]]}

    def path(target: str) -> dict:
        o = find(target, {**objects, **people})
        blocking = [s for s, r, t in world.get("relations", []) if r == "blocking" and t == o["id"]]
        return {"target": o["id"], "free": not blocking, "blocking": blocking}

    def between(a: str, b: str) -> dict:
        oa, ob = find(a, objects), find(b, objects)
        return {"objects": [oa["id"], ob["id"]], "distance_m": round(abs(oa["distance_m"] - ob["distance_m"]), 3)}

    def person(human: str) -> dict:
        return find(human, people)

    fns = {
        "object_detection": lambda: list(objects),
        "robot_holding": lambda: robot.get("holding"),
        "dist_to_target": dist,
        "dist_robot_to_obj": dist,
        "get_obj_state": lambda obj: {"object": find(obj, objects)["id"], "state": find(obj, objects).get("state", {})},
        "get_obj_properties": lambda obj: {"object": find(obj, objects)["id"],
                                           "properties": find(obj, objects).get("properties", [])},
        "check_obj_relationship": related,
        "check_free_path": path,
        "dist_between_objs": between,
        "check_humans_around": lambda: list(people),
        "recognize_humans": lambda: {i: p.get("name") for i, p in people.items()},
        "dist_robot_to_human": lambda human: {"human": person(human)["id"], "distance_m": person(human)["distance_m"]},
        "human_hands_free": lambda human: {"human": person(human)["id"],
                                           "hands_free": person(human).get("state", {}).get("hands_free", True)},
        "detect_human_gaze": lambda human: {"human": person(human)["id"],
                                            "looking_at_robot": person(human).get("state", {}).get("looking_at_robot", False)},
        "retrieve_user_information": lambda query: {"query": query, "answer": (world.get("user_info") or [""])[0],
                                                    "score": 0.7},
    }

    def slow(name: str, fn: Any) -> Any:
        def wrapped(*args: Any) -> Any:
            time.sleep(delays[name])
            return fn(*args)
        return wrapped

    return FunctionTools({n: slow(n, f) if n in delays else f for n, f in fns.items()})
