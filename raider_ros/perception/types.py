"""Values passed between the perception stages (detector -> depth -> relations -> scene graph)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Detection:
    """One object instance found in an image."""
    label: str                     # class label, e.g. "Mug"
    name: str                      # instance name the backend reports, e.g. "Mug_1" (sim backend: the world id)
    instance_id: int               # value in the instance image (sim backend), else a running index
    bbox: tuple[int, int, int, int]  # u_min, v_min, u_max, v_max (inclusive pixel coordinates)
    mask: np.ndarray               # (H, W) bool
    score: float = 1.0

    @property
    def pixel_count(self) -> int:
        return int(self.mask.sum())


@dataclass
class PerceivedObject:
    """An object (or person) seen in 3-D: built from depth pixels under its mask only."""
    name: str
    label: str
    points: np.ndarray             # (N, 3) world frame, after voxel downsampling and outlier removal
    aabb_min: np.ndarray           # (3,) world-frame box of the points
    aabb_max: np.ndarray
    distance_m: float              # camera optical centre -> nearest point [m]; inf when no valid depth
    pixel_count: int               # visible pixels of the mask
    bbox: tuple[int, int, int, int]
    valid_depth_pixels: int = 0    # mask pixels with finite, positive depth
    is_person: bool = False
    invalid_depth_pixels: int = 0  # mask pixels dropped for NaN, inf or <= 0 depth
    status: str = "ok"             # ok | empty_mask | no_valid_depth (then no points, distance inf)
    pixels: np.ndarray | None = None  # (M, 3) float32 (u, v, depth) of the valid mask pixels
    rgb: tuple[float, float, float] | None = None   # measured colour (0..1) of the mask's lit pixels

    @property
    def has_points(self) -> bool:
        return len(self.points) > 0

    @property
    def centroid(self) -> np.ndarray:
        return self.points.mean(axis=0) if len(self.points) else (self.aabb_min + self.aabb_max) / 2


@dataclass
class Relation:
    """``subject <relation> object`` with the numbers that decided it."""
    subject: str
    relation: str                  # inside | on top of | above | below | on the left of | on the right of | blocking | near
    object: str
    evidence: dict[str, Any] = field(default_factory=dict)
