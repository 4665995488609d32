"""House-scale worlds: generated houses of N objects, and benchmark cases embedded in them.

A :class:`House` is a scene with rooms (every object of the house), the room the camera sees
(``view_room``) and the robot's memory of the rest: how long ago each object outside the view
was seen and what it stood on or in then. Rendering stays per view: :meth:`House.view` is the
scene of the view room alone (for an embedded case: the case's own scene, unchanged), and the
other objects enter the scene graph as remembered objects (``visible: false``, ``last_seen``).

* :func:`generate_house` builds a house of ``n_objects`` objects: rooms of the kinds in
  ``data/houses/types.yaml``, furniture along the walls (and tables mid-room), clutter on top
  of and inside furniture, states drawn from each type's values. Every house passes
  :func:`raider_ros.sim.plausibility.check_plausibility`.
* :func:`embed_case` puts a case's world into such a house: the case's scene becomes one room
  (its coordinates unchanged), the rest of the house fills up to ``n_objects`` objects with
  ids that never clash with the case's.
* :func:`dump_house` / :func:`load_house` write and read a house as a scene file with a
  ``house`` key (``view_room``, ``seed``); a malformed file is a :class:`SceneError` naming the
  file and field like any scene.

Deterministic: the same arguments give the same house.
"""
from __future__ import annotations

import json
import math
import random
import re
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

from raider_ros.common.paths import data_dir

from .plausibility import _Grid
from .scene import (PROPERTIES, STATE_PROPERTY, Camera, Robot, Room, Scene, SceneError, SceneObject, load_yaml_text,
                    parse_scene, room_key, scene_to_dict)
from raider_ros.common.geometry import true_box

HOUSE_TYPES_FORMAT = "raider-house-types/1"
CELL_M = (7.5, 7.0)            # grid cell of one generated room (the largest room kind fits)
CLEARANCE_M = 0.12             # free floor between two pieces of furniture
GAP_M = 0.03                   # between two things on one surface
AGE_S = (20.0, 3600.0)         # how long ago a remembered object was seen (drawn per object)
_ID = re.compile(r"^(.*)_(\d+)$")


# --------------------------------------------------------------------------- type data
@dataclass(frozen=True)
class FurnitureType:
    name: str
    size: tuple[float, float, float]
    color: tuple[float, float, float]
    properties: tuple[str, ...]
    states: Mapping[str, tuple[bool, ...]]
    surface: bool = False
    holds: bool = False
    door: bool = False
    open_top: bool = False
    middle: bool = False


@dataclass(frozen=True)
class ClutterType:
    name: str
    size: tuple[float, float, float]
    shape: str
    properties: tuple[str, ...]
    states: Mapping[str, tuple[bool, ...]]
    colors: tuple[tuple[float, float, float], ...]
    open_top: bool = False
    door: bool = False


@dataclass(frozen=True)
class RoomKind:
    name: str
    size: tuple[tuple[float, float], tuple[float, float]]
    furniture: tuple[str, ...]
    clutter: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class HouseTypes:
    rooms: Mapping[str, RoomKind]
    furniture: Mapping[str, FurnitureType]
    clutter: Mapping[str, ClutterType]
    source: str = "<memory>"


def _fail(source: str, path: str, msg: str) -> SceneError:
    return SceneError(f"{source}: {path}: {msg}")


def _vec(value: Any, n: int, source: str, path: str, positive: bool = True) -> tuple[float, ...]:
    if not isinstance(value, (list, tuple)) or len(value) != n or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and (v > 0 or not positive) for v in value):
        raise _fail(source, path, f"expected {n} {'positive ' if positive else ''}numbers, got {value!r}")
    return tuple(float(v) for v in value)


def _props_states(m: Mapping, source: str, path: str) -> tuple[tuple[str, ...], dict[str, tuple[bool, ...]]]:
    props = m.get("properties") or []
    if not isinstance(props, list) or any(p not in PROPERTIES for p in props):
        raise _fail(source, f"{path}.properties", f"expected a list of {', '.join(PROPERTIES)}, got {props!r}")
    states_raw = m.get("states") or {}
    if not isinstance(states_raw, Mapping):
        raise _fail(source, f"{path}.states", f"expected a mapping, got {states_raw!r}")
    states = {}
    for k, vals in states_raw.items():
        need = STATE_PROPERTY.get(k)
        if need is None:
            raise _fail(source, f"{path}.states.{k}", f"unknown state; known: {', '.join(STATE_PROPERTY)}")
        if need not in props:
            raise _fail(source, f"{path}.states.{k}", f"state {k} needs the property {need}")
        if not isinstance(vals, list) or not vals or not all(isinstance(v, bool) for v in vals):
            raise _fail(source, f"{path}.states.{k}", f"expected a list of true/false, got {vals!r}")
        states[str(k)] = tuple(vals)
    return tuple(props), states


def parse_house_types(doc: Any, source: str = "<memory>") -> HouseTypes:
    """Validate a decoded ``data/houses/types.yaml``; errors name the file and the field."""
    if not isinstance(doc, Mapping):
        raise _fail(source, "", "expected a mapping")
    if doc.get("format") != HOUSE_TYPES_FORMAT:
        raise _fail(source, "format", f"expected {HOUSE_TYPES_FORMAT!r}, got {doc.get('format')!r}")
    furniture: dict[str, FurnitureType] = {}
    for name, m in (doc.get("furniture") or {}).items():
        path = f"furniture.{name}"
        if not isinstance(m, Mapping):
            raise _fail(source, path, "expected a mapping")
        props, states = _props_states(m, source, path)
        f = FurnitureType(str(name), _vec(m.get("size"), 3, source, f"{path}.size"),  # type: ignore[arg-type]
                          _vec(m.get("color", [0.6, 0.6, 0.6]), 3, source, f"{path}.color", False),  # type: ignore[arg-type]
                          props, states, bool(m.get("surface")), bool(m.get("holds")), bool(m.get("door")),
                          bool(m.get("open_top")), bool(m.get("middle")))
        if f.holds and not (f.door or f.open_top):
            raise _fail(source, f"{path}.holds", "a piece that holds things needs a door or an open top")
        furniture[str(name)] = f
    clutter: dict[str, ClutterType] = {}
    for name, m in (doc.get("clutter") or {}).items():
        path = f"clutter.{name}"
        if not isinstance(m, Mapping):
            raise _fail(source, path, "expected a mapping")
        props, states = _props_states(m, source, path)
        shape = m.get("shape", "box")
        if shape not in ("box", "cylinder", "sphere"):
            raise _fail(source, f"{path}.shape", f"expected box, cylinder or sphere, got {shape!r}")
        colors = m.get("colors") or [[0.6, 0.6, 0.6]]
        clutter[str(name)] = ClutterType(
            str(name), _vec(m.get("size"), 3, source, f"{path}.size"), shape, props, states,  # type: ignore[arg-type]
            tuple(_vec(c, 3, source, f"{path}.colors[{i}]", False) for i, c in enumerate(colors)),  # type: ignore[misc]
            bool(m.get("open_top")), bool(m.get("door")))
    rooms: dict[str, RoomKind] = {}
    for name, m in (doc.get("rooms") or {}).items():
        path = f"rooms.{name}"
        if not isinstance(m, Mapping):
            raise _fail(source, path, "expected a mapping")
        size = m.get("size")
        if not isinstance(size, list) or len(size) != 2:
            raise _fail(source, f"{path}.size", f"expected [[xmin, xmax], [ymin, ymax]], got {size!r}")
        rng = tuple(_vec(s, 2, source, f"{path}.size[{i}]") for i, s in enumerate(size))
        if any(lo > hi or hi > c for (lo, hi), c in zip(rng, CELL_M)):
            raise _fail(source, f"{path}.size", f"expected ranges within {CELL_M} m, got {size!r}")
        for key, table in (("furniture", furniture), ("clutter", clutter)):
            for i, t in enumerate(m.get(key) or []):
                if t not in table:
                    raise _fail(source, f"{path}.{key}[{i}]", f"unknown {key} type {t!r}")
        rooms[str(name)] = RoomKind(str(name), rng, tuple(m.get("furniture") or ()),  # type: ignore[arg-type]
                                    tuple(m.get("clutter") or ()))
    if not rooms:
        raise _fail(source, "rooms", "no room kinds")
    return HouseTypes(rooms, furniture, clutter, source)


@lru_cache(maxsize=4)
def load_house_types(path: str | None = None) -> HouseTypes:
    p = Path(path) if path else data_dir() / "houses" / "types.yaml"
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise SceneError(f"{p}: cannot read: {exc}") from None
    return parse_house_types(load_yaml_text(text, str(p)), str(p))


# --------------------------------------------------------------------------- the house
@dataclass(frozen=True)
class Remembered:
    """An object outside the view, as the robot remembers it."""
    obj: SceneObject
    room: str
    seen_s_ago: float
    support: tuple[str, str] | None = None      # (relation, other id): ("on top of", "Table_3")


@dataclass(frozen=True)
class House:
    scene: Scene                    # the whole house: every object, rooms declared
    view_room: str                  # the room the camera renders
    view_scene: Scene               # what is rendered: the view room's objects and the people
    seed: int = 0
    _memory: list = field(default_factory=list, compare=False, repr=False)

    @property
    def size(self) -> int:
        return len(self.scene.objects)

    def view(self) -> Scene:
        return self.view_scene

    def memory(self) -> list[Remembered]:
        """Every object outside the view, with its room, age and support (computed once)."""
        if not self._memory:
            self._memory.extend(_memory_of(self))
        return list(self._memory)


def _age(seed: int, obj_id: str) -> float:
    u = (zlib.crc32(f"{seed}:{obj_id}".encode()) & 0xFFFFFF) / float(0xFFFFFF)
    return round(AGE_S[0] + u * (AGE_S[1] - AGE_S[0]), 1)


def _memory_of(house: House) -> list[Remembered]:
    in_view = {o.id for o in house.view_scene.objects}
    scene = house.scene
    objs = [o for o in scene.objects if o.id not in in_view]
    boxes = {o.id: true_box(o) for o in scene.objects}
    grid = _Grid(list(scene.objects), boxes)
    out = []
    for o in objs:
        lo, _ = boxes[o.id]
        support = None
        if lo[2] > 0.03:
            for i in grid.at(o.center[0], o.center[1]):
                s = scene.objects[i]
                if s.id == o.id:
                    continue
                slo, shi = boxes[s.id]
                if not (slo[0] <= o.center[0] <= shi[0] and slo[1] <= o.center[1] <= shi[1]):
                    continue
                if abs(lo[2] - shi[2]) <= 0.03:
                    support = ("on top of", s.id)
                    break
                if (s.open_top or s.door) and slo[2] <= o.center[2] <= shi[2]:
                    support = ("inside", s.id)
        out.append(Remembered(o, scene.room_at(o.center[0], o.center[1]) or "", _age(house.seed, o.id), support))
    return out


# --------------------------------------------------------------------------- generation
class _Ids:
    def __init__(self, used: set[str]):
        self.used = set(used)
        self.next: dict[str, int] = {}
        for i in used:
            m = _ID.match(i)
            if m:
                self.next[m.group(1)] = max(self.next.get(m.group(1), 1), int(m.group(2)) + 1)

    def new(self, typ: str) -> str:
        n = self.next.get(typ, 1)
        while f"{typ}_{n}" in self.used:
            n += 1
        self.next[typ] = n + 1
        oid = f"{typ}_{n}"
        self.used.add(oid)
        return oid


def _draw_states(states: Mapping[str, tuple[bool, ...]], rng: random.Random) -> dict[str, bool]:
    return {k: rng.choice(v) for k, v in states.items()}


def _free(rect, taken, clearance: float = CLEARANCE_M) -> bool:
    x0, y0, x1, y1 = rect
    return all(x1 + clearance <= a0 or a1 + clearance <= x0 or y1 + clearance <= b0 or b1 + clearance <= y0
               for a0, b0, a1, b1 in taken)


def _furnish(kind: RoomKind, types: HouseTypes, room: Room, rng: random.Random, ids: _Ids) -> list[SceneObject]:
    """Furniture along the walls (door facing the room), tables in the middle."""
    (x0, y0), (x1, y1) = room.min, room.max
    taken: list[tuple[float, float, float, float]] = []
    out = []
    for name in kind.furniture:
        f = types.furniture[name]
        sx, sy, sz = f.size
        spots = []
        if f.middle:
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            spots.append((cx, cy, sx, sy, None))
        else:
            walls = [("S", "+y"), ("N", "-y"), ("W", "+x"), ("E", "-x")]
            rng.shuffle(walls)
            for wall, face in walls:
                if wall in ("S", "N"):
                    y = y0 + 0.05 + sy / 2 if wall == "S" else y1 - 0.05 - sy / 2
                    xs = [x0 + 0.1 + sx / 2 + k * 0.25 for k in range(int((x1 - x0 - sx - 0.2) / 0.25) + 1)]
                    spots += [(x, y, sx, sy, face) for x in xs]
                else:
                    x = x0 + 0.05 + sy / 2 if wall == "W" else x1 - 0.05 - sy / 2
                    ys = [y0 + 0.1 + sx / 2 + k * 0.25 for k in range(int((y1 - y0 - sx - 0.2) / 0.25) + 1)]
                    spots += [(x, y, sy, sx, face) for y in ys]
        for cx, cy, w, d, face in spots:
            rect = (cx - w / 2, cy - d / 2, cx + w / 2, cy + d / 2)
            if rect[0] < x0 or rect[1] < y0 or rect[2] > x1 or rect[3] > y1 or not _free(rect, taken):
                continue
            taken.append(rect)
            out.append(SceneObject(
                id=ids.new(name), type=name, shape="box", center=(round(cx, 3), round(cy, 3), sz / 2),
                size=(round(w, 3), round(d, 3), sz), open_top=f.open_top,
                door=(face or "+y") if f.door else None, color=f.color, properties=frozenset(f.properties),
                state=_draw_states(f.states, rng)))
            break
    return out


def _pack(area: tuple[float, float, float, float], z: float, max_h: float, kinds: list[ClutterType],
          count: int, rng: random.Random, ids: _Ids) -> list[SceneObject]:
    """Shelf packing of ``count`` things drawn from ``kinds`` on a rectangle at height z."""
    ax0, ay0, ax1, ay1 = area
    out: list[SceneObject] = []
    x, y, row_d = ax0, ay0, 0.0
    tries = 0
    while len(out) < count and tries < 4 * count + 8:
        tries += 1
        c = rng.choice(kinds)
        sx, sy, sz = c.size
        if sz > max_h or sx > ax1 - ax0 or sy > ay1 - ay0:
            continue
        if x + sx > ax1:
            x, y, row_d = ax0, y + row_d + GAP_M, 0.0
        if y + sy > ay1:
            break
        out.append(SceneObject(
            id=ids.new(c.name), type=c.name, shape=c.shape,
            center=(round(x + sx / 2, 4), round(y + sy / 2, 4), round(z + sz / 2 + 0.002, 4)),
            size=c.size, open_top=c.open_top, door="+x" if c.door else None, color=rng.choice(c.colors),
            properties=frozenset(c.properties), state=_draw_states(c.states, rng)))
        x += sx + GAP_M
        row_d = max(row_d, sy)
    return out


def _clutter(kind: RoomKind, types: HouseTypes, furniture: list[SceneObject], rng: random.Random,
             ids: _Ids) -> list[SceneObject]:
    kinds = [types.clutter[c] for c in kind.clutter]
    out: list[SceneObject] = []
    if not kinds:
        return out
    for f in furniture:
        ft = types.furniture[f.type]
        (lx, ly, lz), (hx, hy, hz) = (tuple(float(x) for x in v) for v in true_box(f))
        if ft.surface:
            out += _pack((lx + 0.03, ly + 0.03, hx - 0.03, hy - 0.03), hz, 0.6, kinds, rng.randint(2, 7), rng, ids)
        if ft.holds:
            inner = (lx + 0.05, ly + 0.05, hx - 0.05, hy - 0.05)
            out += _pack(inner, lz + 0.05, hz - lz - 0.12, kinds, rng.randint(1, 5), rng, ids)
    return out


def _rooms_grid(n_rooms: int, origin: tuple[float, float]) -> list[tuple[float, float]]:
    cols = max(1, math.ceil(math.sqrt(n_rooms)))
    return [(origin[0] + (k % cols) * CELL_M[0], origin[1] + (k // cols) * CELL_M[1]) for k in range(n_rooms)]


def _fill(n_objects: int, types: HouseTypes, rng: random.Random, ids: _Ids, origin: tuple[float, float],
          used_names: set[str]) -> tuple[list[Room], list[SceneObject]]:
    """Rooms with furniture and clutter until ``n_objects`` objects (exactly)."""
    rooms: list[Room] = []
    objects: list[SceneObject] = []
    kinds = sorted(types.rooms)
    estimate = 40
    cells = _rooms_grid(max(1, n_objects // estimate * 2 + 2), origin)
    k = 0
    counter: dict[str, int] = {}
    while len(objects) < n_objects:
        if k >= len(cells):
            cells = _rooms_grid(len(cells) * 2, origin)
        cx, cy = cells[k]
        k += 1
        kind = types.rooms[kinds[rng.randrange(len(kinds))]]
        w = rng.uniform(*kind.size[0])
        d = rng.uniform(*kind.size[1])
        counter[kind.name] = counter.get(kind.name, 0) + 1
        name = f"{kind.name}_{counter[kind.name]}"
        while room_key(name) in used_names:
            counter[kind.name] += 1
            name = f"{kind.name}_{counter[kind.name]}"
        used_names.add(room_key(name))
        room = Room(name, (round(cx, 2), round(cy, 2)), (round(cx + w, 2), round(cy + d, 2)))
        furniture = _furnish(kind, types, room, rng, ids)
        clutter = _clutter(kind, types, furniture, rng, ids)
        room_objs = (furniture + clutter)[:n_objects - len(objects)]   # furniture first: clutter never floats
        rooms.append(room)
        objects += room_objs
    return rooms, objects


def generate_house(n_objects: int, seed: int = 0, types: HouseTypes | None = None,
                   name: str = "house") -> House:
    """A house of exactly ``n_objects`` objects; the robot stands in the first room, facing +x."""
    if not isinstance(n_objects, int) or n_objects < 1:
        raise ValueError(f"a house needs at least one object, got {n_objects!r}")
    types = types or load_house_types()
    rng = random.Random(seed)
    ids = _Ids(set())
    rooms, objects = _fill(n_objects, types, rng, ids, (0.0, 0.0), set())
    first = rooms[0]
    robot_xy = ((first.min[0] + first.max[0]) / 2 - 1.0, (first.min[1] + first.max[1]) / 2)
    doc = {"format": "raider-scene/1", "name": name,
           "robot": {"pose": [round(robot_xy[0], 3), round(robot_xy[1], 3), 0.0]}, "objects": []}
    base = parse_scene(doc, f"<house {name}>")
    scene = base.replace(objects=tuple(objects), rooms=tuple(rooms))
    view = scene.replace(objects=tuple(o for o in objects if first.contains(o.center[0], o.center[1])), rooms=())
    return House(scene, first.name, view, seed)


def embed_case(case_scene: Scene, n_objects: int, seed: int = 0, types: HouseTypes | None = None,
               margin_m: float = 0.6) -> House:
    """The case's world as one room of a house of ``n_objects`` objects (at least the case's
    own); the case's coordinates, ids and object order are kept, so its view renders as before."""
    types = types or load_house_types()
    ents = list(case_scene.entities)
    xs = [e.center[0] + s * e.size[0] / 2 for e in ents for s in (-1, 1)] + [case_scene.robot.x]
    ys = [e.center[1] + s * e.size[1] / 2 for e in ents for s in (-1, 1)] + [case_scene.robot.y]
    lo = (math.floor((min(xs) - margin_m) * 10) / 10, math.floor((min(ys) - margin_m) * 10) / 10)
    hi = (math.ceil((max(xs) + margin_m) * 10) / 10, math.ceil((max(ys) + margin_m) * 10) / 10)
    ids_in_case = {e.id for e in ents}
    room_name = case_scene.name if room_key(case_scene.name) not in {room_key(i) for i in ids_in_case} \
        else f"{case_scene.name}_room"
    case_room = Room(room_name, lo, hi)
    extra = max(0, n_objects - len(case_scene.objects))
    rooms, objects, memory = _distractors(extra, seed, case_scene.name, types, frozenset(ids_in_case),
                                          (hi[0] + 0.5, lo[1]), room_name)
    scene = case_scene.replace(objects=case_scene.objects + objects, rooms=(case_room, *rooms))
    house = House(scene, room_name, case_scene, seed)
    if memory:
        house._memory.extend(memory)
    return house


@lru_cache(maxsize=8)
def _distractors(extra: int, seed: int, name: str, types: HouseTypes, used_ids: frozenset[str],
                 origin: tuple[float, float], room_name: str) -> tuple[tuple[Room, ...], tuple[SceneObject, ...],
                                                                    tuple[Remembered, ...]]:
    """The rooms around an embedded case and the robot's memory of them (cached: the cases of
    one scene share their distractors)."""
    if extra == 0:
        return (), (), ()
    rng = random.Random(zlib.crc32(f"{seed}:{name}".encode()))
    rooms, objects = _fill(extra, types, rng, _Ids(set(used_ids)), origin,
                           {room_key(room_name)} | {room_key(i) for i in used_ids})
    probe = House(Scene(name=name, robot=Robot(), camera=Camera(), objects=tuple(objects), rooms=tuple(rooms)),
                  room_name, Scene(name=name, robot=Robot(), camera=Camera(), objects=()), seed)
    return tuple(rooms), tuple(objects), tuple(probe.memory())


# --------------------------------------------------------------------------- files
def house_to_dict(house: House) -> dict[str, Any]:
    doc = scene_to_dict(house.scene)
    doc["house"] = {"view_room": house.view_room, "seed": house.seed}
    return doc


def dump_house(house: House, path: str | Path | None = None) -> str:
    """The house as a scene file: JSON, one object per line (JSON is YAML, so the file reads as
    any ``*.scene.yaml``; JSON keeps a house of 10,000 objects quick to load)."""
    doc = house_to_dict(house)
    head = {k: v for k, v in doc.items() if k not in ("objects", "people", "rooms")}
    lines = ["{" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in head.items()) + ","]
    for key in ("rooms", "objects", "people"):
        items = doc.get(key) or []
        body = ",\n".join("  " + json.dumps(item) for item in items)
        lines.append(f'"{key}": [\n{body}\n]' + ("," if key != "people" else ""))
    text = "\n".join(lines) + "}\n"
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


def house_from_scene(scene: Scene) -> House:
    """A house from a scene with rooms: the view room is the ``house.view_room`` key, else
    the room of the robot; the view renders that room's objects and the people."""
    src = scene.source
    meta = scene.extra.get("house") or {}
    if not isinstance(meta, Mapping):
        raise SceneError(f"{src}: house: expected a mapping with view_room and seed, got {meta!r}")
    if not scene.rooms:
        raise SceneError(f"{src}: rooms: a house needs rooms (docs/benchmark-format.md, Rooms)")
    view_room = meta.get("view_room") or scene.room_at(scene.robot.x, scene.robot.y)
    room = scene.room(str(view_room)) if view_room else None
    if room is None:
        raise SceneError(f"{src}: house.view_room: {view_room!r} is not a room of the scene"
                         if view_room else f"{src}: robot.pose: the robot stands in no room")
    seed = meta.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SceneError(f"{src}: house.seed: expected an integer, got {seed!r}")
    view = scene.replace(objects=tuple(o for o in scene.objects if room.contains(o.center[0], o.center[1])
                                       or o.id == scene.robot.holding), rooms=())
    return House(scene, room.name, view, seed)


def load_house(path: str | Path) -> House:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SceneError(f"{p}: no such house file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SceneError(f"{p}: cannot read: {exc}") from None
    try:
        doc = json.loads(text)              # houses are written as JSON (fast); any YAML is read too
    except ValueError:
        doc = load_yaml_text(text, str(p))  # names the line and column of a syntax error
    return house_from_scene(parse_scene(doc, str(p)))


def memory_entries(house: House) -> list[dict[str, Any]]:
    """The house's memory as plain entries for ``SceneGraph.remember`` (id, type, center, size,
    state, properties, room, seen_s_ago, last_relation)."""
    return [{"id": r.obj.id, "type": r.obj.type, "center": list(r.obj.center), "size": list(r.obj.size),
             "state": dict(r.obj.state), "properties": sorted(r.obj.properties), "room": r.room,
             "seen_s_ago": r.seen_s_ago, "last_relation": list(r.support) if r.support else None}
            for r in house.memory()]
