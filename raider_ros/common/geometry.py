"""The one box geometry of the project: the simulator's skills and the oracle use it on the
true extents of scene entities, perception uses it on the boxes of perceived points.

Boxes are axis-aligned, given as ``(lo, hi)`` corner arrays in the world frame (x, y, z up).
Everything here is a pure function of the numbers passed in; :func:`true_box` reads the
extents of a scene entity (anything with ``center``, ``size`` and, for boxes, ``yaw_deg``)."""
from __future__ import annotations

import math
from typing import Protocol

import numpy as np


class PinholeCamera(Protocol):
    """What :func:`project_box` needs of a camera (raider_ros.sim.camera.CameraModel has it)."""
    fx: float
    fy: float
    cx: float
    cy: float

    def world_to_optical(self, points: np.ndarray) -> np.ndarray: ...



def entity_yaw_deg(e) -> float:
    """Yaw applies to boxes only (benchmark format v1); cylinders, spheres and people have none."""
    return float(getattr(e, "yaw_deg", 0.0) or 0.0) if getattr(e, "shape", None) == "box" else 0.0


def true_box(e) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of the axis-aligned box of an entity's true extents; a box with yaw uses the box
    around its rotated corners. Cylinders and spheres use their bounding box."""
    c = np.asarray(e.center, float)
    half = np.asarray(e.size, float) / 2.0
    yaw = entity_yaw_deg(e)
    if yaw % 180.0 != 0.0:
        t = math.radians(yaw)
        ca, sa = abs(math.cos(t)), abs(math.sin(t))
        half = np.array([ca * half[0] + sa * half[1], sa * half[0] + ca * half[1], half[2]])
    return c - half, c + half


def footprint(e, circle_sides: int = 16) -> np.ndarray:
    """(N, 2) convex outline of an entity seen from above: the rotated rectangle of a box, a
    regular polygon around a cylinder's or sphere's centre (its circle's circumscribed polygon)."""
    c = np.asarray(e.center, float)[:2]
    hx, hy = float(e.size[0]) / 2.0, float(e.size[1]) / 2.0
    if getattr(e, "shape", "box") in ("cylinder", "sphere"):
        a = np.linspace(0.0, 2 * math.pi, circle_sides, endpoint=False)
        k = 1.0 / math.cos(math.pi / circle_sides)
        return c + np.stack([hx * k * np.cos(a), hy * k * np.sin(a)], axis=1)
    yaw = math.radians(entity_yaw_deg(e))
    rot = np.array([[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]])
    return c + np.array([[-hx, -hy], [hx, -hy], [hx, hy], [-hx, hy]]) @ rot.T


def polygon_penetration(p: np.ndarray, q: np.ndarray) -> float:
    """How deep two convex polygons overlap: the smallest overlap of their projections over the
    edge normals of both (separating axis test); negative when they are apart."""
    best = math.inf
    for poly in (p, q):
        edges = np.roll(poly, -1, axis=0) - poly
        normals = np.stack([-edges[:, 1], edges[:, 0]], axis=1)
        normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
        pp, qq = p @ normals.T, q @ normals.T
        depth = np.minimum(pp.max(0), qq.max(0)) - np.maximum(pp.min(0), qq.min(0))
        best = min(best, float(depth.min()))
    return best


def overlap(lo1, hi1, lo2, hi2) -> np.ndarray:
    """Per-axis signed overlap length (negative: the gap)."""
    return np.minimum(hi1, hi2) - np.maximum(lo1, lo2)


def box_gap(lo1, hi1, lo2, hi2) -> float:
    """Euclidean gap between two boxes (0 when they touch or intersect)."""
    return float(np.linalg.norm(np.maximum(-overlap(lo1, hi1, lo2, hi2), 0.0)))


def segment_box_distance_2d(p0, p1, lo, hi) -> float:
    """Distance between the 2-D segment p0-p1 and the rectangle [lo, hi]."""
    p0, p1, lo, hi = (np.asarray(v, float)[:2] for v in (p0, p1, lo, hi))
    d = p1 - p0
    # Liang-Barsky clip: does the segment enter the rectangle?
    t0, t1 = 0.0, 1.0
    inside = True
    for k in range(2):
        if abs(d[k]) < 1e-12:
            if p0[k] < lo[k] or p0[k] > hi[k]:
                inside = False
                break
        else:
            ta, tb = (lo[k] - p0[k]) / d[k], (hi[k] - p0[k]) / d[k]
            t0, t1 = max(t0, min(ta, tb)), min(t1, max(ta, tb))
            if t0 > t1:
                inside = False
                break
    if inside:
        return 0.0

    def point_rect(p):
        return float(np.linalg.norm(np.maximum(np.maximum(lo - p, p - hi), 0.0)))

    def point_seg(p):
        L = float(d @ d)
        t = 0.0 if L == 0 else min(1.0, max(0.0, float((p - p0) @ d) / L))
        return float(np.linalg.norm(p0 + t * d - p))

    corners = [np.array([x, y]) for x in (lo[0], hi[0]) for y in (lo[1], hi[1])]
    return min(point_rect(p0), point_rect(p1), *(point_seg(c) for c in corners))


def floor_path_end(base_xy, lo, hi) -> np.ndarray:
    """The point of the footprint [lo, hi] nearest to the base: where the floor path ends."""
    return np.clip(np.asarray(base_xy, float)[:2], np.asarray(lo)[:2], np.asarray(hi)[:2])


def floor_path_distance(base_xy, target_lo, target_hi, lo, hi) -> float:
    """3-D distance between box [lo, hi] and the floor segment (z = 0) from the base to the point
    of the target's footprint nearest to the base. The height term is the box's gap to the
    floor plane: its bottom when it floats above the floor, 0 when it touches or crosses it."""
    end = floor_path_end(base_xy, target_lo, target_hi)
    dxy = segment_box_distance_2d(base_xy, end, lo, hi)
    dz = max(float(lo[2]), 0.0, -float(hi[2]))
    return math.hypot(dxy, dz)


def carries(a_lo, a_hi, b_lo, b_hi):
    """A carries or contains B: B's centre lies over A's footprint and A's bottom is not above B's.
    Boxes given as (3,) arrays give a bool; stacks of boxes, (N, 3), give a bool array."""
    a_lo, a_hi, b_lo = np.asarray(a_lo), np.asarray(a_hi), np.asarray(b_lo)
    c = (b_lo + np.asarray(b_hi)) / 2.0
    out = np.all((a_lo[..., :2] <= c[..., :2]) & (c[..., :2] <= a_hi[..., :2]), axis=-1) & \
        (a_lo[..., 2] <= b_lo[..., 2] + 1e-9)
    return bool(out) if out.ndim == 0 else out


def box_corners(lo, hi) -> np.ndarray:
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])


_EDGES = [(i, j) for i in range(8) for j in range(i + 1, 8) if bin(i ^ j).count("1") == 1]


def project_box(camera: PinholeCamera, lo, hi, near: float = 1e-3) -> tuple[float, float, float, float] | None:
    """Image rectangle (u_min, v_min, u_max, v_max) of a box, clipped to the camera's front
    half-space z > ``near``; None when the box lies wholly behind the camera."""
    corners = box_corners(lo, hi)
    opt = camera.world_to_optical(corners)
    z = opt[:, 2]
    pts = [opt[z > near]]
    for i, j in _EDGES:
        if (z[i] > near) != (z[j] > near):
            t = (near - z[i]) / (z[j] - z[i])
            pts.append((opt[i] + t * (opt[j] - opt[i]))[None, :])
    front = np.concatenate(pts, axis=0)
    if len(front) == 0:
        return None
    u = camera.fx * front[:, 0] / front[:, 2] + camera.cx
    v = camera.fy * front[:, 1] / front[:, 2] + camera.cy
    return float(u.min()), float(v.min()), float(u.max()), float(v.max())
