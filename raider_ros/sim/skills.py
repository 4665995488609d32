"""The simulated robot's skills on true geometry (ROS-free, pure functions).

Each skill takes the current :class:`Scene` and its arguments and returns either the scene
after the skill (a new value; the input is never changed) or a :class:`SkillFailure` whose
message says, in words a person understands, which precondition does not hold and names the
objects involved. :class:`raider_ros.sim.world.SimWorld` adds timing, feedback, cancelling
and locking around these functions.

Definitions (benchmark format v1, "Ground-truth geometry"):

* An entity's *true box* is its full extents; boxes are rotated by ``yaw_deg`` (boxes only).
  Relations use the axis-aligned box of the rotated corners (:func:`aabb`).
* **Reach**: distance from the camera's optical centre (robot x, y, camera height) to the
  nearest point of the target's true (oriented) box, compared with ``robot.reach``.
* **Handover distance**: the same distance to the person's box, at most
  ``handover_distance_m`` (default 0.5 m, the paper's handover constraint).
* **Path blocked** (``move_to``): an object or person whose box lies within 0.3 m (3-D) of
  the straight floor segment (z = 0) from the base to the point of the target's footprint
  nearest to the base; what carries or contains the target does not count (the same rule as
  the oracle's ``blocking``, :mod:`raider_ros.perception.oracle`).
* **View blocked**: another entity hides at least 20 % of the target's pixels that would be
  visible without it (ray-cast, :meth:`Renderer.occluders`); what carries or contains the
  target, and what stands on or in it, do not count.
* ``move_to`` stops ``approach_standoff_m`` in front of one side of the *anchor*: the target
  itself when it stands on the floor (or is a person), else the furniture on the floor that
  carries it. For the anchor itself, the side facing the robot; for an object on furniture,
  the side nearest the object (ties within 0.1 m: the one facing the robot). The base lines
  up with the target along that side and turns to look at the target's centre. A side where
  another thing on the floor is within 0.25 m of that spot is skipped for the next best one.

Skills and what they need (checked in this order; the first that fails is reported):

===========  ==================================================================================
move_to X    X not held; free floor path. Moves the base (see above).
             In a scene with rooms, a thing in another room is reached through that room: the
             base first goes to the room's spot (as for ``move_to R``), and the straight-path
             rule applies from there.
move_to R    R a room of the scene (and no object, person or type of that name): the base goes to
             the free floor point nearest the room's middle (``room_spot``), facing the way it
             travelled. Rooms are reached by the robot's own navigation: no straight-path rule
             (the flat has no walls to route around; the rule models the last approach to a thing).
pick X       hand empty; X pickupable; nothing on top of / inside X; X not inside a closed
             container; reach; view. Sets ``robot.holding`` (X leaves the drawn world).
place L      hand holds something; L a receptacle; L not closed (openable or door); reach; view;
             a free spot (inside when L is open_top / openable, else on top; nearest the camera).
open X       X openable and closed; hand empty (the gripper grasps the handle); reach; view.
close X      X openable and open; reach; view (a full hand may push a door shut).
turn_on/off  X toggleable and off/on; reach; view.
slice X      X sliceable and not sliced; a knife (type named "...Knife", or a knife by WordNet) in hand; reach; view.
handover O P O in hand; P a person within the handover distance, looking at the robot, hands
             free. The object goes to the person (removed from the world).
===========  ==================================================================================

Arguments: exact id, case-insensitive id, a person's name, or a type with one instance
("apple"); a type with several instances fails naming them.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from rapidfuzz import fuzz, process

from raider_ros.common import geometry
from raider_ros.common.geometry import entity_yaw_deg

from .render import Renderer
from .scene import Person, Scene, SceneObject

Entity = SceneObject | Person

CONTACT_TOL_M = 0.03          # "bottom within 3 cm" (on top of, stands on the floor)
PATH_CLEARANCE_M = 0.3        # spec: within 0.3 m of the straight floor path
OCCLUSION_FRACTION = 0.2      # spec: hides at least 20 % of the target's pixels
PLACE_GRID_M = 0.02           # spacing of candidate spots when placing
PLACE_CLEARANCE_M = 0.005     # gap kept between a placed object and its neighbours
BASE_RADIUS_M = 0.25          # move_to: the base needs this much room around its goal
APPROACH_TIE_M = 0.1          # move_to: sides of the furniture this close in distance count as a tie
ROOM_CLEARANCE_M = 0.35       # move_to <room>: the base stops this far from things on the floor and the room's sides

SKILL_ARGS: dict[str, tuple[str, ...]] = {
    "move_to": ("target",),
    "pick": ("object",),
    "place": ("location",),
    "open": ("object",),
    "close": ("object",),
    "turn_on": ("object",),
    "turn_off": ("object",),
    "slice": ("object",),
    "handover": ("object", "person"),
}


@dataclass(frozen=True)
class SkillParams:
    approach_standoff_m: float = 0.45
    handover_distance_m: float = 0.5


class SkillFailure(Exception):
    """A precondition does not hold; ``str(exc)`` is the explanation for the user."""


# --------------------------------------------------------------------------- geometry
def _rot2(yaw_deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    return np.array([[c, -s], [s, c]])


def aabb(e: Entity) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned box of the true extents (rotated corners for boxes with yaw)."""
    return geometry.true_box(e)


def bottom(e: Entity) -> float:
    return e.center[2] - e.size[2] / 2.0


def top(e: Entity) -> float:
    return e.center[2] + e.size[2] / 2.0


def distance_to_box(point: Sequence[float], e: Entity) -> float:
    """3-D distance from a point to the nearest point of the entity's true (oriented) box."""
    p = np.asarray(point, float) - np.asarray(e.center, float)
    p[:2] = _rot2(-entity_yaw_deg(e)) @ p[:2]
    half = np.asarray(e.size, float) / 2.0
    return float(np.linalg.norm(np.maximum(np.abs(p) - half, 0.0)))


def optical_centre(scene: Scene) -> np.ndarray:
    return np.array([scene.robot.x, scene.robot.y, scene.camera.height])


def distance_from_camera(scene: Scene, e: Entity) -> float:
    return distance_to_box(optical_centre(scene), e)


def on_top_of(a: Entity, b: Entity) -> bool:
    """A's bottom within 3 cm of B's top and at least half of A's footprint over B's."""
    if a.id == b.id or abs(bottom(a) - top(b)) > CONTACT_TOL_M:
        return False
    (a0, a1), (b0, b1) = aabb(a), aabb(b)
    area = (a1[0] - a0[0]) * (a1[1] - a0[1])
    over = float(np.prod(np.maximum(geometry.overlap(a0[:2], a1[:2], b0[:2], b1[:2]), 0.0)))
    return area > 0 and over >= 0.5 * area


def is_container(b: Entity) -> bool:
    return isinstance(b, SceneObject) and (b.open_top or b.door is not None)


def inside(a: Entity, b: Entity) -> bool:
    """B is open_top or has a door; A's centre in B's box; at least half of A's volume in it."""
    if a.id == b.id or not is_container(b):
        return False
    (a0, a1), (b0, b1) = aabb(a), aabb(b)
    c = np.asarray(a.center)
    if np.any(c < b0) or np.any(c > b1):
        return False
    vol = float(np.prod(a1 - a0))
    over = float(np.prod(np.maximum(geometry.overlap(a0, a1, b0, b1), 0.0)))
    return vol > 0 and over >= 0.5 * vol


def stands_on_floor(e: Entity) -> bool:
    return bottom(e) <= CONTACT_TOL_M


def supports(scene: Scene, e: Entity) -> list[SceneObject]:
    """What the entity stands on or is inside, transitively (nearest first)."""
    out: list[SceneObject] = []
    frontier = [e]
    held = scene.robot.holding
    while frontier:
        cur = frontier.pop(0)
        for o in scene.objects:
            if o.id in (held, e.id) or any(o.id == s.id for s in out):
                continue
            if on_top_of(cur, o) or inside(cur, o):
                out.append(o)
                frontier.append(o)
    return out


def carries(a: Entity, b: Entity) -> bool:
    """A carries or contains B: B's centre lies over A's footprint and A's bottom is not above B's."""
    return geometry.carries(*aabb(a), *aabb(b))


def floor_path_distance(scene: Scene, target: Entity, obstacle: Entity) -> float:
    """3-D distance between the obstacle's box and the floor segment (z = 0) from the robot base
    to the point of the target's footprint nearest to the base."""
    return geometry.floor_path_distance((scene.robot.x, scene.robot.y), *aabb(target), *aabb(obstacle))


def path_blockers(scene: Scene, target: Entity) -> list[tuple[str, float]]:
    """Entities within 0.3 m of the floor path to the target, nearest first.

    What carries or contains the target (the counter under a mug, the fridge around the milk)
    is not an obstacle, nor is the target itself or the object in the gripper.
    """
    out = []
    for e in scene.entities:
        if e.id in (target.id, scene.robot.holding) or carries(e, target):
            continue
        d = floor_path_distance(scene, target, e)
        if d < PATH_CLEARANCE_M:
            out.append((e.id, d))
    return sorted(out, key=lambda x: x[1])


def approach_pose(scene: Scene, target: Entity, standoff: float) -> tuple[float, float, float]:
    """Base pose (x, y, yaw_deg) in front of the target; see the module docstring."""
    chain = supports(scene, target)
    anchor: Entity = next((s for s in chain if stands_on_floor(s)), chain[-1] if chain else target)
    if stands_on_floor(target) or isinstance(target, Person):
        anchor = target
    yaw = entity_yaw_deg(anchor)
    rot = _rot2(yaw)
    c = np.asarray(anchor.center[:2], float)
    half = np.asarray(anchor.size[:2], float) / 2.0
    robot = rot.T @ (np.array([scene.robot.x, scene.robot.y]) - c)
    tgt = rot.T @ (np.asarray(target.center[:2], float) - c)
    # faces +x, -x, +y, -y: how far the robot is outside each one
    outside = np.array([robot[0] - half[0], -robot[0] - half[0], robot[1] - half[1], -robot[1] - half[1]])
    if anchor is target:
        order = sorted(range(4), key=lambda f: -outside[f])
    else:  # the sides of the furniture nearest the target first; among near ties, the one facing the robot
        to_edge = np.array([half[0] - tgt[0], half[0] + tgt[0], half[1] - tgt[1], half[1] + tgt[1]])
        order = sorted(range(4), key=lambda f: (to_edge[f] > to_edge.min() + APPROACH_TIE_M, -outside[f]))
    goals = []
    for face in order:
        axis, sign = face // 2, (1.0 if face % 2 == 0 else -1.0)
        goal = np.zeros(2)
        goal[axis] = sign * (half[axis] + standoff)
        goal[1 - axis] = float(np.clip(tgt[1 - axis], -half[1 - axis], half[1 - axis]))
        goals.append(rot @ goal + c)
    # the first side where the base fits: no other thing on the floor within BASE_RADIUS_M
    floor_things = [aabb(e) for e in scene.entities
                    if e.id not in (anchor.id, scene.robot.holding) and bottom(e) < PATH_CLEARANCE_M]
    goal = next((g for g in goals if all(
        np.linalg.norm(np.maximum(np.maximum(lo[:2] - g, g - hi[:2]), 0.0)) >= BASE_RADIUS_M
        for lo, hi in floor_things)), goals[0])
    gx, gy = goal
    yaw_goal = math.degrees(math.atan2(target.center[1] - gy, target.center[0] - gx))
    return float(gx), float(gy), float(yaw_goal)


# --------------------------------------------------------------------------- arguments
def resolve(scene: Scene, name: object, what: str = "object or person",
            prefer: Callable[[Entity], bool] | None = None) -> Entity:
    """Exact id, case-insensitive id, a person's name, or a type with one instance.

    ``prefer`` breaks ties between instances of a type (e.g. the held one for a handover).
    """
    if not isinstance(name, str) or not name.strip():
        raise SkillFailure(f"expected the name of an {what}, got {name!r}")
    text = name.strip()
    ents = list(scene.entities)
    for e in ents:
        if e.id == text:
            return e
    low = text.lower()
    for e in ents:
        if e.id.lower() == low:
            return e
    for e in scene.people:
        if e.name and e.name.lower() == low:
            return e
    key = low[4:] if low.startswith("the ") else low
    key = key.replace(" ", "").replace("_", "")
    same_type = [e for e in ents if e.type.lower().replace("_", "") == key]
    if len(same_type) > 1 and prefer is not None:
        preferred = [e for e in same_type if prefer(e)]
        if len(preferred) == 1:
            return preferred[0]
    if len(same_type) == 1:
        return same_type[0]
    if same_type:
        raise SkillFailure(f"{text!r} is ambiguous: it could be {_join([e.id for e in same_type])}")
    ids = [e.id for e in ents]
    close = [c for c, score, _ in process.extract(text, ids, scorer=fuzz.WRatio, limit=3) if score >= 50]
    hint = f"; closest: {_join(close)}" if close else ""
    raise SkillFailure(f"there is no {what} called {text!r} in the world{hint}")


def _join(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]


def _object(scene: Scene, name: object, prefer=None) -> SceneObject:
    e = resolve(scene, name, "object", prefer)
    if isinstance(e, Person):
        raise SkillFailure(f"{e.id} is a person, not an object")
    return e


# --------------------------------------------------------------------------- checks
class Checker:
    """Preconditions of the skills on one scene; raises :class:`SkillFailure`."""

    def __init__(self, scene: Scene, renderer: Renderer, params: SkillParams):
        self.scene, self.renderer, self.params = scene, renderer, params

    @property
    def holding(self) -> str | None:
        return self.scene.robot.holding

    def reachable(self, verb: str, e: Entity) -> None:
        d = distance_from_camera(self.scene, e)
        if d > self.scene.robot.reach:
            raise SkillFailure(f"cannot {verb} {e.id}: it is out of reach ({d:.2f} m from the camera, "
                               f"the arm reaches {self.scene.robot.reach:.2f} m)")

    def hand_free(self, verb: str, e: Entity) -> None:
        if self.holding is not None:
            raise SkillFailure(f"cannot {verb} {e.id}: the robot's hand is full, it is holding {self.holding}")

    def not_held(self, verb: str, e: Entity) -> None:
        if e.id == self.holding:
            raise SkillFailure(f"cannot {verb} {e.id}: the robot is holding it")

    def not_shut_in(self, verb: str, e: Entity) -> None:
        for s in supports(self.scene, e):
            if inside(e, s) and s.has("openable") and not s.is_open:
                raise SkillFailure(f"cannot {verb} {e.id}: it is inside {s.id}, whose door is closed")

    def unobstructed(self, verb: str, e: Entity) -> None:
        # what holds the target, and what it holds, are not in the way
        skip = {s.id for s in supports(self.scene, e)}
        skip |= {o.id for o in self.scene.visible_objects() if on_top_of(o, e) or inside(o, e)}
        total, occ = self.renderer.occluders(self.scene, e.id)
        worst = sorted(((frac, oid) for oid, (_n, frac) in occ.items()
                        if oid not in skip and frac >= OCCLUSION_FRACTION), reverse=True)
        if worst:
            frac, oid = worst[0]
            raise SkillFailure(f"cannot {verb} {e.id}: {oid} blocks the way from the camera to it "
                               f"(hides {frac:.0%} of it)")

    def has(self, verb: str, e: SceneObject, prop: str, wording: str) -> None:
        if not e.has(prop):
            raise SkillFailure(f"cannot {verb} {e.id}: a {e.type} {wording} (it is not {prop})")

    def manipulable(self, verb: str, e: SceneObject) -> None:
        """Reach, not shut in a closed container, nothing hiding it from the camera."""
        self.not_held(verb, e)
        self.not_shut_in(verb, e)
        self.reachable(verb, e)
        self.unobstructed(verb, e)


def _set_state(scene: Scene, obj: SceneObject, **state: bool) -> Scene:
    return scene.with_object(dataclasses.replace(obj, state={**obj.state, **state}))


# --------------------------------------------------------------------------- skills
def _room_target(s: Scene, name: object):
    """The room ``name`` names, when it names no object or person (ids, names and types win)."""
    if not isinstance(name, str) or not s.rooms or s.room(name) is None:
        return None
    try:
        resolve(s, name)
    except SkillFailure:
        return s.room(name)
    return None


def room_spot(s: Scene, room) -> tuple[float, float] | None:
    """Where the base stops in a room: the free floor point nearest the room's middle (a 0.1 m
    grid, ``ROOM_CLEARANCE_M`` from every thing on the floor and from the room's sides)."""
    floor = [aabb(e) for e in s.entities if e.id != s.robot.holding and bottom(e) < PATH_CLEARANCE_M]
    cx, cy = (room.min[0] + room.max[0]) / 2.0, (room.min[1] + room.max[1]) / 2.0
    xs = np.arange(room.min[0] + ROOM_CLEARANCE_M, room.max[0] - ROOM_CLEARANCE_M + 1e-9, 0.1)
    ys = np.arange(room.min[1] + ROOM_CLEARANCE_M, room.max[1] - ROOM_CLEARANCE_M + 1e-9, 0.1)
    spots = sorted(((float(x), float(y)) for x in xs for y in ys), key=lambda p: (math.hypot(p[0] - cx, p[1] - cy), p))
    for x, y in spots:
        if all(math.hypot(max(lo[0] - x, 0.0, x - hi[0]), max(lo[1] - y, 0.0, y - hi[1])) >= ROOM_CLEARANCE_M
               for lo, hi in floor):
            return x, y
    return None


def do_move_to(c: Checker, target_name) -> tuple[Scene, str]:
    s = c.scene
    room = _room_target(s, target_name)
    if room is not None:
        spot = room_spot(s, room)
        if spot is None:
            raise SkillFailure(f"cannot move to the {room.name.replace('_', ' ')}: there is no free spot for the "
                               "base in it")
        x, y = spot
        dx, dy = x - s.robot.x, y - s.robot.y
        yaw = math.degrees(math.atan2(dy, dx)) if math.hypot(dx, dy) > 1e-6 else s.robot.yaw_deg
        new = s.with_robot(x=round(x, 4), y=round(y, 4), yaw_deg=round(yaw, 2))
        return new, f"moved to the {room.name.replace('_', ' ')}: base at ({x:.2f}, {y:.2f}) facing {yaw:.0f} deg"
    target = resolve(s, target_name, "object or person")
    c.not_held("move to", target)
    # in another room: the robot's navigation takes it to that room first; the last leg, from
    # the room's spot to the thing, follows the straight-path rule
    via = None
    here = s.room_at(s.robot.x, s.robot.y) if s.rooms else None
    there = s.room_at(target.center[0], target.center[1]) if s.rooms else None
    if there is not None and here != there:
        spot = room_spot(s, s.room(there))
        if spot is not None:
            via = there
            s = s.with_robot(x=spot[0], y=spot[1])
    blockers = path_blockers(s, target)
    if blockers:
        oid, d = blockers[0]
        others = f" (also {_join([b for b, _ in blockers[1:]])})" if len(blockers) > 1 else ""
        start = f"the middle of the {via.replace('_', ' ')}" if via else "the robot"
        raise SkillFailure(f"cannot move to {target.id}: the path is blocked by {oid}, {d:.2f} m from the "
                           f"straight path from {start} to {target.id}{others}")
    x, y, yaw = approach_pose(s, target, c.params.approach_standoff_m)
    new = s.with_robot(x=round(x, 4), y=round(y, 4), yaw_deg=round(yaw, 2))
    through = f" (through the {via.replace('_', ' ')})" if via else ""
    return new, f"moved to {target.id}{through}: base at ({x:.2f}, {y:.2f}) facing {yaw:.0f} deg"


def do_pick(c: Checker, name) -> tuple[Scene, str]:
    s = c.scene
    obj = _object(s, name, prefer=lambda e: e.id != s.robot.holding)
    if obj.id == s.robot.holding:
        raise SkillFailure(f"cannot pick {obj.id}: the robot is already holding it")
    c.hand_free("pick", obj)
    c.has("pick", obj, "pickupable", "cannot be picked up")
    for o in s.visible_objects():
        if on_top_of(o, obj):
            raise SkillFailure(f"cannot pick {obj.id}: {o.id} is on top of it")
        if inside(o, obj):
            raise SkillFailure(f"cannot pick {obj.id}: {o.id} is inside it")
    c.manipulable("pick", obj)
    return s.with_robot(holding=obj.id), f"picked {obj.id}"


def do_place(c: Checker, name) -> tuple[Scene, str]:
    s = c.scene
    if s.robot.holding is None:
        try:
            where = f" on {resolve(s, name, 'location').id}"
        except SkillFailure:
            where = ""
        raise SkillFailure(f"cannot place anything{where}: the robot is not holding anything")
    held = s.object(s.robot.holding)
    loc = _object(s, name, prefer=lambda e: e.id != held.id)
    if loc.id == held.id:
        raise SkillFailure(f"cannot place {held.id} on itself")
    c.has(f"place {held.id} on", loc, "receptacle", "cannot hold other objects")
    into = loc.open_top or loc.has("openable") or loc.door is not None
    if (loc.has("openable") or loc.door is not None) and not loc.is_open and not loc.open_top:
        raise SkillFailure(f"cannot place {held.id} in {loc.id}: {loc.id} is closed, its door must be opened first")
    c.manipulable(f"place {held.id} {'in' if into else 'on'}", loc)
    spot = free_spot(s, held, loc, into)
    if spot is None:
        prep = "inside" if into else "on"
        raise SkillFailure(f"cannot place {held.id} {prep} {loc.id}: there is no free space {prep} it "
                           f"for a {held.size[0]:.2f} x {held.size[1]:.2f} x {held.size[2]:.2f} m object")
    moved = dataclasses.replace(held, center=tuple(round(v, 4) for v in spot))
    new = s.with_object(moved).with_robot(holding=None)
    return new, f"placed {held.id} {'in' if into else 'on'} {loc.id}"


def free_spot(scene: Scene, obj: SceneObject, loc: SceneObject, into: bool) -> tuple[float, float, float] | None:
    """Centre for ``obj`` on (or inside) ``loc`` that collides with nothing, nearest the camera."""
    h = obj.size[2]
    z0 = bottom(loc) if into else top(loc)
    if into and not loc.open_top and h > loc.size[2] - 2 * PLACE_CLEARANCE_M:
        return None
    o0, o1 = aabb(obj)
    half = (o1[:2] - o0[:2]) / 2.0 + PLACE_CLEARANCE_M
    lhalf = np.asarray(loc.size[:2]) / 2.0
    gx, gy = (np.arange(-n, n + 1) * PLACE_GRID_M for n in np.floor(lhalf / PLACE_GRID_M).astype(int))
    local = np.stack(np.meshgrid(gx, gy, indexing="ij"), -1).reshape(-1, 2)
    centers = local @ _rot2(entity_yaw_deg(loc)).T + np.asarray(loc.center[:2])
    # every corner of the object's footprint box inside the location's footprint
    corners = centers[:, None, :] + np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * half
    inv = _rot2(-entity_yaw_deg(loc))
    rel = (corners - np.asarray(loc.center[:2])) @ inv.T
    ok = np.all(np.abs(rel) <= lhalf + 1e-9, axis=(1, 2))
    # no overlap with anything else in that volume
    lo_z, hi_z = z0 + PLACE_CLEARANCE_M, z0 + h
    for other in scene.visible_objects():
        if other.id in (loc.id, obj.id) or not ok.any():
            continue
        b0, b1 = aabb(other)
        if b1[2] <= lo_z or b0[2] >= hi_z:
            continue
        clash = np.all((centers + half > b0[:2]) & (centers - half < b1[:2]), axis=1)
        ok &= ~clash
    if not ok.any():
        return None
    cand = centers[ok]
    cam = optical_centre(scene)
    best = cand[np.argmin(np.hypot(cand[:, 0] - cam[0], cand[:, 1] - cam[1]))]
    return float(best[0]), float(best[1]), float(z0 + h / 2.0)


def _open_close(c: Checker, name, opening: bool) -> tuple[Scene, str]:
    verb = "open" if opening else "close"
    s = c.scene
    obj = _object(s, name)
    c.has(verb, obj, "openable", f"cannot be {'opened' if opening else 'closed'}")
    if obj.is_open == opening:
        raise SkillFailure(f"cannot {verb} {obj.id}: it is already {'open' if opening else 'closed'}")
    if opening:  # the gripper must grasp the handle; closing is a push, a full hand is fine
        c.hand_free(verb, obj)
    c.manipulable(verb, obj)
    return _set_state(s, obj, open=opening), f"{'opened' if opening else 'closed'} {obj.id}"


def _toggle(c: Checker, name, on: bool) -> tuple[Scene, str]:
    verb = "turn on" if on else "turn off"
    s = c.scene
    obj = _object(s, name)
    c.has(verb, obj, "toggleable", "cannot be switched on or off")
    if bool(obj.state.get("switched_on", False)) == on:
        raise SkillFailure(f"cannot {verb} {obj.id}: it is already {'on' if on else 'off'}")
    c.manipulable(verb, obj)
    return _set_state(s, obj, switched_on=on), f"turned {obj.id} {'on' if on else 'off'}"


def is_knife(o: SceneObject) -> bool:
    """A knife: a type whose head is "knife" (BreadKnife, PenKnife; not KnifeBlock) or a kind of
    knife by WordNet (Scalpel, Cleaver); the same notion as the issue detector's (lexicon.type_is_a)."""
    from raider_ros.agent.backends.rules.lexicon import type_is_a    # the WordNet table, loaded once
    return type_is_a(o.type, "knife")


def do_slice(c: Checker, name) -> tuple[Scene, str]:
    s = c.scene
    obj = _object(s, name, prefer=lambda e: e.id != s.robot.holding)
    c.has("slice", obj, "sliceable", "cannot be sliced")
    if obj.state.get("sliced", False):
        raise SkillFailure(f"cannot slice {obj.id}: it is already sliced")
    if s.robot.holding is None:
        raise SkillFailure(f"cannot slice {obj.id}: the robot needs a knife in its hand and is holding nothing")
    held = s.object(s.robot.holding)
    if not is_knife(held):
        raise SkillFailure(f"cannot slice {obj.id}: the robot needs a knife in its hand, "
                           f"but it is holding {held.id}")
    c.manipulable("slice", obj)
    return _set_state(s, obj, sliced=True), f"sliced {obj.id} with {held.id}"


def do_handover(c: Checker, obj_name, person_name) -> tuple[Scene, str]:
    s = c.scene
    obj = _object(s, obj_name, prefer=lambda e: e.id == s.robot.holding)
    person = resolve(s, person_name, "person")
    if not isinstance(person, Person):
        raise SkillFailure(f"cannot hand {obj.id} over to {person.id}: {person.id} is not a person")
    if s.robot.holding is None:
        raise SkillFailure(f"cannot hand over {obj.id}: the robot is not holding anything")
    if s.robot.holding != obj.id:
        raise SkillFailure(f"cannot hand over {obj.id}: the robot is holding {s.robot.holding}, not {obj.id}")
    d = distance_from_camera(s, person)
    if d > c.params.handover_distance_m:
        raise SkillFailure(f"cannot hand {obj.id} over to {person.id}: {person.id} is {d:.2f} m away, "
                           f"farther than the handover distance of {c.params.handover_distance_m:.2f} m")
    if not person.looking_at_robot:
        raise SkillFailure(f"cannot hand {obj.id} over to {person.id}: {person.id} is not looking at the robot")
    if not person.hands_free:
        raise SkillFailure(f"cannot hand {obj.id} over to {person.id}: {person.id}'s hands are not free")
    new = s.replace(objects=tuple(o for o in s.objects if o.id != obj.id)).with_robot(holding=None)
    return new, f"handed {obj.id} over to {person.id}"


SKILLS: dict[str, Callable[..., tuple[Scene, str]]] = {
    "move_to": do_move_to,
    "pick": do_pick,
    "place": do_place,
    "open": lambda c, n: _open_close(c, n, True),
    "close": lambda c, n: _open_close(c, n, False),
    "turn_on": lambda c, n: _toggle(c, n, True),
    "turn_off": lambda c, n: _toggle(c, n, False),
    "slice": do_slice,
    "handover": do_handover,
}


def run_skill(scene: Scene, skill: object, args: object, renderer: Renderer,
              params: SkillParams = SkillParams()) -> tuple[Scene, str]:
    """Check and apply one skill; raises :class:`SkillFailure` with the reason."""
    if not isinstance(skill, str) or skill.strip().lower() not in SKILLS:
        raise SkillFailure(f"unknown skill {skill!r}; known skills: {', '.join(SKILLS)}")
    name = skill.strip().lower()
    if isinstance(args, str) or not isinstance(args, (list, tuple)):
        raise SkillFailure(f"{name}: expected a list of arguments {list(SKILL_ARGS[name])}, got {args!r}")
    want = SKILL_ARGS[name]
    if len(args) != len(want):
        raise SkillFailure(f"{name} takes {len(want)} argument{'s' if len(want) > 1 else ''} "
                           f"({', '.join(want)}), got {len(args)}: {list(args)!r}")
    return SKILLS[name](Checker(scene, renderer, params), *args)
