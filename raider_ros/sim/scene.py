"""Scenes in benchmark format v1: loading, validation, setup blocks, serialisation.

ROS-free. A :class:`Scene` is an immutable-by-convention value: edits (a case's setup, a
skill's effect) build a new scene with :meth:`Scene.replace` / :func:`apply_setup`, so a
failed edit never leaves a half-changed world behind.

Rooms (project extension): an optional ``rooms:`` list of named axis-aligned floor
rectangles, see :class:`Room` and :func:`room_at`.

Every error is a :class:`SceneError` whose message names the file, the field path and the
offending value, e.g. ``kitchen.scene.yaml: objects[2] (Mug_1).size: expected 3 positive
numbers, got [0.1, -1, 0.1]``.
"""
from __future__ import annotations

import reprlib

import copy
import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from raider_ros.common.yamlfile import safe_load_bounded

SCENE_FORMAT = "raider-scene/1"
SHAPES = ("box", "cylinder", "sphere")
DOOR_FACES = ("+x", "-x", "+y", "-y")
PROPERTIES = (
    "pickupable", "openable", "toggleable", "sliceable", "receptacle",
    "cookable", "dirtyable", "fillable", "moveable", "breakable",
)
# state key -> the property that makes it meaningful
STATE_PROPERTY = {
    "open": "openable",
    "switched_on": "toggleable",
    "sliced": "sliceable",
    "clean": "dirtyable",
    "filled": "fillable",
    "cooked": "cookable",
    "broken": "breakable",
}
PERSON_STATE_KEYS = ("looking_at_robot", "hands_free")


class SceneError(ValueError):
    """A scene, case or setup block that does not follow benchmark format v1."""


# --------------------------------------------------------------------------- data model
@dataclass(frozen=True)
class Camera:
    height: float = 1.3        # optical centre above the floor [m]
    pitch_deg: float = 30.0    # downward tilt
    hfov_deg: float = 80.0
    width: int = 640
    height_px: int = 480


@dataclass(frozen=True)
class Robot:
    x: float = 0.0
    y: float = 0.0
    yaw_deg: float = 0.0
    reach: float = 1.1
    holding: str | None = None

    @property
    def pose(self) -> tuple[float, float, float]:
        return (self.x, self.y, self.yaw_deg)


@dataclass(frozen=True)
class SceneObject:
    id: str
    type: str
    shape: str
    center: tuple[float, float, float]
    size: tuple[float, float, float]
    yaw_deg: float = 0.0
    open_top: bool = False
    door: str | None = None
    color: tuple[float, float, float] | None = None
    properties: frozenset[str] = frozenset()
    mounted: bool = False            # project extension: fixed to a wall, needs no support below
    state: Mapping[str, bool] = field(default_factory=dict)

    def has(self, prop: str) -> bool:
        return prop in self.properties

    @property
    def is_open(self) -> bool:
        return bool(self.state.get("open", False))


@dataclass(frozen=True)
class Person:
    id: str
    name: str | None
    center: tuple[float, float, float]
    size: tuple[float, float, float] = (0.45, 0.35, 1.7)
    state: Mapping[str, bool] = field(default_factory=dict)
    color: tuple[float, float, float] | None = None

    @property
    def type(self) -> str:
        return "Person"

    @property
    def looking_at_robot(self) -> bool:
        return bool(self.state.get("looking_at_robot", False))

    @property
    def hands_free(self) -> bool:
        return bool(self.state.get("hands_free", True))


@dataclass(frozen=True)
class Room:
    """A named region of the floor (project extension): an axis-aligned rectangle."""
    name: str
    min: tuple[float, float]
    max: tuple[float, float]

    def contains(self, x: float, y: float) -> bool:
        """The closed rectangle: points on a shared wall belong to both rooms."""
        return self.min[0] <= x <= self.max[0] and self.min[1] <= y <= self.max[1]


def room_key(name: str) -> str:
    """How room names are compared: case, blanks and underscores ignored ("Living room",
    "living_room" and "livingroom" are one room)."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


@dataclass(frozen=True)
class Scene:
    name: str
    robot: Robot
    camera: Camera
    objects: tuple[SceneObject, ...]
    people: tuple[Person, ...] = ()
    source: str = "<memory>"
    extra: Mapping[str, Any] = field(default_factory=dict)  # optional keys we keep, unused
    rooms: tuple[Room, ...] = ()   # project extension; empty: the scene declares no rooms

    # lookups -----------------------------------------------------------------------
    def object(self, obj_id: str) -> SceneObject:
        for o in self.objects:
            if o.id == obj_id:
                return o
        raise KeyError(obj_id)

    def person(self, person_id: str) -> Person:
        for p in self.people:
            if p.id == person_id:
                return p
        raise KeyError(person_id)

    def get(self, entity_id: str) -> SceneObject | Person | None:
        for e in (*self.objects, *self.people):
            if e.id == entity_id:
                return e
        return None

    @property
    def object_ids(self) -> list[str]:
        return [o.id for o in self.objects]

    @property
    def entities(self) -> tuple[SceneObject | Person, ...]:
        """Objects then people: the order instance ids are assigned in."""
        return (*self.objects, *self.people)

    def room(self, name: str) -> Room | None:
        """The room of that name (compared with :func:`room_key`), or None."""
        key = room_key(name)
        return next((r for r in self.rooms if room_key(r.name) == key), None)

    def room_at(self, x: float, y: float) -> str | None:
        """The name of the room a floor point lies in: the first room in the scene's list
        whose rectangle contains it (shared walls go to the earlier room); None outside all."""
        return room_at(self, x, y)

    def visible_objects(self) -> tuple[SceneObject, ...]:
        """Objects drawn in the world: the held object travels in the gripper, out of view."""
        return tuple(o for o in self.objects if o.id != self.robot.holding)

    # edits -------------------------------------------------------------------------
    def replace(self, **changes: Any) -> "Scene":
        return dataclasses.replace(self, **changes)

    def with_object(self, obj: SceneObject) -> "Scene":
        objs = tuple(obj if o.id == obj.id else o for o in self.objects)
        return self.replace(objects=objs)

    def with_person(self, person: Person) -> "Scene":
        return self.replace(people=tuple(person if p.id == person.id else p for p in self.people))

    def with_robot(self, **changes: Any) -> "Scene":
        return self.replace(robot=dataclasses.replace(self.robot, **changes))


# --------------------------------------------------------------------------- validation
class _Ctx:
    """Builds error messages that name the file and the field path."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, path: str, msg: str) -> SceneError:
        return SceneError(f"{self.source}: {path}: {msg}" if path else f"{self.source}: {msg}")

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected a mapping, got {_show(value)}")
        return value

    def number(self, value: Any, path: str, *, positive: bool = False, minimum: float | None = None) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(path, f"expected a number, got {_show(value)}")
        v = float(value)
        if not math.isfinite(v):
            raise self.fail(path, f"expected a finite number, got {_show(value)}")
        if positive and v <= 0:
            raise self.fail(path, f"expected a positive number, got {_show(value)}")
        if minimum is not None and v < minimum:
            raise self.fail(path, f"expected a number >= {minimum}, got {_show(value)}")
        return v

    def vec3(self, value: Any, path: str, *, positive: bool = False) -> tuple[float, float, float]:
        if not isinstance(value, (list, tuple)) or len(value) != 3:
            what = "3 positive numbers" if positive else "3 numbers"
            raise self.fail(path, f"expected {what} [x, y, z], got {_show(value)}")
        return tuple(self.number(v, f"{path}[{i}]", positive=positive) for i, v in enumerate(value))  # type: ignore[return-value]

    def color(self, value: Any, path: str) -> tuple[float, float, float] | None:
        if value is None:
            return None
        c = self.vec3(value, path)
        if any(not 0.0 <= x <= 1.0 for x in c):
            raise self.fail(path, f"expected RGB values in 0..1, got {_show(value)}")
        return c

    def string(self, value: Any, path: str, *, allow_none: bool = False) -> str | None:
        if value is None and allow_none:
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(path, f"expected a non-empty string, got {_show(value)}")
        return value.strip()

    def boolean(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(path, f"expected true or false, got {_show(value)}")
        return value


_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxlevel, _SHORT_REPR.maxstring, _SHORT_REPR.maxother = 4, 60, 60


def _show(value: Any) -> str:
    text = _SHORT_REPR.repr(value)     # bounded: never recurses through a deeply nested value
    return text if len(text) <= 80 else text[:77] + "..."


def _parse_camera(raw: Any, ctx: _Ctx) -> Camera:
    if raw is None:
        return Camera()
    m = ctx.mapping(raw, "camera")
    d = Camera()
    cam = Camera(
        height=ctx.number(m.get("height", d.height), "camera.height", positive=True),
        pitch_deg=ctx.number(m.get("pitch_deg", d.pitch_deg), "camera.pitch_deg"),
        hfov_deg=ctx.number(m.get("hfov_deg", d.hfov_deg), "camera.hfov_deg", positive=True),
        width=int(ctx.number(m.get("width", d.width), "camera.width", positive=True)),
        height_px=int(ctx.number(m.get("height_px", d.height_px), "camera.height_px", positive=True)),
    )
    if not 1.0 <= cam.hfov_deg < 179.0:
        raise ctx.fail("camera.hfov_deg", f"expected a field of view in 1..179 degrees, got {cam.hfov_deg}")
    if not -89.0 <= cam.pitch_deg <= 89.0:
        raise ctx.fail("camera.pitch_deg", f"expected a tilt in -89..89 degrees, got {cam.pitch_deg}")
    if cam.width > 4096 or cam.height_px > 4096:
        raise ctx.fail("camera", f"image of {cam.width}x{cam.height_px} is larger than 4096x4096")
    return cam


def _parse_robot(raw: Any, ctx: _Ctx) -> Robot:
    m = ctx.mapping(raw, "robot")
    pose = m.get("pose", [0.0, 0.0, 0.0])
    if not isinstance(pose, (list, tuple)) or len(pose) != 3:
        raise ctx.fail("robot.pose", f"expected [x, y, yaw_deg], got {_show(pose)}")
    x, y, yaw = (ctx.number(v, f"robot.pose[{i}]") for i, v in enumerate(pose))
    holding = m.get("holding")
    return Robot(
        x=x, y=y, yaw_deg=yaw,
        reach=ctx.number(m.get("reach", 1.1), "robot.reach", positive=True),
        holding=ctx.string(holding, "robot.holding", allow_none=True),
    )


def _parse_state(raw: Any, path: str, ctx: _Ctx) -> dict[str, bool]:
    if raw is None:
        return {}
    m = ctx.mapping(raw, path)
    out: dict[str, bool] = {}
    for k, v in m.items():
        out[str(k)] = ctx.boolean(v, f"{path}.{k}")
    return out


def _parse_object(raw: Any, idx: int, ctx: _Ctx) -> SceneObject:
    path = f"objects[{idx}]"
    m = ctx.mapping(raw, path)
    obj_id = ctx.string(m.get("id"), f"{path}.id")
    path = f"{path} ({obj_id})"
    shape = m.get("shape", "box")
    if shape not in SHAPES:
        raise ctx.fail(f"{path}.shape", f"expected one of {', '.join(SHAPES)}, got {_show(shape)}")
    props_raw = m.get("properties") or []
    if not isinstance(props_raw, (list, tuple)):
        raise ctx.fail(f"{path}.properties", f"expected a list, got {_show(props_raw)}")
    props = []
    for i, p in enumerate(props_raw):
        if p not in PROPERTIES:
            raise ctx.fail(f"{path}.properties[{i}]",
                           f"unknown property {_show(p)}; known: {', '.join(PROPERTIES)}")
        props.append(p)
    door = m.get("door")
    if door is not None and door not in DOOR_FACES:
        raise ctx.fail(f"{path}.door", f"expected one of {', '.join(DOOR_FACES)} or null, got {_show(door)}")
    if door is not None and shape != "box":
        raise ctx.fail(f"{path}.door", "only box objects can have a door")
    state = _parse_state(m.get("state"), f"{path}.state", ctx)
    return SceneObject(
        id=obj_id,  # type: ignore[arg-type]
        type=ctx.string(m.get("type"), f"{path}.type"),  # type: ignore[arg-type]
        shape=shape,
        center=ctx.vec3(m.get("center"), f"{path}.center"),
        size=ctx.vec3(m.get("size"), f"{path}.size", positive=True),
        yaw_deg=ctx.number(m.get("yaw_deg", 0.0) or 0.0, f"{path}.yaw_deg"),
        open_top=ctx.boolean(m.get("open_top", False) or False, f"{path}.open_top"),
        door=door,
        color=ctx.color(m.get("color"), f"{path}.color"),
        properties=frozenset(props),
        state=state,
        mounted=ctx.boolean(m.get("mounted", False) or False, f"{path}.mounted"),
    )


def _parse_person(raw: Any, idx: int, ctx: _Ctx) -> Person:
    path = f"people[{idx}]"
    m = ctx.mapping(raw, path)
    pid = ctx.string(m.get("id"), f"{path}.id")
    path = f"{path} ({pid})"
    state = _parse_state(m.get("state"), f"{path}.state", ctx)
    return Person(
        id=pid,  # type: ignore[arg-type]
        name=ctx.string(m.get("name"), f"{path}.name", allow_none=True),
        center=ctx.vec3(m.get("center"), f"{path}.center"),
        size=ctx.vec3(m.get("size", [0.45, 0.35, 1.7]), f"{path}.size", positive=True),
        state=state,
        color=ctx.color(m.get("color"), f"{path}.color"),
    )


def _parse_rooms(raw: Any, ctx: _Ctx, entity_ids: Iterable[str]) -> tuple[Room, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ctx.fail("rooms", f"expected a list of rooms, got {_show(raw)}")
    ids = {room_key(i) for i in entity_ids}
    rooms: list[Room] = []
    keys: set[str] = set()
    for i, item in enumerate(raw):
        path = f"rooms[{i}]"
        m = ctx.mapping(item, path)
        unknown = sorted(set(m) - {"name", "min", "max"})
        if unknown:
            raise ctx.fail(f"{path}.{unknown[0]}", "unknown room key; expected name, min and max")
        name = ctx.string(m.get("name"), f"{path}.name")
        path = f"{path} ({name})"
        corners = []
        for key in ("min", "max"):
            v = m.get(key)
            if not isinstance(v, (list, tuple)) or len(v) != 2:
                raise ctx.fail(f"{path}.{key}", f"expected 2 numbers [x, y], got {_show(v)}")
            corners.append(tuple(ctx.number(c, f"{path}.{key}[{j}]") for j, c in enumerate(v)))
        lo, hi = corners
        if not (lo[0] < hi[0] and lo[1] < hi[1]):
            raise ctx.fail(f"{path}.max", f"expected max > min on both axes, got min {list(lo)} max {list(hi)}")
        key = room_key(name)  # type: ignore[arg-type]
        if not key:
            raise ctx.fail(f"{path}.name", "a room name needs a letter or digit")
        if key in ids:
            raise ctx.fail(f"{path}.name", f"{name!r} is also the id of an object or person")
        room = Room(name=name, min=lo, max=hi)  # type: ignore[arg-type]
        if key in keys:
            raise ctx.fail(f"{path}.name", f"room name {name!r} is used twice")
        keys.add(key)
        for other in rooms:
            ox = min(hi[0], other.max[0]) - max(lo[0], other.min[0])
            oy = min(hi[1], other.max[1]) - max(lo[1], other.min[1])
            if ox > 1e-9 and oy > 1e-9:
                raise ctx.fail(path, f"overlaps room {other.name!r} ({ox:.2f} x {oy:.2f} m); rooms may only share walls")
        rooms.append(room)
    return tuple(rooms)


def room_at(scene: Scene, x: float, y: float) -> str | None:
    """Name of the room containing the floor point (x, y); see :meth:`Scene.room_at`."""
    for r in scene.rooms:
        if r.contains(x, y):
            return r.name
    return None


def _check_ids(scene: Scene, ctx: _Ctx) -> None:
    seen: set[str] = set()
    for e in scene.entities:
        if e.id in seen:
            raise ctx.fail("objects", f"id {e.id!r} is used twice")
        seen.add(e.id)
    if scene.robot.holding is not None and scene.robot.holding not in seen:
        raise ctx.fail("robot.holding", f"no object with id {scene.robot.holding!r}")
    if scene.robot.holding is not None and scene.get(scene.robot.holding) is not None \
            and isinstance(scene.get(scene.robot.holding), Person):
        raise ctx.fail("robot.holding", f"{scene.robot.holding!r} is a person")


def parse_scene(data: Any, source: str = "<memory>") -> Scene:
    """Validate a decoded scene document and build a :class:`Scene`."""
    ctx = _Ctx(source)
    m = ctx.mapping(data, "")
    fmt = m.get("format")
    if fmt != SCENE_FORMAT:
        raise ctx.fail("format", f"expected {SCENE_FORMAT!r}, got {_show(fmt)}")
    name = ctx.string(m.get("name"), "name")
    if "robot" not in m:
        raise ctx.fail("robot", "missing")
    objs_raw = m.get("objects") or []
    if not isinstance(objs_raw, list):
        raise ctx.fail("objects", f"expected a list, got {_show(objs_raw)}")
    people_raw = m.get("people") or []
    if not isinstance(people_raw, list):
        raise ctx.fail("people", f"expected a list, got {_show(people_raw)}")
    known = {"format", "name", "robot", "camera", "objects", "people", "rooms"}
    objects = tuple(_parse_object(o, i, ctx) for i, o in enumerate(objs_raw))
    people = tuple(_parse_person(p, i, ctx) for i, p in enumerate(people_raw))
    scene = Scene(
        name=name,  # type: ignore[arg-type]
        robot=_parse_robot(m["robot"], ctx),
        camera=_parse_camera(m.get("camera"), ctx),
        objects=objects,
        people=people,
        source=source,
        extra={k: v for k, v in m.items() if k not in known},
        rooms=_parse_rooms(m.get("rooms"), ctx, (e.id for e in (*objects, *people))),
    )
    _check_ids(scene, ctx)
    return scene


def load_yaml_text(text: str, source: str) -> Any:
    try:
        return safe_load_bounded(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SceneError(f"{source}:{where} not valid YAML: {problem}") from None


def load_scene_text(text: str, source: str = "<text>") -> Scene:
    return parse_scene(load_yaml_text(text, source), source)


def load_scene(path: str | Path) -> Scene:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SceneError(f"{p}: no such scene file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SceneError(f"{p}: cannot read: {exc}") from None
    return load_scene_text(text, str(p))


def load_scene_dir(directory: str | Path) -> dict[str, Scene]:
    """All ``*.scene.yaml`` files of a directory, by scene name (names must be unique)."""
    out: dict[str, Scene] = {}
    for f in sorted(Path(directory).glob("*.scene.yaml")):
        s = load_scene(f)
        if s.name in out:
            raise SceneError(f"{f}: name: scene name {s.name!r} is also used by {out[s.name].source}")
        out[s.name] = s
    return out


# --------------------------------------------------------------------------- setup blocks
def apply_setup(scene: Scene, setup: Any, source: str = "setup") -> Scene:
    """Return a new scene with a case's ``setup`` block applied; the input is unchanged.

    ``robot`` may set ``pose``, ``reach`` and ``holding``; ``objects`` maps ids to partial
    object documents (any object field; ``state`` merges key by key); ``people`` the same
    for people; ``remove`` lists ids to delete; ``add`` (an extension) lists new objects.
    """
    if setup is None:
        return scene
    ctx = _Ctx(source)
    m = ctx.mapping(setup, "")
    unknown = set(m) - {"robot", "objects", "people", "remove", "add"}
    if unknown:
        raise ctx.fail(sorted(unknown)[0], "unknown setup key; expected robot, objects, people, remove or add")

    doc = scene_to_dict(scene)
    by_id = {o["id"]: o for o in doc["objects"]}
    people = {p["id"]: p for p in doc.get("people", [])}

    removed = m.get("remove") or []
    if not isinstance(removed, list):
        raise ctx.fail("remove", f"expected a list of ids, got {_show(removed)}")
    for i, rid in enumerate(removed):
        if rid in by_id:
            del by_id[rid]
        elif rid in people:
            del people[rid]
        else:
            raise ctx.fail(f"remove[{i}]", f"no object or person with id {_show(rid)}")

    for kind, table in (("objects", by_id), ("people", people)):
        edits = m.get(kind) or {}
        ctx.mapping(edits, kind)
        for oid, patch in edits.items():
            if oid not in table:
                raise ctx.fail(f"{kind}.{oid}", f"no {kind[:-1]} with id {oid!r} in scene {scene.name!r}")
            ctx.mapping(patch, f"{kind}.{oid}")
            target = table[oid]
            for k, v in patch.items():
                if k == "id":
                    raise ctx.fail(f"{kind}.{oid}.id", "ids cannot be changed by a setup")
                if k == "state" and isinstance(v, Mapping):
                    target.setdefault("state", {}).update(v)
                else:
                    target[k] = copy.deepcopy(v)

    for i, new in enumerate(m.get("add") or []):
        ctx.mapping(new, f"add[{i}]")
        by_id[str(new.get("id"))] = copy.deepcopy(dict(new))

    if "robot" in m:
        r = ctx.mapping(m["robot"], "robot")
        for k, v in r.items():
            if k not in ("pose", "reach", "holding"):
                raise ctx.fail(f"robot.{k}", "unknown robot key; expected pose, reach or holding")
            doc["robot"][k] = v

    doc["objects"] = list(by_id.values())
    doc["people"] = list(people.values())
    # The robot may hold an object that a setup removed: that is an error in the case.
    return parse_scene(doc, f"{scene.source} + {source}")


# --------------------------------------------------------------------------- serialisation
def object_to_dict(o: SceneObject) -> dict[str, Any]:
    d: dict[str, Any] = {
        "id": o.id, "type": o.type, "shape": o.shape,
        "center": list(o.center), "size": list(o.size), "yaw_deg": o.yaw_deg,
        "open_top": o.open_top, "door": o.door,
        "properties": sorted(o.properties), "state": dict(o.state),
    }
    if o.color is not None:
        d["color"] = list(o.color)
    if o.mounted:
        d["mounted"] = True
    return d


def person_to_dict(p: Person) -> dict[str, Any]:
    d: dict[str, Any] = {"id": p.id, "name": p.name, "center": list(p.center),
                         "size": list(p.size), "state": dict(p.state)}
    if p.color is not None:
        d["color"] = list(p.color)
    return d


def scene_to_dict(scene: Scene) -> dict[str, Any]:
    c = scene.camera
    doc = {
        "format": SCENE_FORMAT,
        "name": scene.name,
        "robot": {"pose": [scene.robot.x, scene.robot.y, scene.robot.yaw_deg],
                  "reach": scene.robot.reach, "holding": scene.robot.holding},
        "camera": {"height": c.height, "pitch_deg": c.pitch_deg, "hfov_deg": c.hfov_deg,
                   "width": c.width, "height_px": c.height_px},
        "objects": [object_to_dict(o) for o in scene.objects],
        "people": [person_to_dict(p) for p in scene.people],
    }
    if scene.rooms:  # only when declared: documents of scenes without rooms stay plain format v1
        doc["rooms"] = [{"name": r.name, "min": list(r.min), "max": list(r.max)} for r in scene.rooms]
    return doc


def dump_scene(scene: Scene) -> str:
    return yaml.safe_dump(scene_to_dict(scene), sort_keys=False)


def iter_ids(scene: Scene) -> Iterable[str]:
    return (e.id for e in scene.entities)
