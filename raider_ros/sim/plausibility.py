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


def check_plausibility(scene: Scene) -> list[str]:
    held = scene.robot.holding
    ents = [e for e in scene.entities if e.id != held]
    boxes = {e.id: true_box(e) for e in ents}
    problems = []
    for e in ents:
        if getattr(e, "mounted", False) or _supported(e, ents, boxes):
            continue
        hint = "" if isinstance(e, Person) else " (mark wall-hung things mounted: true)"
        problems.append(f"{e.id} rests on nothing: its bottom (z = {boxes[e.id][0][2]:.3f} m) is on neither "
                        f"the floor nor the top of an object below its centre, nor inside a container{hint}")
    outlines = {e.id: footprint(e) for e in ents}
    for i, a in enumerate(ents):
        for b in ents[i + 1:]:
            ov = overlap(*boxes[a.id], *boxes[b.id])
            if not np.all(ov > PENETRATION_M) or _inside(a, b, boxes) or _inside(b, a, boxes):
                continue
            depth_xy = polygon_penetration(outlines[a.id], outlines[b.id])   # rotated boxes, round things
            if depth_xy > PENETRATION_M:
                problems.append(f"{a.id} and {b.id} interpenetrate (by {depth_xy * 100:.0f} cm across and "
                                f"{ov[2] * 100:.0f} cm in height)")
    return problems
