"""Ground-truth geometry of benchmark format v1 ("the oracle").

Decides the spatial relations, distances and reach on the TRUE extents of a scene, following
/work/shared/spec/benchmark-format.md, "Ground-truth geometry". It labels benchmark cases and
scores the perception pipeline; perception itself never calls it.

Conventions (where the spec leaves a choice, this is what the oracle does):

* Every entity is the axis-aligned box of its true extents; a box with yaw uses the AABB of
  its rotated corners. Cylinders and spheres use their bounding box. People are boxes.
  The object in the gripper is not in the world and takes part in no relation.
* ``on top of``: ``|A.bottom - B.top| <= 3 cm`` and ``area(A_xy ∩ B_xy) >= 0.5 area(A_xy)``.
* ``above`` / ``below``: the vertical clearance exceeds 3 cm and the footprints intersect with
  positive area.
* ``on the left of`` / ``on the right of``: each box's 8 corners (clipped to the camera's front
  half-space) are projected; the box's image centre is the centre of that projected
  rectangle. "Left of B's centre by more than half B's width" then means A's centre lies left
  of B's left image edge. Image rows overlap when the projected v-ranges intersect.
* ``blocking``: (a) occlusion: A hides at least 20 % of the pixels of B that a render without
  A shows (``Renderer.occluders``: a ray cast of B alone against all entities, exact at pixel
  resolution; a pixel hidden by two entities counts for neither); or
  (b) the floor path: the 3-D distance between A's box and the floor segment (z = 0) from
  the robot base to the point of B's footprint nearest to the base is under 0.3 m. Objects
  that carry or contain B (B's centre lies over A's footprint and A's bottom is not above B's
  bottom) are not obstacles on that path: the counter under a mug does not block the mug.
* ``near``: the gap between the two boxes is under 0.15 m.
* Distance: camera optical centre -> nearest visible point of the target, from the depth of
  the target's pixels in a render. A target no pixel shows falls back to the nearest point of
  its true box (documented in :func:`oracle_distance`).

Each answer also says whether it is *borderline*: whether a quantity that decided it lies
within a tolerance of its threshold (:class:`Tolerances`). The spec promises that case labels
never rest on a borderline; the perception benchmark leaves such pairs out and counts them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from raider_ros.sim.camera import CameraModel
from raider_ros.sim.scene import Person, Scene, SceneObject
from raider_ros.common.geometry import box_gap, carries, floor_path_distance, overlap, project_box, true_box
from raider_ros.common.vocabulary import RELATIONS, check_relation

# Thresholds of the spec.
CONTACT_M = 0.03
NEAR_GAP_M = 0.15
INSIDE_VOLUME_FRACTION = 0.5
FOOTPRINT_FRACTION = 0.5
BLOCK_HIDDEN_FRACTION = 0.2
PATH_CORRIDOR_M = 0.3

Entity = SceneObject | Person


@dataclass(frozen=True)
class Tolerances:
    """How close to a threshold a quantity must be for an answer to count as borderline."""
    metres: float = 0.02
    fraction: float = 0.1
    image_fraction: float = 0.02     # of the image width, for image-plane distances


@dataclass(frozen=True)
class OracleAnswer:
    holds: bool
    borderline: bool
    evidence: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- decisions
def _all_of(conds: list[tuple[float, float]]) -> tuple[bool, bool]:
    """AND of conditions given as (signed margin, tolerance); margin >= 0 passes."""
    holds = all(m >= 0 for m, _ in conds)
    if holds:
        return True, any(m < tol for m, tol in conds)
    return False, all(m > -tol for m, tol in conds if m < 0)


def _any_of(conds: list[tuple[float, float]]) -> tuple[bool, bool]:
    holds = any(m >= 0 for m, _ in conds)
    if holds:
        return True, all(m < tol for m, tol in conds if m >= 0)
    return False, any(m > -tol for m, tol in conds)


class OracleGeometry:
    """The oracle for one scene; renders (for occlusion and distances) are made lazily and cached."""

    def __init__(self, scene: Scene, tolerances: Tolerances = Tolerances(), frame: Any = None):
        self.scene = scene
        self.tol = tolerances
        self.camera = CameraModel.from_scene(scene)
        self.entities: dict[str, Entity] = {e.id: e for e in (*scene.visible_objects(), *scene.people)}
        self.boxes = {eid: true_box(e) for eid, e in self.entities.items()}
        self._frame = frame
        self._image_boxes: dict[str, tuple[float, float, float, float] | None] = {}
        self._hidden: dict[str, dict[str, tuple[int, float]]] = {}

    # renders -----------------------------------------------------------------------
    @property
    def frame(self):
        if self._frame is None:
            self._frame = _renderer().render(self.scene)
        return self._frame

    def _occluders(self, b: str) -> dict[str, tuple[int, float]]:
        """{A: (pixels of B that A alone hides, hidden fraction)}, from the renderer's ray cast."""
        if b not in self._hidden:
            self._hidden[b] = _renderer().occluders(self.scene, b)[1]
        return self._hidden[b]

    def image_box(self, eid: str):
        if eid not in self._image_boxes:
            self._image_boxes[eid] = project_box(self.camera, *self.boxes[eid])
        return self._image_boxes[eid]

    # relations ---------------------------------------------------------------------
    def _check(self, eid: str) -> None:
        if eid not in self.entities:
            if self.scene.robot.holding == eid:
                return
            known = ", ".join(sorted(self.entities))
            raise ValueError(f"scene {self.scene.name!r} has no object or person {eid!r}; known: {known}")

    def answer(self, a: str, relation: str, b: str) -> OracleAnswer:
        check_relation(relation)
        self._check(a)
        self._check(b)
        if a == b or a not in self.entities or b not in self.entities:
            return OracleAnswer(False, False, {"reason": "same entity or held object"})
        return getattr(self, "_" + relation.replace(" ", "_"))(a, b)

    def _inside(self, a: str, b: str) -> OracleAnswer:
        (alo, ahi), (blo, bhi) = self.boxes[a], self.boxes[b]
        eb = self.entities[b]
        hollow = isinstance(eb, SceneObject) and (eb.open_top or eb.door is not None)
        c = (alo + ahi) / 2
        centre_margin = float(min((c - blo).min(), (bhi - c).min()))
        vol = float(np.prod(np.maximum(overlap(alo, ahi, blo, bhi), 0.0)) / np.prod(ahi - alo))
        conds = [(0.0 if hollow else -math.inf, 0.0),
                 (centre_margin, self.tol.metres), (vol - INSIDE_VOLUME_FRACTION, self.tol.fraction)]
        holds, border = _all_of(conds)
        return OracleAnswer(holds, border, {"hollow": hollow, "centre_margin_m": centre_margin,
                                            "volume_fraction": vol})

    def _footprint_fraction(self, a: str, b: str) -> tuple[float, float]:
        (alo, ahi), (blo, bhi) = self.boxes[a], self.boxes[b]
        ov = overlap(alo, ahi, blo, bhi)[:2]
        return float(np.prod(np.maximum(ov, 0.0)) / np.prod((ahi - alo)[:2])), float(ov.min())

    def _on_top_of(self, a: str, b: str) -> OracleAnswer:
        (alo, _), (_, bhi) = self.boxes[a], self.boxes[b]
        dz = float(alo[2] - bhi[2])
        frac, _ = self._footprint_fraction(a, b)
        holds, border = _all_of([(CONTACT_M - abs(dz), self.tol.metres),
                                 (frac - FOOTPRINT_FRACTION, self.tol.fraction)])
        return OracleAnswer(holds, border, {"bottom_minus_top_m": dz, "footprint_fraction": frac})

    def _above(self, a: str, b: str) -> OracleAnswer:
        (alo, _), (_, bhi) = self.boxes[a], self.boxes[b]
        clearance = float(alo[2] - bhi[2])
        _, ov = self._footprint_fraction(a, b)
        holds, border = _all_of([(clearance - CONTACT_M, self.tol.metres), (ov, self.tol.metres)])
        return OracleAnswer(holds, border, {"clearance_m": clearance, "footprint_overlap_m": ov})

    def _below(self, a: str, b: str) -> OracleAnswer:
        ans = self._above(b, a)
        return OracleAnswer(ans.holds, ans.borderline, ans.evidence)

    def _left_right(self, a: str, b: str, left: bool) -> OracleAnswer:
        ra, rb = self.image_box(a), self.image_box(b)
        if ra is None or rb is None:
            return OracleAnswer(False, False, {"reason": "behind the camera"})
        cu = (ra[0] + ra[2]) / 2
        side = rb[0] - cu if left else cu - rb[2]
        rows = min(ra[3], rb[3]) - max(ra[1], rb[1])
        tol = self.tol.image_fraction * self.camera.width
        holds, border = _all_of([(side, tol), (rows, tol)])
        return OracleAnswer(holds, border, {"side_margin_px": side, "row_overlap_px": rows})

    def _on_the_left_of(self, a: str, b: str) -> OracleAnswer:
        return self._left_right(a, b, True)

    def _on_the_right_of(self, a: str, b: str) -> OracleAnswer:
        return self._left_right(a, b, False)

    def hidden_fraction(self, a: str, b: str) -> float:
        """Share of B's pixels, as a render without A shows them, that A hides."""
        return self._occluders(b).get(a, (0, 0.0))[1]

    def path_distance(self, a: str, b: str) -> float:
        """Distance from A's box to the floor path to B; inf when A carries or contains B."""
        (alo, ahi), (blo, bhi) = self.boxes[a], self.boxes[b]
        if carries(alo, ahi, blo, bhi):
            return math.inf
        base = (self.scene.robot.x, self.scene.robot.y)
        return floor_path_distance(base, blo, bhi, alo, ahi)

    def _blocking(self, a: str, b: str) -> OracleAnswer:
        frac = self.hidden_fraction(a, b)
        dist = self.path_distance(a, b)
        holds, border = _any_of([(frac - BLOCK_HIDDEN_FRACTION, self.tol.fraction),
                                 (PATH_CORRIDOR_M - dist, self.tol.metres)])
        return OracleAnswer(holds, border, {"hidden_fraction": frac, "path_distance_m": dist})

    def _near(self, a: str, b: str) -> OracleAnswer:
        gap = box_gap(*self.boxes[a], *self.boxes[b])
        holds, border = _all_of([(NEAR_GAP_M - gap, self.tol.metres)])
        return OracleAnswer(holds, border, {"gap_m": gap})

    def answers(self, relations: Iterable[str] = RELATIONS) -> dict[tuple[str, str, str], OracleAnswer]:
        """Every ordered pair of distinct entities, for each relation."""
        ids = list(self.entities)
        return {(a, r, b): self.answer(a, r, b) for r in relations for a in ids for b in ids if a != b}

    # distance ----------------------------------------------------------------------
    def distance(self, eid: str) -> float:
        self._check(eid)
        frame = self.frame
        inst = [k for k, (e, _) in frame.labels.items() if e == eid]
        if inst:
            mask = (frame.instance == inst[0]) & np.isfinite(frame.depth) & (frame.depth > 0)
            if mask.any():
                v, u = np.nonzero(mask)
                pts = frame.camera.backproject(u, v, frame.depth[mask])
                return float(np.linalg.norm(pts - frame.camera.position, axis=1).min())
        if eid not in self.boxes:   # the held object: in the gripper
            return 0.0
        lo, hi = self.boxes[eid]
        p = self.camera.position
        return float(np.linalg.norm(np.clip(p, lo, hi) - p))


# --------------------------------------------------------------------------- functions
_RENDERER = None


def _renderer():
    global _RENDERER
    if _RENDERER is None:
        from raider_ros.sim.render import Renderer
        _RENDERER = Renderer()
    return _RENDERER


def oracle_relation(scene: Scene, a_id: str, relation: str, b_id: str) -> bool:
    """Does ``a_id <relation> b_id`` hold on the true geometry?"""
    return OracleGeometry(scene).answer(a_id, relation, b_id).holds


def oracle_relations(scene: Scene) -> set[tuple[str, str, str]]:
    """All (a, relation, b) that hold on the true geometry."""
    return {k for k, ans in OracleGeometry(scene).answers().items() if ans.holds}


def oracle_distance(scene: Scene, eid: str, frame: Any = None) -> float:
    """Camera optical centre -> nearest visible point of ``eid`` [m], from the depth of its
    pixels in a render of ``scene`` (pass ``frame`` to reuse one). A target that no pixel shows
    (hidden, out of view) gets the distance to the nearest point of its true box, so labels
    about it stay defined; the object in the gripper is at distance 0."""
    return OracleGeometry(scene, frame=frame).distance(eid)


def within_reach(scene: Scene, eid: str, frame: Any = None) -> bool:
    return oracle_distance(scene, eid, frame) <= scene.robot.reach
