"""Spatial relations between perceived objects, from their point clouds and pixels only.

Never reads the world: the inputs are :class:`~raider_ros.perception.types.PerceivedObject`
values (points, their world-frame box, the image pixels they cover) and the camera model.
The heuristics adapt REFLECT's (Liu et al., CoRL 2023) to the ground truth of benchmark
format v1; every threshold is a field of :class:`RelationParams`.

``A <relation> B`` holds when (boxes are the AABBs of the perceived points):

* ``inside``: more than ``inside_fraction`` of A's points lie in the convex hull of B's points
  (REFLECT). For a hollow shape seen from above (bowl, open drawer, open fridge) the hull of the
  visible rim, walls and floor spans the container's volume, so no special case is needed;
  when B's points are degenerate (flat: no 3-D hull) B's box is used instead. When B's wall
  hides A's lower part (A sticks out of a pot), the share of A's completed box inside B's box
  is used.
* ``on top of``: A's lowest point lies within ``contact_m`` of B's highest point and more than
  ``on_top_fraction`` of A's points lie over B's footprint (the xy box of B's points).
* ``above`` / ``below``: A's lowest point is more than ``clearance_m`` over B's highest point
  and the xy boxes overlap.
* ``on the left of`` / ``on the right of``: in the image, the centre of A's image box lies
  left (right) of B's image box by more than ``side_margin_px`` (the spec's "by more than half
  of B's width" from B's centre) and the row ranges overlap. The image box is the projection of
  the box of the object's points (``side_box="cloud"``, as the spec projects true boxes) or its
  pixel box. A side whose pixels touch the image border is unbounded: B cut by the left border
  has nothing to its left, and A cut on its far side gets no answer.
* ``blocking``: (a) A hides an estimated ``block_fraction`` or more of B: for A's pixels inside
  the image rectangle of B's box, a ray is cast against B's box; pixels where the ray meets
  B's box beyond A's depth count as hidden (unless another object's box lies between), and the
  fraction is hidden / (B's visible pixels + hidden). B's box holds only what is seen, so when a
  whole side of B's mask is cut by nearer objects, B is continued behind them
  (:meth:`RelationEngine.side_continuation`) and those pixels of A count as hidden too.
  (b) Or A comes within ``path_corridor_m``
  of the floor segment from the robot base to the nearest point of B's footprint, unless A
  carries or contains B (see :meth:`RelationEngine.carries`).
* ``near``: the gap between the two boxes is below ``near_gap_m`` (the spec's 0.15 m).

Boxes of visible points can only be smaller than the true ones (hidden parts are missing), so
the contact, clearance and footprint tests lean by a centimetre or two towards the hidden side
(``contact_m``, ``clearance_m`` 4.5 cm against the spec's 3 cm, ``footprint_tolerance_m``), and
an object whose bottom is hidden is first extended down to its support
(:meth:`RelationEngine._complete_bottoms`). An object hidden at its side is continued in the
image only (:meth:`RelationEngine.side_continuation`): how far it reaches behind the occluder
cannot be seen, so the occluder's pixels next to it are taken as an upper bound, which can
overstate the share hidden when the target's edge lies just behind the occluder's.

Evidence values that lie beyond their threshold may be bounds rather than exact figures
(``hidden_fraction`` under the threshold, ``path_distance_m`` far from the path).

Work is vectorised over pairs, and the costly tests (hull, ray casts) run only on pairs that
pass cheap box prefilters.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from raider_ros.sim.camera import CameraModel
from raider_ros.common.geometry import carries, floor_path_distance, project_box
from .types import PerceivedObject, Relation
from raider_ros.common.vocabulary import RELATIONS, check_relation


@dataclass(frozen=True)
class RelationParams:
    contact_m: float = 0.045         # on top of: |A bottom - B top| at most this (see below)
    on_top_fraction: float = 0.5     # on top of: share of A's points over B's footprint
    inside_fraction: float = 0.5     # inside: share of A's points in B's hull (REFLECT: 0.5)
    hull_tolerance_m: float = 0.005  # inside: a point this close outside the hull still counts
    clearance_m: float = 0.045       # above / below: vertical clearance over this
    side_margin_px: float = 0.0      # left / right: extra image margin
    side_box: str = "cloud"          # left / right: image box of the points' 3-D box, or "pixels"
    support_gap_m: float = 0.03      # blocking: a box under B and this close in xy carries B
    complete_bottoms: bool = True    # extend objects whose bottom is hidden down to their support
    occluder_depth_m: float = 0.03   # completion: a neighbour this much nearer hides the bottom
    occluder_near_m: float = 0.005   # completion: ... or this much nearer when its top rises above
    occluder_rise_m: float = 0.005   #   A's lowest visible point by this much (not a support)
    bottom_occluded_fraction: float = 0.3  # completion: share of the bottom edge that must be hidden
    support_tolerance_m: float = 0.01      # completion: a support's top may be this much above A's lowest point
    floor_snap_m: float = 0.4        # completion: with no support seen, a bottom this low goes to the floor
    floor_types: tuple[str, ...] = ("Chair", "Table", "Desk", "Sofa", "Couch", "Bed", "Stool", "Bench", "Person")
    # completion: with no support seen, objects whose label ends with one of these (DiningTable,
    # Wheelchair, Workbench ...) stand on the floor, however high their visible bottom
    footprint_tolerance_m: float = 0.02   # on top of, above: footprints grown by this (seen boxes only shrink)
    near_gap_m: float = 0.15         # near: box gap below this (the spec's value)
    block_fraction: float = 0.2      # blocking: estimated share of B that A hides
    occlusion_depth_m: float = 0.01  # blocking: B's box must reach this far behind A's surface
    side_occluded_fraction: float = 0.9   # blocking: share of B's extreme rows (columns) on one side that
                                          # nearer objects (or the image border) must cut to continue B there
    side_cut_share: float = 0.5      # blocking: ... and share of all of that side's rows (columns)
    side_extreme_px: int = 2         # blocking: rows ending this close to B's extreme column are extreme
    path_corridor_m: float = 0.3     # blocking: distance to the floor path below this


@dataclass
class _Obj:
    name: str
    obj: PerceivedObject
    lo: np.ndarray
    hi: np.ndarray


class RelationEngine:
    """All relations among one frame's perceived objects.

    ``camera`` is needed for ``blocking`` by occlusion and for the image-border rule of left /
    right; ``robot_xy`` (default: below the camera) for the floor path. Objects without points
    take part in no relation.
    """

    def __init__(self, objects: Mapping[str, PerceivedObject], camera: CameraModel | None = None,
                 params: RelationParams = RelationParams(), robot_xy: Iterable[float] | None = None):
        self.params = params
        self.camera = camera
        self.objects = dict(objects)
        self._items = [_Obj(n, o, np.asarray(o.aabb_min, float), np.asarray(o.aabb_max, float))
                       for n, o in self.objects.items() if o.has_points]
        self.index = {it.name: i for i, it in enumerate(self._items)}
        n = len(self._items)
        self.lo = np.array([it.lo for it in self._items]).reshape(n, 3)
        self.hi = np.array([it.hi for it in self._items]).reshape(n, 3)
        if robot_xy is not None:
            self.base = np.asarray(list(robot_xy), float)[:2]
        elif camera is not None:
            self.base = np.asarray(camera.position, float)[:2]
        else:
            self.base = None
        self._hulls: dict[int, Any] = {}
        self._raster: tuple[np.ndarray, np.ndarray] | None = None
        self._rects: dict[int, tuple[int, int, int, int] | None] = {}
        self._sides: dict[int, dict[int, np.ndarray]] = {}
        self._boxes: tuple[np.ndarray, ...] | None = None
        self.seen_bottom = self.lo[:, 2].copy()     # lowest visible point of each object
        self._floor_types = tuple(t.lower() for t in params.floor_types)
        self.bottom_occluders: list[set[int]] = [set() for _ in range(n)]
        if camera is not None and params.complete_bottoms:
            self._complete_bottoms()
        self.img = self._image_boxes()

    # ------------------------------------------------------------------ per-object data
    def _image_boxes(self) -> np.ndarray:
        """(N, 4) image boxes u0, v0, u1, v1 of the objects, for left / right.

        With a camera: the image rectangle of the box of the object's points (``side_box =
        "cloud"``, how the spec projects true boxes) or its pixel box (``"pixels"``); a side
        whose pixels touch the image border is unbounded (+-inf). Without one: the pixel box."""
        n = len(self._items)
        pix = np.array([it.obj.bbox for it in self._items], float).reshape(n, 4)
        if self.camera is None or not n:
            return pix
        b = pix.copy()
        if self.params.side_box == "cloud":
            for k in range(n):
                r = project_box(self.camera, self.lo[k], self.hi[k])
                if r is not None:
                    b[k] = r
        w, h = self.camera.width - 1, self.camera.height - 1
        b[:, 0] = np.where(pix[:, 0] <= 0, -np.inf, b[:, 0])
        b[:, 1] = np.where(pix[:, 1] <= 0, -np.inf, b[:, 1])
        b[:, 2] = np.where(pix[:, 2] >= w, np.inf, b[:, 2])
        b[:, 3] = np.where(pix[:, 3] >= h, np.inf, b[:, 3])
        return b

    def _complete_bottoms(self) -> None:
        """Amodal completion downwards: an object whose lowest pixels border on a nearer object
        (or on the image's lower edge) has its bottom hidden; its box is extended down to the
        top of the highest object seen under it; with none seen, to the floor (z = 0) when its
        visible bottom is low (``floor_snap_m``) or its kind stands on the floor
        (``floor_types``: a chair whose legs the image's lower edge cuts off). Things rest on
        something; any other higher object with nothing seen under it (wall-mounted, or its
        support out of view) keeps its visible bottom: the view alone cannot tell a wall-hung
        cabinet cut by the image's lower edge from one standing on the floor."""
        lab, zmap = self._raster_maps()
        h = lab.shape[0]
        p = self.params
        for k, it in enumerate(self._items):
            u0, v0, u1, v1 = it.obj.bbox
            mine = lab[v0:v1 + 1, u0:u1 + 1] == k
            cols = np.flatnonzero(mine.any(axis=0))
            if not len(cols):
                continue
            low = v0 + mine.shape[0] - 1 - np.argmax(mine[::-1, cols], axis=0)   # lowest row per column
            u = cols + u0
            below = low + 1
            edge = below >= h
            nb = np.where(edge, -1, lab[np.minimum(below, h - 1), u])
            zn = zmap[np.minimum(below, h - 1), u]
            with np.errstate(invalid="ignore"):
                nearer = zmap[low, u] - zn
                # a neighbour clearly nearer hides the bottom; so does one only a little nearer
                # that rises above A's lowest visible point (a bowl just in front of a bottle),
                # which a surface A stands on never does
                rises = self.hi[np.maximum(nb, 0), 2] > self.lo[k, 2] + p.occluder_rise_m
                hid = (nb >= 0) & (nb != k) & ((nearer > p.occluder_depth_m) |
                                               ((nearer > p.occluder_near_m) & rises))
            if np.count_nonzero(hid | edge) < p.bottom_occluded_fraction * len(u):
                continue
            self.bottom_occluders[k] = set(np.unique(nb[hid]).tolist())
            lo, hi, g = self.lo[k], self.hi[k], p.support_gap_m
            under = np.all((self.lo[:, :2] <= hi[:2] + g) & (lo[:2] <= self.hi[:, :2] + g), axis=1) & \
                (self.hi[:, 2] <= lo[2] + p.support_tolerance_m)
            under[k] = False
            for o in self.bottom_occluders[k]:       # what hides A's bottom from the front is not under it
                if self.hi[o, 2] > lo[2] + p.occluder_rise_m:
                    under[o] = False
            if under.any():
                self.lo[k, 2] = min(lo[2], float(self.hi[under, 2].max()))
            elif lo[2] <= p.floor_snap_m or it.obj.label.lower().endswith(self._floor_types):
                self.lo[k, 2] = min(lo[2], 0.0)   # low, or a kind that stands: on the floor

    def _hull(self, j: int):
        if j not in self._hulls:
            pts = self._items[j].obj.points
            try:
                self._hulls[j] = ConvexHull(pts).equations if len(pts) >= 4 else None
            except (QhullError, ValueError):
                self._hulls[j] = None
        return self._hulls[j]

    # ------------------------------------------------------------------ relations (vectorised over pairs)
    def _near(self, I, J):
        gap = np.linalg.norm(np.maximum(np.maximum(self.lo[I] - self.hi[J], self.lo[J] - self.hi[I]), 0.0), axis=1)
        return gap < self.params.near_gap_m, {"gap_m": gap}

    def _xy_overlap(self, I, J):
        return (np.minimum(self.hi[I, :2], self.hi[J, :2]) - np.maximum(self.lo[I, :2], self.lo[J, :2])).min(axis=1)

    def _above(self, I, J):
        clear = self.lo[I, 2] - self.hi[J, 2]
        ov = self._xy_overlap(I, J)
        holds = (clear > self.params.clearance_m) & (ov > -self.params.footprint_tolerance_m)
        return holds, {"clearance_m": clear, "footprint_overlap_m": ov}

    def _below(self, I, J):
        return self._above(J, I)

    def _on_top_of(self, I, J):
        dz = self.lo[I, 2] - self.hi[J, 2]
        frac = np.zeros(len(I))
        cand = np.flatnonzero((np.abs(dz) <= self.params.contact_m) &
                              (self._xy_overlap(I, J) > -self.params.footprint_tolerance_m))
        for k in cand:
            p = self._items[I[k]].obj.points[:, :2]
            g = self.params.footprint_tolerance_m
            lo, hi = self.lo[J[k], :2] - g, self.hi[J[k], :2] + g
            frac[k] = np.mean(np.all((p >= lo) & (p <= hi), axis=1))
        holds = (np.abs(dz) <= self.params.contact_m) & (frac > self.params.on_top_fraction)
        return holds, {"bottom_minus_top_m": dz, "footprint_fraction": frac}

    def _inside(self, I, J):
        frac = np.zeros(len(I))
        method = np.array(["-"] * len(I), dtype=object)
        c = (self.lo[I] + self.hi[I]) / 2
        cand = np.flatnonzero(np.all((c > self.lo[J]) & (c < self.hi[J]), axis=1))
        tol = self.params.hull_tolerance_m
        for k in cand:
            p = self._items[I[k]].obj.points
            if J[k] in self.bottom_occluders[I[k]]:
                # B's wall hides A's lower part: the share of A's completed box inside B's box
                ov = np.maximum(np.minimum(self.hi[I[k]], self.hi[J[k]]) - np.maximum(self.lo[I[k]], self.lo[J[k]]), 0)
                frac[k] = float(np.prod(ov) / max(np.prod(self.hi[I[k]] - self.lo[I[k]]), 1e-12))
                method[k] = "completed box"
                continue
            eq = self._hull(J[k])
            if eq is None:
                frac[k] = np.mean(np.all((p >= self.lo[J[k]] - tol) & (p <= self.hi[J[k]] + tol), axis=1))
                method[k] = "box"
            else:
                frac[k] = np.mean(np.all(p @ eq[:, :3].T + eq[:, 3] <= tol, axis=1))
                method[k] = "hull"
        return frac > self.params.inside_fraction, {"inside_fraction": frac, "method": method}

    def _side(self, I, J, left: bool):
        b = self.img
        # A's centre; when A is cut by the border on the far side its true centre could be
        # anywhere beyond, so the answer is withheld (inf margin below).
        cut_far = np.isinf(b[I, 2]) if left else np.isinf(b[I, 0])
        with np.errstate(invalid="ignore"):
            cu = (b[I, 0] + b[I, 2]) / 2.0
            side = (b[J, 0] - cu) if left else (cu - b[J, 2])
        side = np.where(cut_far | np.isnan(side), -np.inf, side)
        rows = np.minimum(b[I, 3], b[J, 3]) - np.maximum(b[I, 1], b[J, 1])
        holds = (side > self.params.side_margin_px) & (rows > 0)
        return holds, {"side_margin_px": side, "row_overlap_px": rows}

    def _on_the_left_of(self, I, J):
        return self._side(I, J, True)

    def _on_the_right_of(self, I, J):
        return self._side(I, J, False)

    def _blocking(self, I, J):
        may = self._may_hide(I, J)
        hidden = np.array([self.hidden_fraction(i, j) if m else 0.0 for i, j, m in zip(I, J, may)])
        path = self._path_distances(I, J)
        holds = (hidden >= self.params.block_fraction) | (path < self.params.path_corridor_m)
        return holds, {"hidden_fraction": hidden, "path_distance_m": path}

    # ------------------------------------------------------------------ blocking parts
    def _may_hide(self, I: np.ndarray, J: np.ndarray) -> np.ndarray:
        """Pairs where A can hide part of B on box tests alone: A's nearest point is nearer than
        B's farthest corner, and A's pixel box meets the image rectangle of B's box or borders
        B's pixel box (B continued sideways, :meth:`side_continuation`)."""
        if self.camera is None or not len(I):
            return np.zeros(len(I), bool)
        if self._boxes is None:
            n = len(self._items)
            b = np.array([it.obj.bbox for it in self._items], float).reshape(n, 4)
            rects = np.array([self._rect(j) or (0, 0, 0, 0) for j in range(n)], float).reshape(n, 4)
            first = np.array([it.obj.distance_m for it in self._items])      # A's nearest point
            far = np.linalg.norm(np.maximum(np.abs(self.lo - self.camera.position),
                                            np.abs(self.hi - self.camera.position)), axis=1)  # B's farthest corner
            self._boxes = (b, rects, first, far)
        b, rects, first, far = self._boxes
        meet = ((b[I, 0] < rects[J, 2]) & (rects[J, 0] <= b[I, 2]) &
                (b[I, 1] < rects[J, 3]) & (rects[J, 1] <= b[I, 3]))
        touch = np.all((b[I, :2] <= b[J, 2:] + 1) & (b[J, :2] <= b[I, 2:] + 1), axis=1)
        beside = touch & ~meet
        if beside.any():
            beside[beside] = [i in self.side_continuation(j) for i, j in zip(I[beside], J[beside])]
        return (meet | beside) & (first[I] < far[J])

    def path_distance(self, i: int, j: int) -> float:
        """Distance of A's box to the floor path to B; inf when A carries B or there is no base."""
        return float(self._path_distances(np.array([i]), np.array([j]))[0])

    def _path_distances(self, I: np.ndarray, J: np.ndarray) -> np.ndarray:
        """:meth:`path_distance` of each pair; pairs whose box tests put A far from the path
        get that bound (A's bottom height, or its distance from the box around the whole path)."""
        out = np.full(len(I), np.inf)
        if self.base is None or not len(I):
            return out
        lo, hi, corridor = self.lo, self.hi, self.params.path_corridor_m
        free = ~self._carries(I, J)
        high = free & (lo[I, 2] >= corridor)              # too high to reach the floor path
        out[high] = lo[I[high], 2]
        far = np.hypot(*np.maximum(np.maximum(lo[I, :2] - np.maximum(self.base, hi[J, :2]),
                                              np.minimum(self.base, lo[J, :2]) - hi[I, :2]), 0.0).T)
        away = free & ~high & (far >= corridor)           # far from the box around the whole path
        out[away] = far[away]
        for k in np.flatnonzero(free & ~high & ~away):
            i, j = I[k], J[k]
            out[k] = floor_path_distance(self.base, lo[j], hi[j], lo[i], hi[i])
        return out

    def carries(self, i: int, j: int) -> bool:
        """A (index i) carries or contains B: B's centre lies over A's box (the spec's rule),
        or B rests on A's top and their footprints touch (B may hide the part of A under it)."""
        return bool(self._carries(np.array([i]), np.array([j]))[0])

    def _carries(self, I: np.ndarray, J: np.ndarray) -> np.ndarray:
        return carries_seen(self.lo[I], self.hi[I], self.lo[J], self.hi[J], self.params)

    def _raster_maps(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-pixel object index (-1: none) and depth, from the objects' pixels."""
        if self._raster is None:
            cam = self.camera
            lab = np.full((cam.height, cam.width), -1, np.int32)
            z = np.full((cam.height, cam.width), np.nan, np.float32)
            for k, it in enumerate(self._items):
                px = it.obj.pixels
                if px is not None and len(px):
                    u, v = px[:, 0].astype(np.intp), px[:, 1].astype(np.intp)
                    lab[v, u] = k
                    z[v, u] = px[:, 2]
            self._raster = (lab, z)
        return self._raster

    def _rect(self, j: int) -> tuple[int, int, int, int] | None:
        """Image rectangle of B's box, clipped to the image (u0, v0, u1, v1 exclusive)."""
        if j not in self._rects:
            r = project_box(self.camera, self.lo[j], self.hi[j])
            if r is None:
                self._rects[j] = None
            else:
                u0, v0 = max(int(np.floor(r[0])), 0), max(int(np.floor(r[1])), 0)
                u1 = min(int(np.ceil(r[2])) + 1, self.camera.width)
                v1 = min(int(np.ceil(r[3])) + 1, self.camera.height)
                self._rects[j] = (u0, v0, u1, v1) if u0 < u1 and v0 < v1 else None
        return self._rects[j]

    def hidden_fraction(self, i: int, j: int) -> float:
        """Estimated share of B (index j) that A (index i) hides; 0 without a camera.

        Pixels of A whose ray meets B's box behind A count as hidden, unless the box of another
        object lies between A and B there (without A, that object would show). So do the pixels
        of A where B is continued past a wholly cut side (:meth:`side_continuation`). When the
        count stays under ``block_fraction`` before the discount, the discount is skipped: the
        value is then an upper bound, and the answer (not blocking) the same."""
        if self.camera is None or i == j:
            return 0.0
        a = self._items[i].obj
        if a.pixels is None or not len(a.pixels):
            return 0.0
        ba, bb = a.bbox, self._items[j].obj.bbox   # only a neighbour of B's pixels can hide its continuation
        touch = ba[0] <= bb[2] + 1 and bb[0] <= ba[2] + 1 and ba[1] <= bb[3] + 1 and bb[1] <= ba[3] + 1
        side = self.side_continuation(j).get(i) if touch else None
        ray = self._ray_hidden(i, j, 0 if side is None else len(side))
        n = len(ray) if side is None else len(np.union1d(ray, side))
        visible = self._items[j].obj.valid_depth_pixels
        return n / (visible + n) if n else 0.0

    def _ray_hidden(self, i: int, j: int, extra: int = 0) -> np.ndarray:
        """Linear image indices of A's pixels whose ray meets B's box behind A's surface, less
        those where another object's box lies between A's surface and B (skipped when even with
        ``extra`` more hidden pixels the share stays under ``block_fraction``)."""
        none = np.zeros(0, np.intp)
        rect = self._rect(j)
        a = self._items[i].obj
        if rect is None:
            return none
        u0, v0 = max(rect[0], a.bbox[0]), max(rect[1], a.bbox[1])
        u1, v1 = min(rect[2], a.bbox[2] + 1), min(rect[3], a.bbox[3] + 1)
        if u0 >= u1 or v0 >= v1:
            return none
        lab, zmap = self._raster_maps()
        vv, uu = np.nonzero(lab[v0:v1, u0:u1] == i)
        if not len(uu):
            return none
        uu, vv = uu + u0, vv + v0
        za = zmap[vv, uu].astype(float)
        d = self._rays(uu, vv)
        t_in, t_out = self._slab(d, j)
        eps = self.params.occlusion_depth_m
        hidden = (t_out > t_in) & (t_out > za + eps)
        visible = self._items[j].obj.valid_depth_pixels
        idx = np.flatnonzero(hidden)
        if len(idx) and (len(idx) + extra) / (visible + len(idx) + extra) >= self.params.block_fraction:
            # without A, another object whose box lies between A's surface and B would show there
            d, za, t_b = d[:, idx], za[idx], np.maximum(t_in[idx], za[idx])
            for k in self._rect_overlaps((u0, v0, u1, v1), exclude=(i, j)):
                c_in, c_out = self._slab(d, k)
                free = ~((c_out > c_in) & (c_out > za + eps) & (c_in < t_b))
                idx, d, za, t_b = idx[free], d[:, free], za[free], t_b[free]
        return vv[idx] * self.camera.width + uu[idx]

    def _rays(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """World directions of the camera rays through pixels (u, v), scaled to optical z = 1,
        as a (3, N) array."""
        cam = self.camera
        return cam.rotation @ np.stack([(u - cam.cx) / cam.fx, (v - cam.cy) / cam.fy, np.ones(len(u))])

    def side_continuation(self, j: int) -> dict[int, np.ndarray]:
        """Where B (index j) may continue behind nearer objects: {object index: linear image
        indices of its pixels}.

        Amodal completion sideways. Take B's mask row by row: where (nearly, by
        ``side_occluded_fraction``) every row that reaches B's leftmost column ends there at the
        pixels of a nearer object (or at the image border), and so do at least ``side_cut_share``
        of all rows, B's left edge is not its own but the occluders', and B may go on behind
        them; likewise for the right, and for the top, column by column. A side whose extreme
        rows end freely shows B's own outline, and its corners are left to the ray cast of
        :meth:`hidden_fraction`. B is continued through the occluder's pixels that
        follow its edge in that row (the run of the occluder's label), where B's surface, taken
        at the depth of its edge, lies behind the occluder's box rather than inside it (solids
        do not interpenetrate: a box standing beside B, not in front of it, hides nothing)."""
        if j in self._sides:
            return self._sides[j]
        out: dict[int, list[np.ndarray]] = {}
        lab, zmap = self._raster_maps()
        h, w = lab.shape
        u0, v0, u1, v1 = self._items[j].obj.bbox
        mine = lab[v0:v1 + 1, u0:u1 + 1] == j
        rows, cols = np.flatnonzero(mine.any(axis=1)), np.flatnonzero(mine.any(axis=0))
        if not len(rows):
            self._sides[j] = {}
            return self._sides[j]
        p, eps = self.params, self.params.occlusion_depth_m
        # B's edge pixels on its left, right and top side (0, 1, 2), and their outer neighbours
        ends = (u0 + mine.argmax(axis=1)[rows], u0 + mine.shape[1] - 1 - mine[:, ::-1].argmax(axis=1)[rows],
                v0 + mine.argmax(axis=0)[cols])
        side = np.repeat([0, 1, 2], [len(rows), len(rows), len(cols)])
        ev = np.concatenate([rows + v0, rows + v0, ends[2]])
        eu = np.concatenate([ends[0], ends[1], cols + u0])
        dv, du = np.array([0, 0, -1])[side], np.array([-1, 1, 0])[side]
        nv, nu = ev + dv, eu + du
        inside = (nv >= 0) & (nu >= 0) & (nv < h) & (nu < w)
        nv, nu = np.where(inside, nv, 0), np.where(inside, nu, 0)
        nb = np.where(inside, lab[nv, nu], -1)
        zb = zmap[ev, eu].astype(float)
        with np.errstate(invalid="ignore"):
            cut = inside & (nb >= 0) & (nb != j) & (zmap[nv, nu] < zb - eps)
        if not cut.any():
            self._sides[j] = {}
            return self._sides[j]
        shut = cut | ~inside
        # the lines that reach B's extreme column (row) on that side: slanted or round outlines
        # end short of it
        extreme = np.concatenate([np.abs(e - (e.max() if k == 1 else e.min())) <= p.side_extreme_px
                                  for k, e in enumerate(ends)])
        lines = np.bincount(side, minlength=3)
        open_side = (np.bincount(side, cut, 3) > 0) & \
            (np.bincount(side, shut & extreme, 3) >= p.side_occluded_fraction * np.bincount(side, extreme, 3)) & \
            (np.bincount(side, shut, 3) >= p.side_cut_share * lines)
        go = cut & open_side[side]
        if go.any():
            # B goes on through the occluder's pixels that follow its edge on that line
            nv, nu, k, zc, dv, du = nv[go], nu[go], nb[go], zb[go], dv[go], du[go]
            n = np.concatenate([_run_lengths(lab, nv[sel], nu[sel], k[sel], dv[sel][0], du[sel][0])
                                for sel in (side[go] == s for s in range(3)) if sel.any()])
            order = np.argsort(side[go], kind="stable")
            nv, nu, k, zc, dv, du = nv[order], nu[order], k[order], zc[order], dv[order], du[order]
            line = np.repeat(np.arange(len(n)), n)
            step = np.arange(len(line)) - np.repeat(np.cumsum(n) - n, n)      # 0 .. n-1 per line
            pv, pu, k, zc = nv[line] + dv[line] * step, nu[line] + du[line] * step, k[line], zc[line]
            behind = zmap[pv, pu] < zc - eps
            d = self._rays(pu, pv)
            for o in np.unique(k):
                sel = (k == o) & behind
                t_in, t_out = self._slab(d[:, sel], int(o))
                within = (t_out > t_in) & (zc[sel] >= t_in - eps) & (zc[sel] <= t_out + eps)
                out.setdefault(int(o), []).append((pv[sel] * w + pu[sel])[~within])
        self._sides[j] = {o: np.unique(np.concatenate(v)) for o, v in out.items()}
        return self._sides[j]

    def _slab(self, d: np.ndarray, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Entry and exit depth of camera rays ``d`` ((3, N), optical z = 1) through box j; an
        axis the ray runs along inside the box's slab (0 / 0) does not bound it."""
        o = self.camera.position[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            t1 = (self.lo[j][:, None] - o) / d
            t2 = (self.hi[j][:, None] - o) / d
        near, far = np.minimum(t1, t2), np.maximum(t1, t2)
        return np.fmax(np.fmax(near[0], near[1]), near[2]), np.fmin(np.fmin(far[0], far[1]), far[2])

    def _rect_overlaps(self, r: tuple[int, int, int, int], exclude: tuple[int, ...]) -> list[int]:
        out = []
        for k in range(len(self._items)):
            if k in exclude:
                continue
            q = self._rect(k)
            if q is not None and q[0] < r[2] and r[0] < q[2] and q[1] < r[3] and r[1] < q[3]:
                out.append(k)
        return out

    # ------------------------------------------------------------------ public API
    def _index(self, name: str) -> int | None:
        if name not in self.objects:
            known = ", ".join(sorted(self.objects)) or "none"
            raise KeyError(f"no perceived object {name!r}; known: {known}")
        return self.index.get(name)

    def _run(self, relation: str, I: np.ndarray, J: np.ndarray):
        fn = getattr(self, "_" + relation.replace(" ", "_"))
        return fn(np.asarray(I, np.intp), np.asarray(J, np.intp))

    def evaluate(self, a: str, relation: str, b: str) -> tuple[bool, dict[str, Any]]:
        """Does ``a <relation> b`` hold? With the evidence that decided it."""
        check_relation(relation)
        i, j = self._index(a), self._index(b)
        if i is None or j is None:
            return False, {"reason": "no 3-D points for " + (a if i is None else b)}
        if i == j:
            return False, {"reason": "same object"}
        holds, ev = self._run(relation, [i], [j])
        return bool(holds[0]), {k: _scalar(v[0]) for k, v in ev.items()}

    def _pairs(self, relation: str, I: np.ndarray, J: np.ndarray) -> list[Relation]:
        if not len(I):
            return []
        holds, ev = self._run(relation, I, J)
        return [Relation(self._items[I[k]].name, relation, self._items[J[k]].name,
                         {key: _scalar(v[k]) for key, v in ev.items()}) for k in np.flatnonzero(holds)]

    def related(self, relation: str, obj: str) -> list[Relation]:
        """Every ``X <relation> obj`` that holds (what ``check_obj_relationship`` returns)."""
        check_relation(relation)
        j = self._index(obj)
        if j is None:
            return []
        I = np.array([i for i in range(len(self._items)) if i != j], np.intp)
        return self._pairs(relation, I, np.full(len(I), j, np.intp))

    def relations(self, relations: Iterable[str] = RELATIONS) -> list[Relation]:
        """Every relation that holds between two perceived objects."""
        n = len(self._items)
        I, J = np.nonzero(~np.eye(n, dtype=bool))
        out: list[Relation] = []
        for rel in relations:
            check_relation(rel)
            I2, J2 = self._prefilter(rel, I, J)
            out += self._pairs(rel, I2, J2)
        return out

    def _prefilter(self, relation: str, I: np.ndarray, J: np.ndarray):
        """Drop pairs that cannot hold on box tests alone (the exact test follows)."""
        if relation == "blocking":
            keep = (self.lo[I, 2] < self.params.path_corridor_m) | self._may_hide(I, J)
            return I[keep], J[keep]
        if relation in ("inside", "on top of", "above", "below", "near"):
            g = self.params.near_gap_m if relation == "near" else \
                0.0 if relation == "inside" else self.params.footprint_tolerance_m
            keep = np.all((self.lo[I, :2] <= self.hi[J, :2] + g) & (self.lo[J, :2] <= self.hi[I, :2] + g), axis=1)
            return I[keep], J[keep]
        return I, J


def carries_seen(a_lo, a_hi, b_lo, b_hi, params: RelationParams = RelationParams()) -> np.ndarray:
    """A carries or contains B, on boxes of seen points ((N, 3) stacks give (N,) answers): B's
    centre lies over A's box (the spec's rule, common.geometry.carries), or B rests on A's top
    (within ``contact_m``) and their footprints touch (within ``support_gap_m``): B may hide
    the part of A under it."""
    a_lo, a_hi, b_lo, b_hi = (np.atleast_2d(np.asarray(v, float)) for v in (a_lo, a_hi, b_lo, b_hi))
    g = params.support_gap_m
    touch = np.all((a_lo[:, :2] <= b_hi[:, :2] + g) & (b_lo[:, :2] <= a_hi[:, :2] + g), axis=1)
    rests = touch & (a_lo[:, 2] <= b_lo[:, 2]) & (np.abs(b_lo[:, 2] - a_hi[:, 2]) <= params.contact_m)
    return np.asarray(carries(a_lo, a_hi, b_lo, b_hi)) | rests


def _run_lengths(lab: np.ndarray, v: np.ndarray, u: np.ndarray, k: np.ndarray, dv: int, du: int) -> np.ndarray:
    """How many pixels of label ``k`` follow one another in ``lab`` from (v, u) on, stepping
    by (dv, du) (one of left, right, up), per start pixel."""
    if dv:   # up the columns
        band, pos, idx = lab[:, u].T, v, np.arange(lab.shape[0])
    else:
        band, pos, idx = lab[v, :], u, np.arange(lab.shape[1])
    other = band != k[:, None]
    if dv + du < 0:
        stop = np.where(other & (idx <= pos[:, None]), idx, -1).max(axis=1)
        return pos - stop
    stop = np.where(other & (idx >= pos[:, None]), idx, len(idx)).min(axis=1)
    return stop - pos


def _scalar(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    return v


def compute_relations(objects: Mapping[str, PerceivedObject], camera: CameraModel | None = None,
                      params: RelationParams = RelationParams(), robot_xy: Iterable[float] | None = None,
                      relations: Iterable[str] = RELATIONS) -> list[Relation]:
    return RelationEngine(objects, camera, params, robot_xy).relations(relations)


def check_free_path(target: str, objects: Mapping[str, PerceivedObject], robot_xy: Iterable[float] | None = None, *,
                    camera: CameraModel | None = None, params: RelationParams = RelationParams()) -> dict[str, Any]:
    """Is the way to ``target`` free? ``blocking`` lists what blocks it (floor path, and
    occlusion when a camera is given), with the evidence per blocker."""
    engine = RelationEngine(objects, camera, params, robot_xy)
    if engine.base is None:
        raise ValueError("check_free_path needs robot_xy or a camera")
    found = engine.related("blocking", target)
    return {"target": target, "free": not found, "blocking": [r.subject for r in found],
            "evidence": {r.subject: r.evidence for r in found}}
