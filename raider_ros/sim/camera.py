"""The pinhole RGB-D camera of benchmark format v1 (ROS-free).

The optical centre sits ``camera.height`` above the floor on the base's vertical axis and
looks along the base's yaw, tilted down by ``pitch_deg``. Axes follow the ROS optical frame
convention (REP 103): x right, y down, z forward. Pixels are square; the horizontal field of
view fixes the focal length. Pixel centres sit at integer coordinates, so the principal
point of a W x H image is ((W - 1) / 2, (H - 1) / 2).

Depth images hold the z coordinate in the optical frame (REP 118), in metres.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .scene import Camera, Robot, Scene


@dataclass(frozen=True)
class CameraModel:
    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    position: np.ndarray          # optical centre, world frame, shape (3,)
    rotation: np.ndarray          # world_from_optical, 3x3; columns = optical x, y, z in world

    # construction -------------------------------------------------------------------
    @classmethod
    def from_parts(cls, robot: Robot, camera: Camera) -> "CameraModel":
        yaw = math.radians(robot.yaw_deg)
        pitch = math.radians(camera.pitch_deg)
        forward = np.array([math.cos(pitch) * math.cos(yaw), math.cos(pitch) * math.sin(yaw), -math.sin(pitch)])
        right = np.array([math.sin(yaw), -math.cos(yaw), 0.0])
        down = np.cross(forward, right)
        rot = np.stack([right, down, forward], axis=1)
        fx = (camera.width / 2.0) / math.tan(math.radians(camera.hfov_deg) / 2.0)
        return cls(
            width=int(camera.width), height=int(camera.height_px),
            fx=fx, fy=fx, cx=(camera.width - 1) / 2.0, cy=(camera.height_px - 1) / 2.0,
            position=np.array([robot.x, robot.y, camera.height], dtype=float),
            rotation=rot,
        )

    @classmethod
    def from_scene(cls, scene: Scene) -> "CameraModel":
        return cls.from_parts(scene.robot, scene.camera)

    # intrinsics ---------------------------------------------------------------------
    @property
    def K(self) -> np.ndarray:
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    @property
    def vfov_deg(self) -> float:
        return math.degrees(2.0 * math.atan((self.height / 2.0) / self.fy))

    # transforms ---------------------------------------------------------------------
    def world_to_optical(self, points: np.ndarray) -> np.ndarray:
        """(N, 3) world points -> (N, 3) optical-frame points."""
        return (np.asarray(points, dtype=float) - self.position) @ self.rotation

    def optical_to_world(self, points: np.ndarray) -> np.ndarray:
        return np.asarray(points, dtype=float) @ self.rotation.T + self.position

    def project(self, points_world: np.ndarray) -> np.ndarray:
        """(N, 3) world points -> (N, 3) array of (u, v, z); u, v are meaningless where z <= 0."""
        p = self.world_to_optical(np.atleast_2d(points_world))
        z = p[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            u = self.fx * p[:, 0] / z + self.cx
            v = self.fy * p[:, 1] / z + self.cy
        return np.stack([u, v, z], axis=1)

    def pixel_directions_optical(self) -> np.ndarray:
        """(H, W, 3) ray directions in the optical frame, scaled so that their z is 1."""
        u = np.arange(self.width, dtype=np.float64)
        v = np.arange(self.height, dtype=np.float64)
        uu, vv = np.meshgrid(u, v)
        return np.stack([(uu - self.cx) / self.fx, (vv - self.cy) / self.fy, np.ones_like(uu)], axis=-1)

    def rays(self) -> np.ndarray:
        """(H, W, 6) float32 rays (origin, direction) in the world frame.

        Directions are not unit length: their optical z component is 1, so a ray-caster's
        hit parameter *t* is directly the depth image value (z in the optical frame).
        """
        d = self.pixel_directions_optical() @ self.rotation.T
        o = np.broadcast_to(self.position, d.shape)
        return np.concatenate([o, d], axis=-1).astype(np.float32)

    def backproject(self, u: np.ndarray, v: np.ndarray, depth: np.ndarray) -> np.ndarray:
        """Pixels (u, v) with depth z -> (N, 3) world points."""
        z = np.asarray(depth, dtype=float)
        x = (np.asarray(u, dtype=float) - self.cx) / self.fx * z
        y = (np.asarray(v, dtype=float) - self.cy) / self.fy * z
        return self.optical_to_world(np.stack([x, y, z], axis=-1))

    # ROS CameraInfo fields (plumb_bob, no distortion) -----------------------------------
    def camera_info_fields(self) -> dict:
        k = [self.fx, 0.0, self.cx, 0.0, self.fy, self.cy, 0.0, 0.0, 1.0]
        return {
            "width": self.width, "height": self.height, "distortion_model": "plumb_bob",
            "d": [0.0] * 5, "k": k, "r": [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
            "p": [self.fx, 0.0, self.cx, 0.0, 0.0, self.fy, self.cy, 0.0, 0.0, 0.0, 1.0, 0.0],
        }

    @classmethod
    def from_camera_info(cls, width: int, height: int, k: list[float], position: np.ndarray,
                         rotation: np.ndarray) -> "CameraModel":
        return cls(width=int(width), height=int(height), fx=float(k[0]), fy=float(k[4]),
                   cx=float(k[2]), cy=float(k[5]), position=np.asarray(position, float),
                   rotation=np.asarray(rotation, float))


def rotation_to_quaternion(rot: np.ndarray) -> tuple[float, float, float, float]:
    """3x3 rotation matrix -> (x, y, z, w)."""
    m = np.asarray(rot, dtype=float)
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    if tr > 0:
        s = math.sqrt(tr + 1.0) * 2
        w, x, y, z = 0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2
        w, x, y, z = (m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s
    elif m[1, 1] > m[2, 2]:
        s = math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2]) * 2
        w, x, y, z = (m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s
    else:
        s = math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1]) * 2
        w, x, y, z = (m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s
    return (x, y, z, w)


def quaternion_to_rotation(x: float, y: float, z: float, w: float) -> np.ndarray:
    n = math.sqrt(x * x + y * y + z * z + w * w) or 1.0
    x, y, z, w = x / n, y / n, z / n, w / n
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])
