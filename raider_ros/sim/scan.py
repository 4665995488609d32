"""The planar base laser of the simulated robot (ROS-free).

Real mobile manipulators (Fetch, TIAGo, Stretch) carry a planar laser scanner low on the base:
the head camera, pitched down, cannot see the floor right in front of the robot (about the
first 0.7 m here), and the laser covers exactly that. The simulated one is described by
:class:`LaserModel` (not part of the scene format: every robot has the same one):

* mounted on the base's vertical axis at ``height_m`` (0.15 m) above the floor, scanning the
  horizontal plane at that height;
* ``fov_deg`` = 270 degrees centred on the base yaw, one beam every ``resolution_deg`` (0.5
  degrees): beam k points at base yaw + ``angle_min`` + k * ``angle_increment``
  (counter-clockwise, as sensor_msgs/LaserScan);
* ranges from ``range_min_m`` (0.05 m) to ``range_max_m`` (10 m); a beam with no return in
  that interval reads ``inf`` (REP 117).

Ranges come from ray casting the meshes the renderer draws (``Renderer.cast``: objects and
people, not the object in the gripper); the floor is below the scan plane and the robot's
own body is not in the scene. Objects wholly above the scan height are not seen (a table top
is seen only where its legs, or a box standing on the floor, cross the plane).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .render import Renderer
from .scene import Scene


@dataclass(frozen=True)
class LaserModel:
    height_m: float = 0.15          # scan plane above the floor [m]
    fov_deg: float = 270.0          # field of view, centred on the base yaw
    resolution_deg: float = 0.5     # angle between neighbouring beams
    range_min_m: float = 0.05
    range_max_m: float = 10.0

    def __post_init__(self):
        for name in ("height_m", "fov_deg", "resolution_deg", "range_min_m", "range_max_m"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise ValueError(f"LaserModel: {name} must be a positive number, got {v!r}")
        if self.fov_deg > 360.0 or self.range_min_m >= self.range_max_m:
            raise ValueError(f"LaserModel: need fov_deg <= 360 and range_min_m < range_max_m, got {self}")

    @property
    def beams(self) -> int:
        return int(round(self.fov_deg / self.resolution_deg)) + (0 if self.fov_deg >= 360.0 else 1)

    @property
    def angle_min(self) -> float:
        """Angle of the first beam relative to the base yaw [rad]."""
        return -math.radians(self.fov_deg) / 2.0

    @property
    def angle_increment(self) -> float:
        return math.radians(self.resolution_deg)

    def angles(self) -> np.ndarray:
        """(N,) beam angles relative to the base yaw [rad]."""
        return self.angle_min + self.angle_increment * np.arange(self.beams)


@dataclass(frozen=True)
class ScanData:
    """One scan, in the base frame, with the base pose it was taken at."""
    ranges: np.ndarray              # (N,) float32 metres, inf where there is no return
    model: LaserModel
    pose: tuple[float, float, float]   # base x, y [m], yaw [deg] in the world frame
    world_version: int = 0

    def angles(self) -> np.ndarray:
        return self.model.angles()


def cast_scan(scene: Scene, model: LaserModel = LaserModel(), renderer: Renderer | None = None,
              world_version: int = 0) -> ScanData:
    """Simulate the base laser in ``scene`` (the robot's pose is the scene's)."""
    r = scene.robot
    world = math.radians(r.yaw_deg) + model.angles()
    rays = np.zeros((len(world), 6), np.float32)
    rays[:, 0], rays[:, 1], rays[:, 2] = r.x, r.y, model.height_m
    rays[:, 3], rays[:, 4] = np.cos(world), np.sin(world)
    t, _ids = (renderer or _renderer()).cast(scene, rays)
    ranges = np.where((t >= model.range_min_m) & (t <= model.range_max_m), t, np.inf).astype(np.float32)
    return ScanData(ranges=ranges, model=model, pose=(float(r.x), float(r.y), float(r.yaw_deg)),
                    world_version=int(world_version))


_RENDERER: Renderer | None = None


def _renderer() -> Renderer:
    global _RENDERER
    if _RENDERER is None:
        _RENDERER = Renderer()
    return _RENDERER
