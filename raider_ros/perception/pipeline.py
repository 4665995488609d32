"""Images in, perceived objects and their relations out: detector -> point clouds -> relations.

:class:`PerceptionPipeline` is what the perception node wraps; it never sees the world, only
the sensor data of one frame (RGB, depth, the simulator's instance image and labels for the
``sim`` detector, and the camera model with its pose).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from raider_ros.sim.camera import CameraModel
from .colour import measure_rgb
from .detection import DetectorBackend, make_detector
from .pointcloud import CloudParams, build_objects
from .relations import RelationEngine, RelationParams
from .types import Detection, PerceivedObject, Relation


@dataclass(frozen=True)
class PipelineParams:
    cloud: CloudParams = CloudParams()
    relations: RelationParams = RelationParams()
    min_pixels: int = 1                     # detections with fewer mask pixels are dropped


@dataclass
class PerceptionResult:
    objects: dict[str, PerceivedObject]
    relations: list[Relation]
    detections: list[Detection] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)   # stage -> milliseconds
    engine: RelationEngine | None = None    # for on-demand queries on the same frame


class PerceptionPipeline:
    def __init__(self, detector: DetectorBackend | str = "sim", params: PipelineParams = PipelineParams()):
        self.detector = make_detector(detector) if isinstance(detector, str) else detector
        self.params = params

    def process(self, rgb: np.ndarray | None, depth: np.ndarray, instance: np.ndarray | None,
                labels: Mapping[int, tuple[str, str]] | None, camera: CameraModel,
                robot_xy=None) -> PerceptionResult:
        t0 = time.perf_counter()
        dets = [d for d in self.detector.detect(rgb, instance=instance, labels=labels)
                if d.pixel_count >= self.params.min_pixels]
        t1 = time.perf_counter()
        objects = build_objects(dets, depth, camera, self.params.cloud)
        if rgb is not None:                  # colour from the RGB pixels under each mask
            for d in dets:
                if d.name in objects and not objects[d.name].is_person:
                    objects[d.name].rgb = measure_rgb(rgb, d.mask)
        t2 = time.perf_counter()
        engine = RelationEngine(objects, camera, self.params.relations, robot_xy)
        relations = engine.relations()
        t3 = time.perf_counter()
        timings = {"detect_ms": (t1 - t0) * 1e3, "clouds_ms": (t2 - t1) * 1e3,
                   "relations_ms": (t3 - t2) * 1e3, "total_ms": (t3 - t0) * 1e3}
        return PerceptionResult(objects, relations, dets, timings, engine)
