"""Per-object 3-D point clouds from a depth image, detections and the camera model.

Each detection's mask selects depth pixels; pixels whose depth is NaN, infinite or <= 0 are
dropped and counted. The rest are back-projected to the world frame, voxel-downsampled and
cleaned of outliers with open3d. The result is a
:class:`~raider_ros.perception.types.PerceivedObject` with the world-frame AABB of the points
and the distance from the camera's optical centre to the nearest valid depth pixel (all of the
mask's pixels count, not only those kept in the cloud; ``distance_percentile`` trades the
minimum for a low percentile on noisy sensors).

Nothing here raises on unusable input masks: an empty mask gives ``status="empty_mask"``, a
mask without valid depth ``status="no_valid_depth"``; both have no points, a NaN box and an
infinite distance.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np
import open3d as o3d

from raider_ros.sim.camera import CameraModel
from .types import Detection, PerceivedObject

OUTLIER_METHODS = ("statistical", "radius", "none")


@dataclass(frozen=True)
class CloudParams:
    voxel_size: float = 0.01          # [m]; 0 disables downsampling
    max_points: int = 1500            # per object after downsampling: larger clouds get a coarser voxel
    outlier: str = "statistical"      # statistical | radius | none
    nb_neighbors: int = 12            # statistical: neighbours for the mean distance
    std_ratio: float = 2.5            # statistical: keep points within mean + ratio * std
    radius: float = 0.03              # radius: search radius [m]
    min_neighbors: int = 3            # radius: neighbours a point needs to stay
    min_points_for_filter: int = 30   # smaller clouds are kept as they are
    max_raw_points: int = 12000       # pixels back-projected per object (an even subsample beyond)
    distance_percentile: float = 0.0  # distance = this percentile of the pixels' ranges (0: nearest)
    person_labels: tuple[str, ...] = ("Person",)

    def __post_init__(self):
        if self.outlier not in OUTLIER_METHODS:
            raise ValueError(f"unknown outlier method {self.outlier!r}; known: {', '.join(OUTLIER_METHODS)}")
        if self.voxel_size < 0 or self.max_points < 1 or self.max_raw_points < 1:
            raise ValueError(f"voxel_size must be >= 0, max_points and max_raw_points >= 1, got "
                             f"{self.voxel_size}, {self.max_points}, {self.max_raw_points}")


def valid_depth(depth: np.ndarray) -> np.ndarray:
    """Mask of usable depth pixels: finite and > 0."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(depth) & (depth > 0)


def _empty(det: Detection, status: str, invalid: int, is_person: bool) -> PerceivedObject:
    nan = np.full(3, np.nan)
    return PerceivedObject(
        name=det.name, label=det.label, points=np.zeros((0, 3)), aabb_min=nan, aabb_max=nan.copy(),
        distance_m=float("inf"), pixel_count=int(det.mask.sum()), bbox=det.bbox, valid_depth_pixels=0,
        is_person=is_person, invalid_depth_pixels=invalid, status=status,
        pixels=np.zeros((0, 3), np.float32))


def _downsample_and_filter(points: np.ndarray, params: CloudParams) -> np.ndarray:
    pcd = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
    voxel = params.voxel_size
    if voxel > 0:
        # the voxel count of a surface grows with its area: coarsen the voxel for huge surfaces
        extent = points.max(axis=0) - points.min(axis=0)
        area = float(np.sort(extent)[1:].prod())
        if area / voxel ** 2 > params.max_points:
            voxel = float(np.sqrt(area / params.max_points))
        pcd = pcd.voxel_down_sample(voxel)
    if len(pcd.points) >= params.min_points_for_filter:
        if params.outlier == "statistical":
            pcd, _ = pcd.remove_statistical_outlier(nb_neighbors=params.nb_neighbors, std_ratio=params.std_ratio)
        elif params.outlier == "radius":
            pcd, _ = pcd.remove_radius_outlier(nb_points=params.min_neighbors, radius=max(params.radius, 2 * voxel))
    return np.asarray(pcd.points)


def build_object(det: Detection, depth: np.ndarray, camera: CameraModel,
                 params: CloudParams = CloudParams()) -> PerceivedObject:
    """One detection -> one :class:`PerceivedObject` (see the module notes for bad input)."""
    is_person = det.label in params.person_labels
    if det.mask.shape != depth.shape:
        raise ValueError(f"mask of {det.name!r} has shape {det.mask.shape}, depth has {depth.shape}")
    h, w = depth.shape
    u0, v0 = max(int(det.bbox[0]), 0), max(int(det.bbox[1]), 0)
    u1, v1 = min(int(det.bbox[2]), w - 1), min(int(det.bbox[3]), h - 1)
    if u0 <= u1 and v0 <= v1:   # a detection's mask lies inside its box: search only there
        v, u = np.nonzero(det.mask[v0:v1 + 1, u0:u1 + 1])
        u, v = u + u0, v + v0
    else:
        v, u = np.nonzero(det.mask)
    if len(u) == 0:
        return _empty(det, "empty_mask", 0, is_person)
    z = depth[v, u]
    ok = valid_depth(z)
    invalid = int(len(z) - ok.sum())
    if not ok.any():
        return _empty(det, "no_valid_depth", invalid, is_person)
    u, v, z = u[ok], v[ok], z[ok].astype(np.float64)
    # range of every valid pixel (optical z times the length of its ray with unit z)
    ranges = z * np.sqrt(((u - camera.cx) / camera.fx) ** 2 + ((v - camera.cy) / camera.fy) ** 2 + 1.0)
    dist = float(ranges.min() if params.distance_percentile <= 0 else np.percentile(ranges, params.distance_percentile))
    step = -(-len(u) // params.max_raw_points)      # huge masks: every step-th pixel feeds the cloud
    raw = camera.backproject(u[::step], v[::step], z[::step])
    points = _downsample_and_filter(raw, params)
    if len(points) == 0:   # the filter cannot empty a cloud in practice; keep the raw one if it does
        points = raw
    return PerceivedObject(
        name=det.name, label=det.label, points=points, aabb_min=points.min(axis=0), aabb_max=points.max(axis=0),
        distance_m=dist, pixel_count=len(ok), bbox=det.bbox, valid_depth_pixels=int(ok.sum()),
        is_person=is_person, invalid_depth_pixels=invalid, status="ok",
        pixels=np.stack([u, v, z], axis=1).astype(np.float32))


def build_objects(detections: Iterable[Detection], depth: np.ndarray, camera: CameraModel,
                  params: CloudParams = CloudParams()) -> dict[str, PerceivedObject]:
    """Detections -> {name: PerceivedObject}. Names must be unique."""
    depth = np.asarray(depth)
    if depth.ndim != 2 or depth.shape != (camera.height, camera.width):
        raise ValueError(f"depth image has shape {depth.shape}, the camera is {camera.height}x{camera.width}")
    out: dict[str, PerceivedObject] = {}
    for det in detections:
        if det.name in out:
            raise ValueError(f"two detections are named {det.name!r}")
        out[det.name] = build_object(det, depth, camera, params)
    return out
