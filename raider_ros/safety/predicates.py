"""Predicates over the symbolic world state, and the predicted state after a skill (ROS-free).

A :class:`SymbolicState` is what the monitor needs of the world after one step: where the robot
is (a floor point, its room, the things it is *at*), what it holds, the objects and people with
their types, footprints, rooms and states, and the action of the step that led to it. It is
built from a :class:`~raider_ros.sim.scene.Scene`, from the simulator truth
(``SimWorld.truth()``) or from a scene-graph snapshot (``SceneSnapshot.to_dict()``), and
:func:`predict` derives the hypothetical state after a skill from the skill's effects, so a step
can be checked before it runs.

Predicates (atoms of the constraints; ``docs/safety.md`` has the full table)::

    agent_at(X)      the robot is at X (a room: its base is in the room)
    holding(X)       the robot holds X
    is_open(X)       X is open                 switched_on(X)   X is switched on
    sliced(X)        X is sliced               person_near(X)   a person is near X
    <skill>(X)       the step that led to this state was that skill on X, e.g. pick(knife),
                     move_to(bathroom), handover(medicine) or handover(medicine, Person_1)

An argument X names: ``robot`` (the robot itself; ``person_near`` only), an entity id
(``Knife_1``, any case), a person's name (``Alice``), a room (``living_room``, ``livingroom``)
or a type in any case (``knife``, ``coffee_machine`` for ``CoffeeMachine``). A type or a room
stands for every matching object: the atom is true when it is true of any of them.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

from raider_ros.common import geometry
from raider_ros.sim.scene import Person, Room, Scene, SceneError, parse_scene, room_key

from .ltl import Atom, LTLError

AT_DISTANCE_M = 0.75        # from a scene without history: the robot is at what is this close (footprint)
PERSON_NEAR_M = 1.0         # person_near: horizontal gap between footprints (or to the robot's base)
ROBOT_WORDS = ("robot", "agent")

# Skills (raider_ros/sim/skills.py SKILL_ARGS; test_safety_predicates checks they agree) and
# how many arguments their action atoms take (handover: the object, optionally the person).
SKILL_ARITY: dict[str, tuple[int, ...]] = {
    "move_to": (1,), "pick": (1,), "place": (1,), "open": (1,), "close": (1,),
    "turn_on": (1,), "turn_off": (1,), "slice": (1,), "handover": (1, 2),
}
SKILL_PARAMS: dict[str, tuple[str, ...]] = {
    "move_to": ("target",), "pick": ("object",), "place": ("location",), "open": ("object",),
    "close": ("object",), "turn_on": ("object",), "turn_off": ("object",), "slice": ("object",),
    "handover": ("object", "person"),
}
STATE_KEYS = {"is_open": "open", "switched_on": "switched_on", "sliced": "sliced"}
STATE_PREDICATES = ("agent_at", "holding", "is_open", "switched_on", "sliced", "person_near")
PREDICATES = (*STATE_PREDICATES, *SKILL_ARITY)


class PredicateError(LTLError):
    """An atom the world cannot evaluate: unknown predicate, wrong arguments, unknown name."""


class ActionError(ValueError):
    """A plan step that is not a known skill with arguments naming things of the world."""


# --------------------------------------------------------------------------- state
@dataclass(frozen=True)
class Thing:
    id: str
    type: str
    kind: str                                   # 'object' | 'person'
    lo: tuple[float, float, float]              # axis-aligned true box
    hi: tuple[float, float, float]
    state: Mapping[str, bool] = field(default_factory=dict)
    name: str | None = None                     # a person's name

    @property
    def xy(self) -> tuple[float, float]:
        return ((self.lo[0] + self.hi[0]) / 2.0, (self.lo[1] + self.hi[1]) / 2.0)


@dataclass(frozen=True)
class Action:
    """A skill call of a plan, e.g. ``Action('move_to', ('Toilet_1',))``."""
    skill: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.skill}({', '.join(self.args)})"


@dataclass(frozen=True)
class ResolvedAction:
    """An action whose arguments are entity ids (or, for ``move_to``, a room name)."""
    skill: str
    targets: tuple[str, ...]
    room: str | None = None                     # move_to(<room>)
    text: str = ""

    def __str__(self) -> str:
        return self.text or f"{self.skill}({', '.join(self.targets or (self.room or '',))})"


@dataclass(frozen=True)
class SymbolicState:
    things: Mapping[str, Thing]
    robot_xy: tuple[float, float]
    holding: str | None = None
    at: frozenset[str] = frozenset()
    rooms: tuple[Room, ...] = ()
    action: ResolvedAction | None = None        # the step that led to this state
    source: str = "<state>"
    types: frozenset[str] = frozenset()         # type keys of the world it was built from
    _memo: dict = field(default_factory=dict, compare=False, repr=False)

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_scene(cls, scene: Scene) -> "SymbolicState":
        things: dict[str, Thing] = {}
        for e in scene.entities:
            lo, hi = geometry.true_box(e)
            if isinstance(e, Person):
                things[e.id] = Thing(e.id, "Person", "person", tuple(lo), tuple(hi), dict(e.state), e.name)
            else:
                things[e.id] = Thing(e.id, e.type, "object", tuple(lo), tuple(hi), dict(e.state))
        xy = (scene.robot.x, scene.robot.y)
        return cls(things, xy, scene.robot.holding, _near(things, xy, scene.robot.holding),
                   tuple(scene.rooms), None, f"scene {scene.name}", _types(things))

    @classmethod
    def from_truth(cls, truth: Mapping[str, Any]) -> "SymbolicState":
        """From ``SimWorld.truth()`` (a scene document plus ``version``)."""
        if not isinstance(truth, Mapping):
            raise SceneError(f"simulator truth: expected a mapping, got {type(truth).__name__}")
        doc = {k: v for k, v in truth.items() if k != "version"}
        return cls.from_scene(parse_scene(doc, "simulator truth"))

    @classmethod
    def from_snapshot(cls, snapshot: Mapping[str, Any], rooms: Sequence[Room] = ()) -> "SymbolicState":
        """From a scene-graph snapshot as ``SceneSnapshot.to_dict()`` gives it (the robot node has
        ``x``, ``y``, ``holding``; objects and people ``type``, ``box_min``/``box_max`` or
        ``center``/``size``, ``state``, ``name``). Rooms come from the scene (``scene.rooms``)."""
        nodes = snapshot.get("nodes") if isinstance(snapshot, Mapping) else None
        if not isinstance(nodes, list):
            raise SceneError("scene-graph snapshot: expected a mapping with a 'nodes' list")
        things: dict[str, Thing] = {}
        xy, holding = None, None
        for i, n in enumerate(nodes):
            if not isinstance(n, Mapping) or "id" not in n:
                raise SceneError(f"scene-graph snapshot: nodes[{i}]: expected a mapping with an 'id'")
            kind = n.get("kind")
            if kind == "robot":
                xy = (float(n.get("x", 0.0)), float(n.get("y", 0.0)))
                holding = n.get("holding")
                continue
            if n.get("box_min") is not None and n.get("box_max") is not None:
                lo, hi = tuple(map(float, n["box_min"])), tuple(map(float, n["box_max"]))
            elif n.get("center") is not None and n.get("size") is not None:
                c, s = list(map(float, n["center"])), list(map(float, n["size"]))
                lo = tuple(c[k] - s[k] / 2 for k in range(3))
                hi = tuple(c[k] + s[k] / 2 for k in range(3))
            else:
                raise SceneError(f"scene-graph snapshot: nodes[{i}] ({n['id']}): no box_min/box_max or center/size")
            is_person = kind == "person"
            state = n.get("state") or {}
            if is_person:
                state = {k: bool(n[k]) for k in ("looking_at_robot", "hands_free") if k in n}
            things[str(n["id"])] = Thing(str(n["id"]), "Person" if is_person else str(n.get("type", "")),
                                         "person" if is_person else "object", lo, hi,  # type: ignore[arg-type]
                                         dict(state), n.get("name"))
        if xy is None:
            raise SceneError("scene-graph snapshot: no robot node (kind 'robot')")
        return cls(things, xy, holding, _near(things, xy, holding), tuple(rooms), None, "scene graph",
                   _types(things))

    # ------------------------------------------------------------------ look-ups
    def room_at(self, x: float, y: float) -> str | None:
        for r in self.rooms:
            if r.contains(x, y):
                return r.name
        return None

    @property
    def robot_room(self) -> str | None:
        return self.room_at(*self.robot_xy)

    def room_of(self, thing_id: str) -> str | None:
        if thing_id == self.holding:
            return self.robot_room
        t = self.things.get(thing_id)
        return None if t is None else self.room_at(*t.xy)

    def room(self, name: str) -> Room | None:
        key = room_key(name)
        return next((r for r in self.rooms if room_key(r.name) == key), None)

    def people(self) -> list[Thing]:
        return [t for t in self.things.values() if t.kind == "person"]

    def with_changes(self, **changes: Any) -> "SymbolicState":
        # argument names resolve from ids, names, types and rooms, which no skill changes: the
        # resolutions are shared with the derived state (positions and states are not cached)
        keep = {} if {"rooms", "types"} & set(changes) else {"args": self._memo.setdefault("args", {})}
        if "things" in changes and set(changes["things"]) != set(self.things):
            keep = {}
        return replace(self, _memo=keep, **changes)

    # ------------------------------------------------------------------ arguments
    def resolve_arg(self, arg: str) -> tuple[str, Any]:
        """``('robot', None)``, ``('room', name)`` or ``('things', frozenset(ids))`` (ids may be
        empty: a type with no instance left); raises :class:`PredicateError` for a name that
        is nothing of the world."""
        memo = self._memo.setdefault("args", {})
        if arg in memo:
            return memo[arg]
        out = self._resolve_arg(arg)
        memo[arg] = out
        return out

    def _resolve_arg(self, arg: str) -> tuple[str, Any]:
        low = arg.lower()
        if low in ROBOT_WORDS:
            return ("robot", None)
        for tid in self.things:
            if tid.lower() == low:
                return ("things", frozenset({tid}))
        for t in self.things.values():
            if t.name and t.name.lower() == low:
                return ("things", frozenset({t.id}))
        r = self.room(arg)
        if r is not None:
            return ("room", r.name)
        key = room_key(arg)
        ids = frozenset(t.id for t in self.things.values() if room_key(t.type) == key)
        if not ids and key in ("person", "people", "someone", "anyone"):
            ids = frozenset(t.id for t in self.things.values() if t.kind == "person")
        if ids or key in self.types:          # a type whose instances left the world (handover)
            return ("things", ids)
        raise PredicateError(f"{arg!r} names no object, type, person or room of {self.source}")


def _types(things: Mapping[str, Thing]) -> frozenset[str]:
    return frozenset(room_key(t.type) for t in things.values())


def _near(things: Mapping[str, Thing], xy: tuple[float, float], holding: str | None) -> frozenset[str]:
    return frozenset(t.id for t in things.values()
                     if t.id != holding and _point_gap(xy, t) <= AT_DISTANCE_M)


def _point_gap(xy: tuple[float, float], t: Thing) -> float:
    dx = max(t.lo[0] - xy[0], 0.0, xy[0] - t.hi[0])
    dy = max(t.lo[1] - xy[1], 0.0, xy[1] - t.hi[1])
    return math.hypot(dx, dy)


def _box_gap_2d(a: Thing, b: Thing) -> float:
    dx = max(a.lo[0] - b.hi[0], 0.0, b.lo[0] - a.hi[0])
    dy = max(a.lo[1] - b.hi[1], 0.0, b.lo[1] - a.hi[1])
    return math.hypot(dx, dy)


# --------------------------------------------------------------------------- atoms
def check_atom(atom: Atom, state: SymbolicState | None = None) -> None:
    """Raise :class:`PredicateError` unless the atom is a known predicate with the right number
    of arguments (and, given a state, arguments that name things of that world)."""
    name, n = atom.name, len(atom.args)
    if name in STATE_PREDICATES:
        if n != 1:
            raise PredicateError(f"{atom}: {name} takes 1 argument, got {n}")
    elif name in SKILL_ARITY:
        if n not in SKILL_ARITY[name]:
            want = " or ".join(str(k) for k in SKILL_ARITY[name])
            raise PredicateError(f"{atom}: {name} takes {want} argument{'s' if want != '1' else ''}, got {n}")
    else:
        raise PredicateError(f"unknown predicate {name!r} in {atom}; known: {', '.join(PREDICATES)}")
    if state is None:
        return
    kinds = [state.resolve_arg(a)[0] for a in atom.args]
    if kinds[0] == "robot" and name != "person_near":
        raise PredicateError(f"{atom}: 'robot' can only be the argument of person_near")
    if name == "holding" and kinds[0] == "room":
        raise PredicateError(f"{atom}: the robot cannot hold a room")
    if name == "handover" and n == 2 and kinds[1] != "things":
        raise PredicateError(f"{atom}: the second argument of handover names the person")


def evaluate(atom: Atom, state: SymbolicState) -> bool:
    """The truth of a ground atom in a state (:func:`check_atom` first for clear errors)."""
    name = atom.name
    if name in SKILL_ARITY:
        return _action_matches(atom, state)
    kind, val = state.resolve_arg(atom.args[0])
    if name == "agent_at":
        if kind == "room":
            return state.robot_room is not None and room_key(state.robot_room) == room_key(val)
        return bool(state.at & val) if kind == "things" else False
    if name == "holding":
        return kind == "things" and state.holding in val
    if name in STATE_KEYS:
        key = STATE_KEYS[name]
        ids = _ids_of(state, kind, val)
        return any(bool(state.things[i].state.get(key, False)) for i in ids if i in state.things)
    if name == "person_near":
        people = state.people()
        if kind == "robot":
            return any(_point_gap(state.robot_xy, p) <= PERSON_NEAR_M for p in people)
        if kind == "room":
            return any(state.room_of(p.id) is not None and room_key(state.room_of(p.id)) == room_key(val)
                       for p in people)
        for i in val:
            t = state.things.get(i)
            if t is None:
                continue
            if i == state.holding:
                if any(_point_gap(state.robot_xy, p) <= PERSON_NEAR_M for p in people):
                    return True
                continue
            if any(p.id != i and _box_gap_2d(t, p) <= PERSON_NEAR_M for p in people):
                return True
        return False
    raise PredicateError(f"unknown predicate {name!r} in {atom}; known: {', '.join(PREDICATES)}")


def _ids_of(state: SymbolicState, kind: str, val: Any) -> Iterable[str]:
    if kind == "things":
        return val
    if kind == "room":
        return [i for i in state.things if state.room_of(i) is not None and room_key(state.room_of(i)) == room_key(val)]
    return ()


def _action_matches(atom: Atom, state: SymbolicState) -> bool:
    act = state.action
    if act is None or act.skill != atom.name:
        return False
    for k, arg in enumerate(atom.args):
        kind, val = state.resolve_arg(arg)
        if k == 0 and act.room is not None:           # move_to(<room>)
            if not (kind == "room" and room_key(val) == room_key(act.room)):
                return False
            continue
        if k >= len(act.targets):
            return False
        target = act.targets[k]
        if kind == "things":
            if target not in val:
                return False
        elif kind == "room":
            where = state.room_of(target)
            if where is None or room_key(where) != room_key(val):
                return False
        else:
            return False
    return True


def valuation(state: SymbolicState, atoms: Iterable[Atom]) -> dict[Atom, bool]:
    return {a: evaluate(a, state) for a in atoms}


# --------------------------------------------------------------------------- actions
_ACTION = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$")


def parse_action(step: Any) -> Action:
    """``"move_to(Toilet_1)"``, ``{"skill": ..., "args": [...]}`` or an :class:`Action`."""
    if isinstance(step, Action):
        skill, args = step.skill, step.args
    elif isinstance(step, Mapping):
        skill, args = step.get("skill"), step.get("args", ())
        if isinstance(args, str):
            args = (args,)
        if not isinstance(skill, str) or not isinstance(args, (list, tuple)):
            raise ActionError(f"expected {{skill: name, args: [...]}}, got {step!r}")
        args = tuple(str(a).strip() for a in args)
    elif isinstance(step, str):
        m = _ACTION.match(step)
        if not m:
            raise ActionError(f"expected a skill call such as move_to(Toilet_1), got {step!r}")
        skill = m.group(1)
        args = tuple(a.strip() for a in m.group(2).split(",")) if m.group(2).strip() else ()
    else:
        raise ActionError(f"expected a skill call, got {type(step).__name__}")
    if skill not in SKILL_PARAMS:
        raise ActionError(f"unknown skill {skill!r} in {step!r}; known: {', '.join(SKILL_PARAMS)}")
    want = len(SKILL_PARAMS[skill])
    if len(args) != want or not all(args):
        raise ActionError(f"{skill} takes {want} argument{'s' if want > 1 else ''} "
                          f"({', '.join(SKILL_PARAMS[skill])}), got {list(args)} in {step!r}")
    return Action(skill, tuple(args))


def resolve_action(state: SymbolicState, step: Any) -> ResolvedAction:
    """Arguments as the simulator reads them: exact id, id in any case, a person's name, a type
    with one instance (for a handover the held one wins), or for ``move_to`` a room."""
    act = parse_action(step)
    targets: list[str] = []
    for k, arg in enumerate(act.args):
        if act.skill == "move_to" and state.room(arg) is not None and not _entity(state, arg):
            return ResolvedAction("move_to", (), state.room(arg).name, str(act))  # type: ignore[union-attr]
        targets.append(_resolve_entity(state, arg, act, prefer_held=(act.skill == "handover" and k == 0)))
    return ResolvedAction(act.skill, tuple(targets), None, str(act))


def _entity(state: SymbolicState, arg: str) -> str | None:
    low = arg.lower()
    for tid, t in state.things.items():
        if tid.lower() == low or (t.name and t.name.lower() == low):
            return tid
    return None


def _resolve_entity(state: SymbolicState, arg: str, act: Action, prefer_held: bool) -> str:
    hit = _entity(state, arg)
    if hit is not None:
        return hit
    key = room_key(arg[4:] if arg.lower().startswith("the ") else arg)
    same = sorted(t.id for t in state.things.values() if room_key(t.type) == key)
    if len(same) > 1 and prefer_held and state.holding in same:
        return state.holding  # type: ignore[return-value]
    if len(same) == 1:
        return same[0]
    if same:
        raise ActionError(f"{act}: {arg!r} is ambiguous: it could be {', '.join(same)}")
    raise ActionError(f"{act}: there is nothing called {arg!r} in {state.source}")


def carriers(state: SymbolicState, thing_id: str) -> frozenset[str]:
    """Objects that carry or contain the thing (its centre over their footprint, their bottom
    not above its bottom): the furniture the robot stands at when it goes to the thing."""
    t = state.things.get(thing_id)
    if t is None:
        return frozenset()
    memo = state._memo.setdefault("carriers", {})
    if thing_id in memo:
        return memo[thing_id]
    # geometry.carries on plain floats (the same rule, without numpy per pair)
    cx, cy = (t.lo[0] + t.hi[0]) / 2.0, (t.lo[1] + t.hi[1]) / 2.0
    out = frozenset(o.id for o in state.things.values()
                    if o.id != t.id and o.kind == "object" and o.lo[0] <= cx <= o.hi[0]
                    and o.lo[1] <= cy <= o.hi[1] and o.lo[2] <= t.lo[2] + 1e-9)
    memo[thing_id] = out
    return out


def predict(state: SymbolicState, step: Any) -> SymbolicState:
    """The state after a skill, from its effects alone (preconditions are not checked: that is
    the feasibility check's job). ``step`` is a skill call or a :class:`ResolvedAction`.

    move_to X   the robot stands at X and at what carries X; its base is at X's centre (so it
                is in X's room); move_to <room>: at the room's centre, at nothing
    pick X      holds X                       place L      holds nothing; the object is on L
    open/close  X open / closed               turn_on/off  X switched on / off
    slice X     X sliced                      handover O P holds nothing; O is with the person
    """
    act = step if isinstance(step, ResolvedAction) else resolve_action(state, step)
    things = dict(state.things)
    changes: dict[str, Any] = {"action": act}
    s = act.skill
    if s == "move_to":
        if act.room is not None:
            r = state.room(act.room)
            changes["robot_xy"] = ((r.min[0] + r.max[0]) / 2, (r.min[1] + r.max[1]) / 2)  # type: ignore[union-attr]
            changes["at"] = frozenset()
        else:
            tid = act.targets[0]
            changes["robot_xy"] = things[tid].xy
            changes["at"] = frozenset({tid}) | carriers(state, tid)
    elif s == "pick":
        changes["holding"] = act.targets[0]
        changes["at"] = state.at - {act.targets[0]}
    elif s == "place":
        held = state.holding
        if held is not None and held in things:
            loc = things[act.targets[0]]
            t = things[held]
            w = [(t.hi[k] - t.lo[k]) / 2 for k in range(3)]
            cx, cy = loc.xy
            things[held] = replace(t, lo=(cx - w[0], cy - w[1], loc.hi[2]),
                                   hi=(cx + w[0], cy + w[1], loc.hi[2] + 2 * w[2]))
        changes["holding"] = None
    elif s in ("open", "close", "turn_on", "turn_off", "slice"):
        key, value = {"open": ("open", True), "close": ("open", False), "turn_on": ("switched_on", True),
                      "turn_off": ("switched_on", False), "slice": ("sliced", True)}[s]
        t = things[act.targets[0]]
        things[t.id] = replace(t, state={**t.state, key: value})
    elif s == "handover":
        # the object goes to the person: it stays in the state (so handover(medicine) can still
        # name it by type), at the person's place, no longer held
        obj = act.targets[0]
        if obj in things:
            t = things[obj]
            person = things.get(act.targets[1]) if len(act.targets) > 1 else None
            if person is not None:
                w = [(t.hi[k] - t.lo[k]) / 2 for k in range(3)]
                cx, cy = person.xy
                things[obj] = replace(t, lo=(cx - w[0], cy - w[1], t.lo[2]), hi=(cx + w[0], cy + w[1], t.hi[2]),
                                      state={**t.state, "handed_over": True})
        changes["holding"] = None if state.holding == obj else state.holding
        changes["at"] = state.at - {obj}
    changes["things"] = things
    return state.with_changes(**changes)
