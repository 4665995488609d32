"""Renderer and simulated-world speed.

Scenes: the default kitchen (17 objects) and the kitchen with three more objects (20). For each
figure the median over ``--runs`` repetitions, in milliseconds, of:

* ``render_<scene>_cold_ms``: a fresh Renderer (meshes, ray-casting scene and rays built);
* ``render_<scene>_warm_ms``: re-rendering the unchanged scene (everything cached), and
  ``render_<scene>_warm_cpu_ms`` its CPU time (all threads; robust to a busy machine);
* ``render_<scene>_robot_moved_ms``: the robot turned (new rays, cached meshes);
* ``render_<scene>_object_moved_ms``: one object moved (ray-casting scene rebuilt);
* ``occluders_ms``: the occlusion measure of one target (Renderer.occluders);
* ``world_frame_cached_ms``: SimWorld.frame() of an unchanged world;
* ``skill_pick_ms`` / ``skill_move_to_ms``: SimWorld.execute with skill_duration_s = 0,
  including the world's re-render on the next frame() call.

Run: ``python bench/bench_render.py [--runs N]``; prints the figures and writes
bench/results/render.json (a flat object of named numbers).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from raider_ros.common.paths import scenes_dir  # noqa: E402
from raider_ros.sim.render import Renderer  # noqa: E402
from raider_ros.sim.scene import Scene, SceneObject, load_scene  # noqa: E402
from raider_ros.sim.world import SimWorld  # noqa: E402
from figures import write_figures  # noqa: E402


def median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000.0)
    return round(statistics.median(times), 2)


def median_cpu_ms(fn, runs: int) -> float:
    """CPU time of this process (all threads): less sensitive to other load on the machine."""
    times = []
    for _ in range(runs):
        t0 = time.process_time()
        fn()
        times.append((time.process_time() - t0) * 1000.0)
    return round(statistics.median(times), 2)


def with_extra_objects(scene: Scene) -> Scene:
    extra = (
        SceneObject("Plate_9", "Plate", "cylinder", (0.95, -0.45, 0.91), (0.2, 0.2, 0.02),
                    properties=frozenset({"pickupable", "receptacle"})),
        SceneObject("Pot_9", "Pot", "cylinder", (1.55, -0.85, 0.98), (0.22, 0.22, 0.16), open_top=True,
                    properties=frozenset({"pickupable", "receptacle"})),
        SceneObject("Orange_9", "Orange", "sphere", (1.0, -0.75, 0.94), (0.08, 0.08, 0.08),
                    properties=frozenset({"pickupable", "sliceable"})),
    )
    return scene.replace(name=f"{scene.name}_20", objects=scene.objects + extra)


def bench_scene(label: str, scene: Scene, runs: int) -> dict[str, float]:
    out: dict[str, float] = {}
    out[f"render_{label}_cold_ms"] = median_ms(lambda: Renderer().render(scene), runs)
    r = Renderer()
    r.render(scene)
    out[f"render_{label}_warm_ms"] = median_ms(lambda: r.render(scene), runs)
    out[f"render_{label}_warm_cpu_ms"] = median_cpu_ms(lambda: r.render(scene), runs)
    turns = iter(range(10**6))
    out[f"render_{label}_robot_moved_ms"] = median_ms(
        lambda: r.render(scene.with_robot(yaw_deg=scene.robot.yaw_deg + 0.1 * (next(turns) % 50))), runs)
    moves = iter(range(10**6))
    mug = scene.object("Mug_1")

    def moved() -> None:
        k = next(moves) % 50
        r.render(scene.with_object(dataclasses.replace(mug, center=(mug.center[0] + 0.001 * k, *mug.center[1:]))))

    out[f"render_{label}_object_moved_ms"] = median_ms(moved, runs)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    kitchen = load_scene(scenes_dir() / "kitchen.scene.yaml")
    big = with_extra_objects(kitchen)
    results: dict[str, float] = {"load_average_1min": round(os.getloadavg()[0], 2),
                                 "objects_kitchen": len(kitchen.objects), "objects_kitchen_20": len(big.objects),
                                 "image_width": kitchen.camera.width, "image_height": kitchen.camera.height_px}
    results.update(bench_scene("kitchen", kitchen, args.runs))
    results.update(bench_scene("kitchen_20", big, args.runs))

    # 50 objects (the generator of bench_perception.py): a new Renderer for every frame, so
    # meshes, ray-casting scene and rays are all built anew: the worst case of a changed world
    from bench_perception import generate_scene
    scene50 = generate_scene(1050, 50)
    results["objects_50_scene"] = len(scene50.objects)
    results["render_ms_50_objects"] = median_ms(lambda: Renderer().render(scene50), args.runs)
    r50 = Renderer()
    r50.render(scene50)
    results["render_50_objects_warm_ms"] = median_ms(lambda: r50.render(scene50), args.runs)

    r = Renderer()
    r.render(big)
    results["occluders_ms"] = median_ms(lambda: r.occluders(big, "Apple_1"), args.runs)

    w = SimWorld(kitchen)
    w.frame()
    results["world_frame_cached_ms"] = median_ms(w.frame, args.runs)

    def pick_place() -> None:
        assert w.execute("pick", ["Apple_1"]).success
        w.frame()
        assert w.execute("place", ["CounterTop_1"]).success
        w.frame()

    results["skill_pick_place_pair_ms"] = median_ms(pick_place, max(3, args.runs // 3))
    w.load(kitchen)

    def move() -> None:
        w.apply_setup(None)
        assert w.execute("move_to", ["Fridge_1"]).success
        w.frame()

    results["skill_move_to_with_reset_ms"] = median_ms(move, max(3, args.runs // 3))

    write_figures("render", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
