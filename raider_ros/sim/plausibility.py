"""Physical plausibility of a scene (benchmark format v1 asks for it): every object rests on
the floor, on another object or inside a container, and no two solids interpenetrate.

``check_plausibility(scene) -> list[str]``: one line per problem, naming the objects. Tolerances:
3 cm of contact (the spec's "on top of" tolerance), and an overlap counts as interpenetration
when the two solids overlap by more than 1 cm across (their outlines seen from above: rotated
rectangles, round things as polygons) and in height. An object inside an open or
door-closed container may overlap it. Objects marked ``mounted: true`` (a project extension:
wall-hung cabinets, shelves, lamps) need no support. The object in the gripper is not in the
world and is not checked.
"""
from __future__ import annotations

import numpy as np

from raider_ros.common.geometry import footprint, overlap, polygon_penetration, true_box

from .scene import Person, Scene, SceneObject  # noqa: F401 - Person: see check_plausibility

CONTACT_M = 0.03          # a bottom this close to a top (or the floor) rests on it
PENETRATION_M = 0.01      # overlap along every axis beyond this is interpenetration
GRID_CELL_M = 1.0         # floor cells of the broad phase (any size gives the same answers)


def _container(e) -> bool:
    return isinstance(e, SceneObject) and (e.open_top or e.door is not None)


def _inside(inner, outer, boxes) -> bool:
    lo, hi = boxes[outer.id]
    c = np.asarray(inner.center, float)
    return _container(outer) and bool(np.all(c >= lo - 1e-9) and np.all(c <= hi + 1e-9))


def _supported(e, others, boxes) -> bool:
    lo, hi = boxes[e.id]
    if lo[2] <= CONTACT_M:
        return True                                     # on the floor
    c = np.asarray(e.center, float)
    for o in others:
        if o.id == e.id:
            continue
        olo, ohi = boxes[o.id]
        over_xy = olo[0] <= c[0] <= ohi[0] and olo[1] <= c[1] <= ohi[1]
        if over_xy and abs(lo[2] - ohi[2]) <= CONTACT_M:
            return True                                 # on top of o
        if _inside(e, o, boxes) and lo[2] - olo[2] <= CONTACT_M + (ohi[2] - olo[2]):
            return True                                 # in a container (its floor or a shelf of it)
    return False


class _Grid:
    """Broad phase: entities by the floor cells their boxes cover, so that a house of
    thousands of objects is checked pair by pair only where boxes can meet (the answers are
    those of comparing every pair)."""

    def __init__(self, ents, boxes, cell: float = GRID_CELL_M):
        self.cell = cell
        self.cells: dict[tuple[int, int], list[int]] = {}
        for i, e in enumerate(ents):
            lo, hi = boxes[e.id]
            for key in self._keys(lo, hi):
                self.cells.setdefault(key, []).append(i)

    def _keys(self, lo, hi):
        x0, y0 = int(np.floor(lo[0] / self.cell)), int(np.floor(lo[1] / self.cell))
        x1, y1 = int(np.floor(hi[0] / self.cell)), int(np.floor(hi[1] / self.cell))
        return [(x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)]

    def at(self, x: float, y: float) -> list[int]:
        return self.cells.get((int(np.floor(x / self.cell)), int(np.floor(y / self.cell))), [])

    def pairs(self):
        seen = set()
        for members in self.cells.values():
            for a in range(len(members)):
                for b in range(a + 1, len(members)):
                    i, j = members[a], members[b]
                    key = (i, j) if i < j else (j, i)
                    if key not in seen:
                        seen.add(key)
                        yield key


def check_plausibility(scene: Scene) -> list[str]:
    held = scene.robot.holding
    ents = [e for e in scene.entities if e.id != held]
    boxes = {e.id: true_box(e) for e in ents}
    grid = _Grid(ents, boxes)
    problems = []
    for e in ents:
        if getattr(e, "mounted", False):
            continue
        # a support or container holds the entity's centre in its floor outline: it is in that cell
        near = [ents[i] for i in grid.at(e.center[0], e.center[1])]
        if _supported(e, near, boxes):
            continue
        hint = "" if isinstance(e, Person) else " (mark wall-hung things mounted: true)"
        problems.append(f"{e.id} rests on nothing: its bottom (z = {boxes[e.id][0][2]:.3f} m) is on neither "
                        f"the floor nor the top of an object below its centre, nor inside a container{hint}")
    outlines: dict[str, np.ndarray] = {}
    for i, j in sorted(grid.pairs()):
        a, b = ents[i], ents[j]
        ov = overlap(*boxes[a.id], *boxes[b.id])
        if not np.all(ov > PENETRATION_M) or _inside(a, b, boxes) or _inside(b, a, boxes):
            continue
        for e in (a, b):
            if e.id not in outlines:
                outlines[e.id] = footprint(e)
        depth_xy = polygon_penetration(outlines[a.id], outlines[b.id])   # rotated boxes, round things
        if depth_xy > PENETRATION_M:
            problems.append(f"{a.id} and {b.id} interpenetrate (by {depth_xy * 100:.0f} cm across and "
                            f"{ov[2] * 100:.0f} cm in height)")
    return problems
