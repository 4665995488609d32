"""perception_update_ms_50_objects: images in -> scene graph updated, for a generated scene
with 50 objects (the same generator as bench_perception.py). One frame goes through the sim
detector, the point clouds, the relations and the scene-graph update (with the sim provider),
as the nodes do it; median wall and CPU time of several runs after a warm-up. Writes
bench/results/perception_update.json (target: <= 200 ms)."""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from bench_perception import generate_scene  # noqa: E402

from raider_ros.sim.render import render  # noqa: E402
from raider_ros.perception.pipeline import PerceptionPipeline  # noqa: E402
from raider_ros.perception.provider import TruthProvider  # noqa: E402
from raider_ros.perception.scene_graph import SceneGraph  # noqa: E402
from figures import write_figures  # noqa: E402

RUNS = 9


def main() -> dict:
    scene = generate_scene(1050, 50)
    frame = render(scene)
    pipeline = PerceptionPipeline("sim")
    graph = SceneGraph()
    provider = TruthProvider.from_scene(scene)

    graph.update(pipeline.process(frame.rgb, frame.depth, frame.instance, frame.labels, frame.camera), provider)
    wall, cpu, stages = [], [], []
    for _ in range(RUNS):
        t, c = time.perf_counter(), time.process_time()
        res = pipeline.process(frame.rgb, frame.depth, frame.instance, frame.labels, frame.camera)
        t_graph = time.perf_counter()
        graph.update(res, provider)
        end = time.perf_counter()
        wall.append((end - t) * 1e3)
        cpu.append((time.process_time() - c) * 1e3)
        stages.append({**res.timings, "graph_ms": (end - t_graph) * 1e3})
    med = lambda key: round(statistics.median(s[key] for s in stages), 1)  # noqa: E731
    return {
        "perception_update_ms_50_objects": round(statistics.median(wall), 1),
        "perception_update_cpu_ms_50_objects": round(statistics.median(cpu), 1),
        "detect_ms": med("detect_ms"), "clouds_ms": med("clouds_ms"), "relations_ms": med("relations_ms"),
        "graph_update_ms": med("graph_ms"), "objects_perceived": float(len(res.objects)),
        "relations_found": float(len(res.relations)), "load_average_1min": round(os.getloadavg()[0], 2),
    }


if __name__ == "__main__":
    write_figures("perception_update", main())
