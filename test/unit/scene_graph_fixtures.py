"""Hand-made perception results for the scene-graph, matching and tool tests (no renderer)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from raider_ros.perception.types import PerceivedObject, Relation

CAMERA = np.array([0.0, 0.0, 1.3])


def box_points(lo, hi, step: float = 0.02) -> np.ndarray:
    """Points on the surface of a box, about ``step`` apart."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    axes = [np.linspace(lo[k], hi[k], max(2, int(round((hi[k] - lo[k]) / step)) + 1)) for k in range(3)]
    pts = []
    for k in range(3):
        a, b = [axes[j] for j in range(3) if j != k]
        A, B = np.meshgrid(a, b, indexing="ij")
        for v in (lo[k], hi[k]):
            face = np.empty((A.size, 3))
            face[:, k] = v
            others = [j for j in range(3) if j != k]
            face[:, others[0]] = A.ravel()
            face[:, others[1]] = B.ravel()
            pts.append(face)
    return np.unique(np.concatenate(pts).round(6), axis=0)


def perceived(name: str, center, size, *, label: str | None = None, person: bool = False,
              distance: float | None = None, step: float = 0.02) -> PerceivedObject:
    c, s = np.asarray(center, float), np.asarray(size, float)
    lo, hi = c - s / 2, c + s / 2
    pts = box_points(lo, hi, step)
    d = float(np.min(np.linalg.norm(pts - CAMERA, axis=1))) if distance is None else distance
    return PerceivedObject(name=name, label=label or ("Person" if person else name.rsplit("_", 1)[0]),
                           points=pts, aabb_min=lo, aabb_max=hi, distance_m=d,
                           pixel_count=len(pts), bbox=(0, 0, 10, 10), valid_depth_pixels=len(pts),
                           is_person=person)


@dataclass
class Result:
    """Stand-in for pipeline.PerceptionResult."""
    objects: dict = field(default_factory=dict)
    relations: list = field(default_factory=list)


def result(objs, relations=()) -> Result:
    return Result({o.name: o for o in objs}, [Relation(*r) if isinstance(r, tuple) else r for r in relations])


KITCHEN = [
    perceived("CounterTop_1", [1.4, -0.05, 0.45], [2.1, 1.2, 0.9], step=0.1),
    perceived("Apple_1", [0.45, 0.28, 0.94], [0.08, 0.08, 0.08]),
    perceived("Banana_1", [0.58, 0.42, 0.92], [0.19, 0.05, 0.04]),
    perceived("Mug_1", [0.53, -0.33, 0.95], [0.09, 0.09, 0.1]),
    perceived("Mug_2", [1.9, -0.58, 0.95], [0.09, 0.09, 0.1]),
    perceived("CoffeeMachine_1", [2.2, -0.2, 1.09], [0.22, 0.26, 0.38]),
    perceived("CerealBox_1", [1.9, 0.3, 1.05], [0.07, 0.2, 0.3]),
    perceived("Person_1", [2.0, -1.5, 0.85], [0.45, 0.35, 1.7], person=True, step=0.1),
    perceived("Person_2", [2.5, 1.5, 0.85], [0.45, 0.35, 1.7], person=True, step=0.1),
]

KITCHEN_RELATIONS = [
    ("Apple_1", "on top of", "CounterTop_1", {"gap_m": 0.0}),
    ("Mug_1", "on top of", "CounterTop_1", {"gap_m": 0.0}),
    ("Apple_1", "on the left of", "Mug_1", {"image_offset_px": 210.0}),
    ("Mug_1", "on the right of", "Apple_1", {"image_offset_px": 210.0}),
    ("Banana_1", "near", "Apple_1", {"gap_m": 0.05}),
    ("Apple_1", "near", "Banana_1", {"gap_m": 0.05}),
    ("Mug_2", "on the right of", "CoffeeMachine_1", {"image_offset_px": 40.0}),
]

TRUTH = {
    "name": "kitchen_example",
    "robot": {"pose": [0.0, 0.0, 0.0], "reach": 1.1, "holding": None},
    "objects": [
        {"id": "CounterTop_1", "type": "CounterTop", "properties": ["receptacle"], "state": {}},
        {"id": "Apple_1", "type": "Apple", "properties": ["pickupable", "sliceable"], "state": {"sliced": False}},
        {"id": "Banana_1", "type": "Banana", "properties": ["pickupable", "sliceable"], "state": {"sliced": False}},
        {"id": "Mug_1", "type": "Mug", "properties": ["pickupable", "dirtyable"], "state": {"clean": True}},
        {"id": "Mug_2", "type": "Mug", "properties": ["pickupable", "dirtyable"], "state": {"clean": False}},
        {"id": "CoffeeMachine_1", "type": "CoffeeMachine", "properties": ["toggleable"], "state": {"switched_on": True}},
        {"id": "CerealBox_1", "type": "CerealBox", "properties": ["pickupable"], "state": {}},
        {"id": "Knife_1", "type": "Knife", "properties": ["pickupable"], "state": {}},
    ],
    "people": [
        {"id": "Person_1", "name": "Adriana", "state": {"looking_at_robot": False, "hands_free": True}},
        {"id": "Person_2", "name": None, "state": {"looking_at_robot": True, "hands_free": False}},
    ],
}


def kitchen_result():
    return result(KITCHEN, [(s, r, o, e) for s, r, o, e in KITCHEN_RELATIONS])


def synthetic_result(n_objects: int = 50, n_relations: int = 2500, seed: int = 0):
    """``n_objects`` small boxes on a grid and ``n_relations`` random relation edges."""
    rng = np.random.default_rng(seed)
    types = ["Apple", "Mug", "Bowl", "Knife", "Plate", "Cup", "Pan", "Egg", "Bread", "Tomato"]
    objs = []
    for i in range(n_objects):
        t = types[i % len(types)]
        c = [0.5 + (i % 10) * 0.25, -1.0 + (i // 10) * 0.4, 0.95]
        objs.append(perceived(f"{t}_{i // len(types) + 1}", c, [0.08, 0.08, 0.08], step=0.01))
    return result(objs, random_relations([o.name for o in objs], n_relations, rng))


def random_relations(names: list[str], n: int, rng: np.random.Generator) -> list[Relation]:
    """``n`` relation edges between random pairs of ``names`` (for load tests and benches)."""
    from raider_ros.common.vocabulary import RELATIONS
    rels = []
    for _ in range(n):
        a, b = rng.choice(len(names), 2, replace=False)
        rels.append(Relation(names[a], RELATIONS[int(rng.integers(len(RELATIONS)))], names[b],
                             {"gap_m": float(rng.random())}))
    return rels
