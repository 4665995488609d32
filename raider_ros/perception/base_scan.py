"""Floor obstacles on the robot's path, from the planar base laser.

The head camera cannot see the floor within about 0.7 m of the base, so things standing there
(a stool, a backpack, the legs of a chair seen only at its top) never become perceived floor
obstacles. The base laser scans a horizontal plane low above the floor (sim/scan.py: 0.15 m,
270 degrees) and sees them. :func:`floor_obstacles` turns its points into the obstacles on the
floor path of the ``blocking`` relation (relations.py, part (b); the oracle's rule):

1. The path is the floor segment from the robot base to the point of the target's footprint
   nearest to the base (``common.geometry.floor_path_end``); a point is on it when it lies
   within ``corridor_m`` of that segment and neither behind its start nor beyond its end
   (the corridor is a rectangle: what stands behind the robot, or behind the target - a wall,
   the back of a shelf - is not in the way to it; the oracle's rule measures the distance to
   the segment, so it also counts what stands within ``corridor_m`` behind either end).
2. Points on the target's footprint or on the footprint of a perceived object that carries or
   contains the target and rises above the scan plane (its support: the counter it stands on,
   the cabinet under that counter; ``relations.carries_seen``; not a rug), each grown by
   ``footprint_margin_m``, are the end of the path, not obstacles; so are the objects that
   carry those (the counter under the chopping board under the knife). When nothing of that
   stack reaches down to the scan plane, the target's support was not seen under it (the far
   end of a long counter): perceived surfaces level with the stack's bottom (within
   ``contact_m``) count as that support.
3. The rest are clustered (single linkage, ``cluster_gap_m``); clusters with fewer than
   ``min_points`` points are dropped as noise.
4. A cluster lying under the footprint of a perceived object that no other perceived object
   rising above the scan plane carries (a knife on a counter cannot be what the laser sees,
   a chair on a rug can; footprint grown by ``footprint_margin_m``: at least half the
   cluster's points; objects wholly below the plane, a rug, never do) belongs to that object (a chair whose seat the camera sees and
   whose legs it does not). Failing that, it belongs to the nearest perceived object whose
   seen bottom lies above the scan plane (its lower part unseen: the image's lower edge cuts
   it) and whose grown footprint it comes within ``attach_gap_m`` of: the camera saw the
   top and far side of a stool whose near side the laser sees. Clusters of one object are
   merged. The rest are reported as unidentified floor obstacles, named by where they are:
   "an obstacle on the floor 0.32 m ahead" (distance from the base to their nearest point;
   ahead / to the left / to the right / behind, from the base yaw).

The laser sees only what crosses its plane: objects wholly above it (a table top) are left to
the camera. Attribution goes by footprints alone, so a cluster under a high wall-mounted
object, or just in front of a chair whose legs the camera does not see, is given that
object's id: the path is blocked either way, the name may be the wrong one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from raider_ros.common.geometry import carries, floor_path_end

from .relations import RelationParams, carries_seen

SEEN_BY = "base laser"
LASER_HEIGHT_M = 0.15     # scan plane height assumed when a scan does not say (sim/scan.py's default)
UNIDENTIFIED = "an obstacle on the floor {distance:.2f} m{where}"   # the name of an obstacle nothing perceived covers


@dataclass(frozen=True)
class BaseScan:
    """A planar scan in the base frame (sensor_msgs/LaserScan fields) and the base pose it was
    taken at; ``ranges`` outside [range_min, range_max] (inf, NaN) are no return."""
    ranges: np.ndarray
    angle_min: float
    angle_increment: float
    range_min: float
    range_max: float
    pose: tuple[float, float, float]          # base x, y [m], yaw [deg], world frame
    stamp: float = 0.0
    height_m: float | None = None              # scan plane above the floor, when known

    def __post_init__(self):
        r = np.asarray(self.ranges, dtype=np.float64).reshape(-1)
        object.__setattr__(self, "ranges", r)
        for name in ("angle_min", "angle_increment", "range_min", "range_max"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"base scan: {name} must be a finite number, got {v!r}")
        if len(self.pose) != 3 or not all(math.isfinite(float(v)) for v in self.pose):
            raise ValueError(f"base scan: pose must be finite (x, y, yaw_deg), got {self.pose!r}")

    def world_points(self) -> np.ndarray:
        """(M, 2) world xy of the returns, in beam order."""
        k = np.flatnonzero(np.isfinite(self.ranges) & (self.ranges >= self.range_min) & (self.ranges <= self.range_max))
        x, y, yaw = (float(v) for v in self.pose)
        a = math.radians(yaw) + self.angle_min + self.angle_increment * k
        r = self.ranges[k]
        return np.stack([x + r * np.cos(a), y + r * np.sin(a)], axis=1)


@dataclass(frozen=True)
class ScanObstacleParams:
    footprint_margin_m: float = 0.05   # target / support / attribution footprints grown by this
    cluster_gap_m: float = 0.1         # points closer than this belong to one cluster
    min_points: int = 2                # smaller clusters are noise
    attach_gap_m: float = 0.3          # a cluster this close to the grown footprint of an object whose
                                       # bottom is unseen belongs to it
    relations: RelationParams = RelationParams()   # what carries the target (support_gap_m, contact_m)


@dataclass
class FloorObstacle:
    name: str                          # the perceived object's id, or a readable description
    object_id: str | None              # None: unidentified (nothing perceived over it)
    nearest: np.ndarray                # (2,) the point nearest to the base
    distance_m: float                  # base -> nearest point
    path_distance_m: float             # nearest point of the cluster to the path segment
    points: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 2)))

    def evidence(self) -> dict:
        ev = {"distance_to_path_m": round(self.path_distance_m, 3), "distance_from_robot_m": round(self.distance_m, 3),
              "position": [round(float(v), 3) for v in self.nearest], "seen_by": SEEN_BY}
        if self.object_id is None:
            ev["unidentified"] = True
        return ev


def _grown(lo, hi, margin: float) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(lo, float)[:2] - margin, np.asarray(hi, float)[:2] + margin


def _inside(points: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.all((points >= lo) & (points <= hi), axis=1)


def _where(bearing_deg: float) -> str:
    b = (bearing_deg + 180.0) % 360.0 - 180.0
    if abs(b) <= 45.0:
        return "ahead"
    if abs(b) >= 135.0:
        return "behind"
    return "to the left" if b > 0 else "to the right"


def floor_obstacles(points: np.ndarray, base_xy: Sequence[float], target_box: tuple, boxes: Mapping[str, tuple],
                    corridor_m: float, *, base_yaw_deg: float | None = None, scan_height_m: float = LASER_HEIGHT_M,
                    params: ScanObstacleParams = ScanObstacleParams()) -> list[FloorObstacle]:
    """The obstacles the laser sees on the floor path to a target (module docstring).

    ``points``: (M, 2) (or (M, 3)) scan points, world frame; ``target_box``: the target's
    (lo, hi); ``boxes``: {id: (lo, hi)} of the other perceived objects (the target's own id
    left out). Returns the obstacles nearest first."""
    pts = np.asarray(points, float)
    pts = pts.reshape(-1, pts.shape[-1])[:, :2] if pts.size else np.zeros((0, 2))
    base = np.asarray(base_xy, float)[:2]
    tlo, thi = (np.asarray(v, float) for v in target_box)
    end = floor_path_end(base, tlo, thi)
    seg = end - base
    length = float(np.hypot(*seg))
    if not len(pts) or length < 1e-6:
        return []
    u = seg / length
    rel = pts - base
    along = rel @ u
    side = np.abs(rel[:, 0] * u[1] - rel[:, 1] * u[0])
    t = np.clip(along, 0.0, length)
    to_path = np.hypot(along - t, side)
    keep = (to_path < corridor_m) & (along >= 0.0) & (along <= length)

    m = params.footprint_margin_m
    keep &= ~_inside(pts, *_grown(tlo, thi, m))
    ids = list(boxes)
    if ids:
        lo = np.array([np.asarray(boxes[i][0], float) for i in ids]).reshape(-1, 3)
        hi = np.array([np.asarray(boxes[i][1], float) for i in ids]).reshape(-1, 3)
        # what carries the target is the end of the path where the laser can meet it (a rug under
        # it lies below the scan plane: what stands on the rug is still in the way)
        # (and what carries those in turn: the counter under the chopping board under the knife)
        chain = carries_seen(lo, hi, np.tile(tlo, (len(ids), 1)), np.tile(thi, (len(ids), 1)), params.relations)
        while True:
            k = np.flatnonzero(chain)
            more = np.zeros(len(ids), bool)
            for j in k:
                more |= carries_seen(lo, hi, np.tile(lo[j], (len(ids), 1)), np.tile(hi[j], (len(ids), 1)), params.relations)
            if not (more & ~chain).any():
                break
            chain |= more
        bottom = min([float(tlo[2])] + [float(lo[j, 2]) for j in np.flatnonzero(chain)])
        if bottom > scan_height_m:
            # nothing seen carries the target down to the floor: its support was not seen under it
            # (the far end of a long counter); a perceived surface level with the lowest bottom of
            # the stack is taken for that support
            chain |= np.abs(hi[:, 2] - bottom) <= params.relations.contact_m
        carrier = chain & (hi[:, 2] > scan_height_m)
        for k in np.flatnonzero(carrier):
            keep &= ~_inside(pts, *_grown(lo[k], hi[k], m))
        # objects carried by something perceived that rises above the scan plane (a knife on the
        # counter) cannot be what the laser sees; a chair on a rug can
        n_ids = len(ids)
        I, J = np.nonzero(~np.eye(n_ids, dtype=bool))
        on_something = np.zeros(n_ids, bool)
        if len(I):
            # the spec's rule (centre over the footprint), not carries_seen's "rests on the top":
            # a chair seen only at its seat looks as if it rested on the sideboard beside it
            raised = np.asarray(carries(lo[I], hi[I], lo[J], hi[J])) & (hi[I, 2] > scan_height_m)
            np.logical_or.at(on_something, J, raised)
        others = [k for k in range(n_ids) if not carrier[k] and not on_something[k] and hi[k, 2] > scan_height_m]
    else:
        others = []
    sel = np.flatnonzero(keep)
    if not len(sel):
        return []

    # single-linkage clusters
    p = pts[sel]
    pairs = np.array(sorted(cKDTree(p).query_pairs(params.cluster_gap_m)), dtype=np.intp).reshape(-1, 2)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(len(p), len(p)))
    n, label = connected_components(graph, directed=False)

    groups: dict[str, list[np.ndarray]] = {}
    unnamed: list[np.ndarray] = []
    for c in range(n):
        idx = sel[label == c]
        if len(idx) < params.min_points:
            continue
        best, best_n, best_z = None, 0, math.inf
        for k in others:
            inside = int(np.count_nonzero(_inside(pts[idx], *_grown(lo[k], hi[k], m))))
            if 2 * inside >= len(idx) and (inside > best_n or (inside == best_n and lo[k, 2] < best_z)):
                best, best_n, best_z = ids[k], inside, lo[k, 2]
        if best is None:      # in front of an object whose lower part the camera does not see
            best_gap = params.attach_gap_m
            for k in others:
                if lo[k, 2] <= scan_height_m:
                    continue
                glo, ghi = _grown(lo[k], hi[k], m)
                gap = float(np.hypot(*np.maximum(np.maximum(glo - pts[idx], pts[idx] - ghi), 0.0).T).min())
                if gap <= best_gap:
                    best, best_gap = ids[k], gap
        if best is None:
            unnamed.append(idx)
        else:
            groups.setdefault(best, []).append(idx)

    out: list[FloorObstacle] = []

    def make(name: str, oid: str | None, idx: np.ndarray) -> FloorObstacle:
        d = np.hypot(*(pts[idx] - base).T)
        k = int(np.argmin(d))
        return FloorObstacle(name=name, object_id=oid, nearest=pts[idx][k], distance_m=float(d[k]),
                             path_distance_m=float(to_path[idx].min()), points=pts[idx])

    for oid, parts in groups.items():
        out.append(make(oid, oid, np.concatenate(parts)))
    taken: set[str] = set(groups)
    for idx in unnamed:
        ob = make("", None, idx)
        where = ""
        if base_yaw_deg is not None:
            rel_p = ob.nearest - base
            where = " " + _where(math.degrees(math.atan2(rel_p[1], rel_p[0])) - base_yaw_deg)
        name = UNIDENTIFIED.format(distance=ob.distance_m, where=where)
        k = 2
        while name in taken:
            name = f"{UNIDENTIFIED.format(distance=ob.distance_m, where=where)} ({k})"
            k += 1
        taken.add(name)
        ob.name = name
        out.append(ob)
    out.sort(key=lambda o: o.distance_m)
    return out
