"""Scene-graph update and tool-call speed on a 50-object graph.

A synthetic perception result (50 objects on a counter with point clouds of ``POINTS`` points
each, 2 people, ~2500 relation edges) is folded into a :class:`SceneGraph` repeatedly, as the
perception node does on every frame; then every tool is called on the resulting graph.

Figures (ms unless named otherwise): graph update median / p95 (ids from the detector, and with
association of unnamed detections), ``to_json``, ``markers``; per tool the median of a call on a
graph whose caches are warm, and the first call after an update (matcher and k-d trees built);
the user-information model's load time and query time.

Run: ``python bench/bench_scene_graph_tools.py [--quick] [--no-model]``; prints the figures and
writes bench/results/scene_graph_tools.json (a flat object of named numbers).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test" / "unit"))

from raider_ros.perception.provider import TruthProvider  # noqa: E402
from raider_ros.perception.scene_graph import SceneGraph  # noqa: E402
from raider_ros.perception.toolbox import TOOL_PARAMS, ToolBox  # noqa: E402
from raider_ros.perception.types import PerceivedObject, Relation  # noqa: E402
from figures import write_figures  # noqa: E402
from scene_graph_fixtures import random_relations  # noqa: E402

POINTS = 600
TYPES = ["Apple", "Mug", "Bowl", "Knife", "Plate", "Cup", "Pan", "Egg", "Bread", "Tomato"]


@dataclass
class Result:
    objects: dict = field(default_factory=dict)
    relations: list = field(default_factory=list)


def _obj(name, label, center, size, rng, person=False, n=POINTS):
    c, s = np.asarray(center, float), np.asarray(size, float)
    pts = c + (rng.random((n, 3)) - 0.5) * s
    lo, hi = pts.min(0), pts.max(0)
    d = float(np.min(np.linalg.norm(pts - [0, 0, 1.3], axis=1)))
    return PerceivedObject(name, label, pts, lo, hi, d, n, (0, 0, 1, 1), n, is_person=person)


def synthetic(n_objects: int, n_relations: int, seed: int = 0, unnamed: bool = False) -> tuple[Result, dict]:
    rng = np.random.default_rng(seed)
    objs = [_obj("CounterTop_1", "CounterTop", [2.0, 0.0, 0.45], [3.0, 2.4, 0.9], rng, n=3000)]
    for i in range(n_objects - 1):
        t = TYPES[i % len(TYPES)]
        c = [0.7 + (i % 10) * 0.25, -1.0 + (i // 10) * 0.45, 0.95]
        objs.append(_obj(f"{t}_{i // len(TYPES) + 1}", t, c, [0.08, 0.08, 0.1], rng))
    objs += [_obj("Person_1", "Person", [1.0, -2.0, 0.85], [0.45, 0.35, 1.7], rng, True),
             _obj("Person_2", "Person", [3.5, 1.8, 0.85], [0.45, 0.35, 1.7], rng, True)]
    names = [o.name for o in objs]
    rels = random_relations(names, n_relations, rng)
    truth = {"name": "bench", "robot": {"pose": [0, 0, 0], "reach": 1.1, "holding": None},
             "objects": [{"id": o.name, "type": o.label, "properties": ["pickupable", "dirtyable"],
                          "state": {"clean": True}} for o in objs if not o.is_person],
             "people": [{"id": "Person_1", "name": "Adriana", "state": {"looking_at_robot": True, "hands_free": True}},
                        {"id": "Person_2", "name": None, "state": {}}]}
    if unnamed:  # a detector that only knows class labels
        for o in objs:
            o.name = f"{o.label}#{id(o)}"
        rels = [Relation(objs[names.index(r.subject)].name, r.relation, objs[names.index(r.object)].name, r.evidence)
                for r in rels]
    return Result({o.name: o for o in objs}, rels), truth


def _ms(samples):
    return statistics.median(samples) * 1000.0, float(np.percentile(samples, 95)) * 1000.0


def time_updates(res, provider, runs, **graph_kw):
    g = SceneGraph(**graph_kw)
    g.update(res, provider, stamp=0.0)
    out = []
    for i in range(runs):
        t0 = time.perf_counter()
        g.update(res, provider, stamp=float(i + 1))
        out.append(time.perf_counter() - t0)
    return g, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--no-model", action="store_true", help="skip the sentence-embedding model")
    a = ap.parse_args()
    runs = 20 if a.quick else 100
    figures: dict[str, float] = {}

    res, truth = synthetic(50, 2500)
    provider = TruthProvider(truth)
    g, samples = time_updates(res, provider, runs)
    snap = g.snapshot()
    figures["graph_objects"] = len(snap.ids("object"))
    figures["graph_relations"] = len(snap.relation_triples())
    figures["graph_edges"] = snap.graph.number_of_edges()
    figures["update_median_ms"], figures["update_p95_ms"] = _ms(samples)

    res_u, _ = synthetic(50, 2500, unnamed=True)
    _, samples = time_updates(res_u, provider, runs, trust_names=False)
    figures["update_unnamed_median_ms"], figures["update_unnamed_p95_ms"] = _ms(samples)

    for name in ("to_json", "markers"):
        s = []
        for i in range(max(5, runs // 5)):
            g.update(res, provider, stamp=500.0 + i)       # a fresh snapshot: nothing cached
            t0 = time.perf_counter()
            getattr(g, name)()
            s.append(time.perf_counter() - t0)
        figures[f"{name}_median_ms"] = _ms(s)[0]
    figures["to_json_kbytes"] = len(g.to_json()) / 1024.0

    class FakeUserInfo:
        def query(self, q):
            from raider_ros.perception.user_info import UserInfoAnswer
            return UserInfoAnswer(q, "x", 1.0, 0)

    tb = ToolBox(g, provider, user_info=FakeUserInfo())
    args = {"target": "Mug_3", "obj": "bowl", "obj1": "Apple_2", "obj2": "Pan_4", "relationship": "near",
            "human": "Adriana", "query": "fruit"}
    worst = 0.0
    for name, params in TOOL_PARAMS.items():
        call_args = [args[p] for p in params]
        first = []
        for i in range(max(5, runs // 5)):  # first call after a fresh update: caches cold
            g.update(res, provider, stamp=1000.0 + i)
            t0 = time.perf_counter()
            r = tb.call(name, call_args)
            first.append(time.perf_counter() - t0)
            assert r.success, (name, r.error)
        warm = []
        for _ in range(runs):
            t0 = time.perf_counter()
            tb.call(name, call_args)
            warm.append(time.perf_counter() - t0)
        figures[f"tool_{name}_ms"] = _ms(warm)[0]
        figures[f"tool_{name}_first_ms"] = _ms(first)[0]
        if name != "retrieve_user_information":
            worst = max(worst, figures[f"tool_{name}_ms"])
    figures["tool_worst_median_ms"] = worst
    t0 = time.perf_counter()
    tb.call("dist_to_target", ["pear"])            # not found: the fuzzy path
    figures["tool_not_found_ms"] = (time.perf_counter() - t0) * 1000.0

    if not a.no_model:
        from raider_ros.perception.user_info import UserInfoRetriever
        r = UserInfoRetriever()
        t0 = time.perf_counter()
        r.query("which fruit does the user like")
        figures["user_info_first_query_s"] = time.perf_counter() - t0
        s = []
        for q in ["favourite drink", "where are my glasses", "which pan", "what cereal", "coffee mug"] * 4:
            t0 = time.perf_counter()
            r.query(q)
            s.append(time.perf_counter() - t0)
        figures["user_info_query_median_ms"] = _ms(s)[0]

    figures = {k: round(float(v), 4) for k, v in figures.items()}
    write_figures("scene_graph_tools", figures)


if __name__ == "__main__":
    main()
