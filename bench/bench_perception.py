"""Perception accuracy and speed: the pipeline on rendered frames against the oracle.

For every scene (project scenes under data/scenes and data/benchmark, the shared examples,
each of their cases' setups, and a fixed set of generated rooms) the scene is rendered, the
perception pipeline runs on the images only, and its answers are compared with the oracle on
the true geometry:

* relations: every ordered pair of entities that both show at least ``MIN_VISIBLE_PX`` pixels,
  for each relation. Left out, and counted: pairs the oracle calls borderline (a deciding
  quantity within its tolerance of the threshold: the spec keeps labels off borderlines), and
  left/right pairs where an entity's true box leaves the image (its true image centre cannot
  be seen by any camera-based method).
* distance: |perceived - oracle| for every entity with at least ``MIN_VISIBLE_PX`` pixels.
* detection recall: entities with at least ``MIN_VISIBLE_PX`` pixels that were detected.
* speed: images in -> relations out (perception_pipeline_ms_50_objects; with the scene-graph update:
  bench_perception_update.py) for a generated 50-object scene (50 objects placed, those
  that some pixel shows are detected), median wall and CPU time of several runs; the machine's
  load average is written too, as other work on the machine inflates wall time.

Run: ``python bench/bench_perception.py [--quick]``; prints the figures and writes
bench/results/perception.json (a flat object of named numbers).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from raider_ros.common.paths import data_dir  # noqa: E402
from raider_ros.sim.render import Renderer, render, visible_pixel_counts  # noqa: E402
from raider_ros.sim.scene import (Camera, Person, Robot, Scene, SceneError, SceneObject,  # noqa: E402
                                   apply_setup, load_scene, load_yaml_text)
from raider_ros.perception.oracle import OracleGeometry  # noqa: E402
from raider_ros.perception.pipeline import PerceptionPipeline  # noqa: E402
from raider_ros.common.vocabulary import RELATIONS  # noqa: E402
from figures import shared_examples  # noqa: E402

MIN_VISIBLE_PX = 200
SHARED_EXAMPLES = shared_examples() or Path("/nonexistent")


# --------------------------------------------------------------------------- scenes
def project_scenes() -> list[tuple[str, Scene]]:
    """Every scene file of the project (and the shared examples), plus one scene per case setup."""
    dirs = [data_dir() / "scenes", *sorted(p for p in (data_dir() / "benchmark").iterdir() if p.is_dir()),
            SHARED_EXAMPLES]
    out: list[tuple[str, Scene]] = []
    for d in dirs:
        if not d.is_dir():
            continue
        by_name: dict[str, Scene] = {}
        for f in sorted(d.glob("*.scene.yaml")):
            try:
                s = load_scene(f)
            except SceneError as exc:
                print(f"skipping {f}: {exc}", file=sys.stderr)
                continue
            by_name[s.name] = s
            out.append((f"{d.name}/{s.name}", s))
        for f in sorted(d.glob("*.cases.yaml")):
            try:
                doc = load_yaml_text(f.read_text(encoding="utf-8"), str(f))
            except SceneError as exc:
                print(f"skipping {f}: {exc}", file=sys.stderr)
                continue
            base = by_name.get((doc or {}).get("scene"))
            for case in (doc or {}).get("cases") or []:
                if base is None or not case.get("setup"):
                    continue
                try:
                    out.append((f"{d.name}/{base.name}+{case.get('id')}", apply_setup(base, case["setup"])))
                except SceneError as exc:
                    print(f"skipping case {case.get('id')}: {exc}", file=sys.stderr)
    return out


class _Placer:
    """Random non-overlapping footprints (with a gap) on a rectangle."""

    def __init__(self, rng: np.random.Generator, gap: float = 0.04):
        self.rng, self.gap, self.taken = rng, gap, []

    def place(self, lo, hi, half_xy, tries: int = 60):
        if np.any(np.asarray(hi) - np.asarray(lo) < 2 * np.asarray(half_xy)):
            return None
        for _ in range(tries):
            c = self.rng.uniform(np.asarray(lo) + half_xy, np.asarray(hi) - half_xy)
            if all(np.any(np.abs(c - tc) > np.asarray(half_xy) + th + self.gap) for tc, th in self.taken):
                self.taken.append((c, np.asarray(half_xy)))
                return c
        return None


SMALL_TYPES = [("Apple", "sphere", (0.07, 0.09), False), ("Mug", "cylinder", (0.08, 0.11), True),
               ("Bowl", "cylinder", (0.16, 0.26), True), ("Book", "box", (0.15, 0.24), False),
               ("CerealBox", "box", (0.18, 0.3), False), ("Bottle", "cylinder", (0.07, 0.09), False),
               ("Box", "box", (0.1, 0.2), False), ("Pot", "cylinder", (0.22, 0.3), True)]


def generate_scene(seed: int, n_objects: int = 20) -> Scene:
    """A room in front of the robot: tables with items (some in containers), a wall shelf over a
    low table, obstacles and people on the floor. Sizes and gaps are random; everything rests
    on something."""
    rng = np.random.default_rng(seed)
    objs: list[SceneObject] = []
    counts: dict[str, int] = defaultdict(int)

    def add(typ, shape, center, size, yaw=0.0, open_top=False, props=("pickupable",)):
        counts[typ] += 1
        objs.append(SceneObject(id=f"{typ}_{counts[typ]}", type=typ, shape=shape,
                                center=tuple(float(v) for v in center), size=tuple(float(v) for v in size),
                                yaw_deg=float(yaw) if shape == "box" else 0.0, open_top=open_top,
                                properties=frozenset(props)))
        return objs[-1]

    floor = _Placer(rng, gap=0.25)
    floor.taken.append((np.zeros(2), np.array([0.35, 0.35])))   # the robot
    surfaces = []
    n_tables = 2 + n_objects // 15
    for _ in range(n_tables):
        size = np.array([rng.uniform(0.7, 1.4), rng.uniform(0.5, 0.9), rng.uniform(0.45, 0.95)])
        c = floor.place([0.9, -2.0], [3.6, 2.0], size[:2] / 2)
        if c is None:
            continue
        t = add("Table", "box", (c[0], c[1], size[2] / 2), size, props=("receptacle",))
        surfaces.append(t)
        if size[2] < 0.6 and rng.random() < 0.7:   # a wall shelf over a low table
            ssize = np.array([size[0] * rng.uniform(0.5, 0.8), size[1] * 0.5, 0.04])
            sc = (c[0] + rng.uniform(-0.1, 0.1) * size[0], c[1], size[2] + rng.uniform(0.35, 0.5))
            surfaces.append(add("Shelf", "box", sc, ssize, props=("receptacle",)))
    if rng.random() < 0.6:   # an open cabinet facing the robot, something on its floor
        size = np.array([rng.uniform(0.4, 0.6), rng.uniform(0.5, 0.8), rng.uniform(0.5, 0.8)])
        c = floor.place([1.2, -1.5], [2.6, 1.5], size[:2] / 2)
        if c is not None:
            counts["Cabinet"] += 1
            objs.append(SceneObject(id=f"Cabinet_{counts['Cabinet']}", type="Cabinet", shape="box",
                                    center=(float(c[0]), float(c[1]), float(size[2] / 2)), size=tuple(map(float, size)),
                                    door="-x", properties=frozenset({"openable", "receptacle"}), state={"open": True}))
            item = rng.uniform(0.12, 0.2)
            add("Box", "box", (c[0] + rng.uniform(-0.05, 0.05), c[1] + rng.uniform(-0.1, 0.1), 0.01 + item / 2),
                (item, item, item), yaw=rng.uniform(0, 30))
    for _ in range(rng.integers(1, 3)):    # floor obstacles
        size = np.array([rng.uniform(0.3, 0.5), rng.uniform(0.3, 0.5), rng.uniform(0.3, 0.8)])
        c = floor.place([0.6, -1.8], [2.5, 1.8], size[:2] / 2)
        if c is not None:
            add(str(rng.choice(["Chair", "Box", "Bin"])), "box", (c[0], c[1], size[2] / 2), size,
                yaw=rng.uniform(-40, 40), props=("moveable",))
    people = []
    for k in range(rng.integers(0, 2)):
        c = floor.place([1.2, -2.0], [3.8, 2.0], np.array([0.25, 0.2]))
        if c is not None:
            people.append(Person(id=f"Person_{k + 1}", name=None, center=(float(c[0]), float(c[1]), 0.85),
                                 size=(0.45, 0.35, 1.7)))

    placers = {s.id: _Placer(rng, gap=rng.uniform(0.03, 0.25)) for s in surfaces}
    target = n_objects - len(objs)
    tries = 0
    while target > 0 and tries < 20 * n_objects:
        tries += 1
        s = surfaces[int(rng.integers(len(surfaces)))]
        typ, shape, (a, b), hollow = SMALL_TYPES[int(rng.integers(len(SMALL_TYPES)))]
        d = rng.uniform(a, b)
        size = np.array([d, d, d * rng.uniform(0.6, 1.3)]) if shape != "box" else \
            np.array([d, d * rng.uniform(0.4, 1.0), d * rng.uniform(0.4, 1.5)])
        if hollow:
            size[2] = d * rng.uniform(0.45, 0.6)
        yaw = rng.uniform(0, 90) if shape == "box" else 0.0
        t = math.radians(yaw)
        half = np.array([abs(math.cos(t)) * size[0] + abs(math.sin(t)) * size[1],
                         abs(math.sin(t)) * size[0] + abs(math.cos(t)) * size[1]]) / 2
        slo = np.array(s.center[:2]) - np.array(s.size[:2]) / 2
        shi = np.array(s.center[:2]) + np.array(s.size[:2]) / 2
        c = placers[s.id].place(slo, shi, half)
        if c is None:
            continue
        top = s.center[2] + s.size[2] / 2
        add(typ, shape, (c[0], c[1], top + size[2] / 2), size, yaw, open_top=hollow)
        target -= 1
        if hollow and target > 0 and rng.random() < 0.7:   # something in the container, sticking out
            inner = d * rng.uniform(0.5, 0.6)
            add("Apple" if rng.random() < 0.5 else "Orange", "sphere",
                (c[0], c[1], top + 0.005 + inner / 2), (inner, inner, inner))
            target -= 1
    return Scene(name=f"generated_{seed}_{n_objects}", robot=Robot(), camera=Camera(),
                 objects=tuple(objs), people=tuple(people), source="<generated>")


# --------------------------------------------------------------------------- scoring
def evaluate(label: str, scene: Scene, pipeline: PerceptionPipeline, stats: dict) -> None:
    frame = render(scene)
    res = pipeline.process(frame.rgb, frame.depth, frame.instance, frame.labels, frame.camera)
    oracle = OracleGeometry(scene, frame=frame)
    vis = visible_pixel_counts(frame)
    seen = [e for e in oracle.entities if vis.get(e, 0) >= MIN_VISIBLE_PX]
    stats["entities"] += len(seen)
    for e in seen:
        obj = res.objects.get(e)
        stats["detected"] += int(obj is not None)
        if obj is not None and obj.has_points:
            stats["dist_err"].append(abs(obj.distance_m - oracle.distance(e)))
    w, h = frame.camera.width, frame.camera.height
    perceived = {(r.subject, r.relation, r.object) for r in res.relations}
    for a in seen:
        for b in seen:
            if a == b or a not in res.objects or b not in res.objects:
                continue
            for rel in RELATIONS:
                ans = oracle.answer(a, rel, b)
                c = stats["rel"][rel]
                if ans.borderline:
                    c["borderline"] += 1
                    continue
                if rel in ("on the left of", "on the right of"):
                    boxes = [oracle.image_box(a), oracle.image_box(b)]
                    if any(r is None or r[0] < 0 or r[1] < 0 or r[2] > w - 1 or r[3] > h - 1 for r in boxes):
                        c["out_of_view"] += 1
                        continue
                got = (a, rel, b) in perceived
                key = ("tp" if got else "fn") if ans.holds else ("fp" if got else "tn")
                c[key] += 1
                if key in ("fp", "fn") and len(stats["errors"]) < 400:
                    stats["errors"].append((label, key, a, rel, b, ans.evidence, res.engine.evaluate(a, rel, b)[1],
                                            _visible_share(scene, a, vis), _visible_share(scene, b, vis)))


_SOLO: dict = {}


def _visible_share(scene: Scene, eid: str, vis: dict) -> float:
    """Share of the entity's own pixels (rendered alone) that the frame shows (for error reports)."""
    key = (scene.name, id(scene), eid)
    if key not in _SOLO:
        _SOLO[key] = Renderer().occluders(scene, eid)[0]
    return round(vis.get(eid, 0) / max(_SOLO[key], 1), 3)


def time_update(pipeline: PerceptionPipeline, n_objects: int = 50, runs: int = 7) -> tuple[float, float, int]:
    """Median wall and CPU milliseconds of images in -> relations out (after one warm-up run)."""
    scene = generate_scene(1000 + n_objects, n_objects)
    frame = render(scene)
    pipeline.process(frame.rgb, frame.depth, frame.instance, frame.labels, frame.camera)
    wall, cpu = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), time.process_time()
        res = pipeline.process(frame.rgb, frame.depth, frame.instance, frame.labels, frame.camera)
        wall.append((time.perf_counter() - t) * 1e3)
        cpu.append((time.process_time() - c) * 1e3)
    return statistics.median(wall), statistics.median(cpu), len(res.objects)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--generated", type=int, default=24, help="number of generated rooms (default 24)")
    ap.add_argument("--quick", action="store_true", help="6 generated rooms, 3 timing runs")
    ap.add_argument("--errors", type=int, default=0, help="print this many mismatches")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "perception.json"))
    args = ap.parse_args(argv)
    n_gen = 6 if args.quick else args.generated

    pipeline = PerceptionPipeline("sim")
    scenes = project_scenes() + [(f"generated/{i}", generate_scene(i, 12 + (i % 4) * 6)) for i in range(n_gen)]
    stats: dict = {"entities": 0, "detected": 0, "dist_err": [], "errors": [],
                   "rel": {r: defaultdict(int) for r in RELATIONS}}
    for label, scene in scenes:
        evaluate(label, scene, pipeline, stats)

    out: dict[str, float] = {}
    precs, recs = [], []
    for rel in RELATIONS:
        c = stats["rel"][rel]
        p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 1.0
        r = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 1.0
        precs.append(p)
        recs.append(r)
        key = rel.replace(" ", "_")
        out[f"precision_{key}"] = round(p, 4)
        out[f"recall_{key}"] = round(r, 4)
        out[f"positives_{key}"] = c["tp"] + c["fn"]
        out[f"pairs_{key}"] = c["tp"] + c["fn"] + c["fp"] + c["tn"]
        out[f"borderline_excluded_{key}"] = c["borderline"]
        if rel in ("on the left of", "on the right of"):
            out[f"out_of_view_excluded_{key}"] = c["out_of_view"]
    out["relation_precision_min"] = round(min(precs), 4)
    out["relation_recall_min"] = round(min(recs), 4)
    errs = np.array(stats["dist_err"]) if stats["dist_err"] else np.zeros(1)
    out["distance_abs_err_p95_m"] = round(float(np.percentile(errs, 95)), 4)
    out["distance_abs_err_max_m"] = round(float(errs.max()), 4)
    out["detection_recall"] = round(stats["detected"] / max(stats["entities"], 1), 4)
    out["entities_scored"] = stats["entities"]
    out["scenes"] = len(scenes)
    ms, cpu_ms, n = time_update(pipeline, 50, 3 if args.quick else 7)
    out["perception_pipeline_ms_50_objects"] = round(ms, 1)
    out["perception_pipeline_cpu_ms_50_objects"] = round(cpu_ms, 1)   # less sensitive to other load
    out["objects_in_50_object_scene_detected"] = n
    out["load_average_1min"] = round(os.getloadavg()[0], 2)

    for k, v in out.items():
        print(f"{k:45s} {v}")
    for e in stats["errors"][:args.errors]:
        print(e)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
