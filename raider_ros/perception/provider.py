"""What perception cannot measure from geometry: object states and properties, who people are,
where they look, whether their hands are free, and the robot's own state.

A :class:`Provider` answers those questions by id. Backend ``sim`` (:class:`TruthProvider`)
reads them from the simulator's truth, as the paper read AI2-THOR metadata; a real robot would
plug in classifiers and face recognition behind the same four methods.

Unknown ids raise :class:`KeyError` (the tools turn that into "no information about X").
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol, runtime_checkable


class ProviderError(ValueError):
    """A truth document (or provider request) that cannot be used; the message names the field."""


@dataclass(frozen=True)
class PersonInfo:
    id: str
    name: str | None            # recognised name; None = present but not recognised
    looking_at_robot: bool
    hands_free: bool


@dataclass(frozen=True)
class RobotInfo:
    x: float
    y: float
    yaw_deg: float
    reach: float                # arm reach [m], measured from the camera's optical centre
    holding: str | None         # id of the object in the gripper


@runtime_checkable
class Provider(Protocol):
    def state(self, obj_id: str) -> dict[str, bool]: ...
    def properties(self, obj_id: str) -> list[str]: ...
    def people(self) -> list[PersonInfo]: ...
    def robot(self) -> RobotInfo: ...


# --------------------------------------------------------------------------- sim backend
@dataclass(frozen=True)
class _Truth:
    robot: RobotInfo
    types: dict[str, str]
    states: dict[str, dict[str, bool]]
    props: dict[str, list[str]]
    people: tuple[PersonInfo, ...]
    name: str


def _num(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProviderError(f"truth: {path}: expected a number, got {value!r}")
    return float(value)


def _bool_map(value: Any, path: str) -> dict[str, bool]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ProviderError(f"truth: {path}: expected a mapping of booleans, got {value!r}")
    out = {}
    for k, v in value.items():
        if not isinstance(v, bool):
            raise ProviderError(f"truth: {path}.{k}: expected true or false, got {v!r}")
        out[str(k)] = v
    return out


def parse_truth(truth: Any) -> _Truth:
    """Validate a truth dict in benchmark field names (``SimWorld.truth()``, ``scene_to_dict``)."""
    if not isinstance(truth, Mapping):
        raise ProviderError(f"truth: expected a mapping, got {type(truth).__name__}")
    robot = truth.get("robot")
    if not isinstance(robot, Mapping):
        raise ProviderError(f"truth: robot: expected a mapping, got {robot!r}")
    pose = robot.get("pose", [0.0, 0.0, 0.0])
    if not isinstance(pose, (list, tuple)) or len(pose) != 3:
        raise ProviderError(f"truth: robot.pose: expected [x, y, yaw_deg], got {pose!r}")
    holding = robot.get("holding") or None
    if holding is not None and not isinstance(holding, str):
        raise ProviderError(f"truth: robot.holding: expected an id or null, got {holding!r}")
    info = RobotInfo(*(_num(v, f"robot.pose[{i}]") for i, v in enumerate(pose)),
                     reach=_num(robot.get("reach", 1.1), "robot.reach"), holding=holding)

    types: dict[str, str] = {}
    states: dict[str, dict[str, bool]] = {}
    props: dict[str, list[str]] = {}
    objects = truth.get("objects") or []
    if not isinstance(objects, list):
        raise ProviderError(f"truth: objects: expected a list, got {objects!r}")
    for i, o in enumerate(objects):
        if not isinstance(o, Mapping) or not isinstance(o.get("id"), str):
            raise ProviderError(f"truth: objects[{i}]: expected a mapping with a string id, got {o!r}")
        oid = o["id"]
        types[oid] = str(o.get("type") or oid.rsplit("_", 1)[0])
        states[oid] = _bool_map(o.get("state"), f"objects[{i}] ({oid}).state")
        p = o.get("properties") or []
        if not isinstance(p, (list, tuple, set, frozenset)) or not all(isinstance(x, str) for x in p):
            raise ProviderError(f"truth: objects[{i}] ({oid}).properties: expected a list of names, got {p!r}")
        props[oid] = sorted(p)

    people = []
    raw_people = truth.get("people") or []
    if not isinstance(raw_people, list):
        raise ProviderError(f"truth: people: expected a list, got {raw_people!r}")
    for i, p in enumerate(raw_people):
        if not isinstance(p, Mapping) or not isinstance(p.get("id"), str):
            raise ProviderError(f"truth: people[{i}]: expected a mapping with a string id, got {p!r}")
        st = _bool_map(p.get("state"), f"people[{i}] ({p['id']}).state")
        name = p.get("name") or None
        people.append(PersonInfo(p["id"], str(name) if name is not None else None,
                                 looking_at_robot=st.get("looking_at_robot", False),
                                 hands_free=st.get("hands_free", True)))
    return _Truth(info, types, states, props, tuple(people), str(truth.get("name", "")))


class TruthProvider:
    """Backend ``sim``: answers from the simulator truth; call :meth:`update` on every new truth.

    A new truth is validated first and swapped in whole, so readers never see half an update.
    """

    def __init__(self, truth: Mapping[str, Any] | None = None):
        self._lock = threading.Lock()
        self._truth: _Truth | None = None
        self.version = 0
        if truth is not None:
            self.update(truth)

    @classmethod
    def from_scene(cls, scene: Any) -> "TruthProvider":
        from raider_ros.sim.scene import scene_to_dict
        return cls(scene_to_dict(scene))

    def update(self, truth: Mapping[str, Any]) -> None:
        parsed = parse_truth(truth)
        with self._lock:
            self._truth = parsed
            self.version += 1

    def _t(self) -> _Truth:
        t = self._truth
        if t is None:
            raise ProviderError("sim provider: no simulator truth received yet")
        return t

    def state(self, obj_id: str) -> dict[str, bool]:
        return dict(self._t().states[obj_id])

    def properties(self, obj_id: str) -> list[str]:
        return list(self._t().props[obj_id])

    def object_type(self, obj_id: str) -> str:
        return self._t().types[obj_id]

    def people(self) -> list[PersonInfo]:
        return list(self._t().people)

    def robot(self) -> RobotInfo:
        return self._t().robot

    @property
    def ready(self) -> bool:
        return self._truth is not None


# --------------------------------------------------------------------------- registry
_BACKENDS: dict[str, Callable[..., Provider]] = {"sim": TruthProvider}


def register_provider(name: str, factory: Callable[..., Provider]) -> None:
    _BACKENDS[name] = factory


def make_provider(name: str, *args: Any, **kwargs: Any) -> Provider:
    """Build a provider backend by name (``sim``: ``make_provider("sim", truth_dict)``)."""
    try:
        factory = _BACKENDS[name]
    except KeyError:
        raise ProviderError(f"unknown provider backend {name!r}; known: {', '.join(sorted(_BACKENDS))}") from None
    return factory(*args, **kwargs)
