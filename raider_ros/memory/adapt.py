"""Reusing a stored plan in a new situation: rebinding its ids and checking it still fits.

A lesson's plan names the ids of the interaction it was learned in (``Medicine_1``,
``Glass_1``, ``SideTable_1``). :func:`adapt_plan` rebinds them to the current situation:

1. ids bound to a role (the request's item, person, ...; a recovery's action arguments) take
   the id the current request gives that role;
2. an id that was the carrier of another plan id when the lesson was learned (the table the
   glass stood on, the fridge the milk was in) becomes the current carrier of that id's new
   binding;
3. any other id keeps its name when the scene has it with the same type, else takes the
   scene's instance of the same type (or, failing that, of a type with the same head noun,
   "water glass" for "glass"); with several, the one nearest the request's first object.

:func:`applicable` then checks the rebound plan against the scene: every id exists and each
action's object has what the action needs (``open`` an openable thing, ``turn_on`` a
toggleable one, ``handover`` to a person ...). A lesson whose plan does not fit is not used.

:class:`SceneIndex` is what these functions know of the world: ids, types, properties,
people, carriers and positions. It is built from a simulator scene, or from a scene document
(benchmark format v1, as the simulator's ground truth publishes it).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

from raider_ros.common.text import split_words
from raider_ros.recovery.plan import (
    INTERACTION_ACTIONS, PLACEHOLDER_NAMES, Literal, Plan, PlanError, PlanStep, parse_plan,
)

# action -> what its objects must have (index of the argument -> property, or "person")
NEEDS: dict[str, dict[int, str]] = {
    "pick": {0: "pickupable"}, "open": {0: "openable"}, "close": {0: "openable"},
    "turn_on": {0: "toggleable"}, "turn_off": {0: "toggleable"}, "slice": {0: "sliceable"},
    "place": {0: "receptacle"}, "handover": {0: "pickupable", 1: "person"},
}
_ID = re.compile(r"^[A-Za-z][A-Za-z0-9]*_\d+$")


class AdaptError(ValueError):
    """A stored plan that cannot be used here; the message says which id and why."""


@dataclass(frozen=True)
class Thing:
    id: str
    type: str
    properties: frozenset[str]
    person: bool
    carrier: str | None
    center: tuple[float, float, float]
    name: str | None = None


@dataclass(frozen=True)
class SceneIndex:
    things: Mapping[str, Thing]
    name: str = ""

    @classmethod
    def from_scene(cls, scene: Any) -> "SceneIndex":
        from raider_ros.sim.skills import supports   # ROS-free simulator geometry
        things: dict[str, Thing] = {}
        for o in scene.objects:
            carrier = supports(scene, o)
            things[o.id] = Thing(o.id, o.type, frozenset(o.properties), False,
                                 carrier[0].id if carrier else None, tuple(o.center))
        for p in scene.people:
            things[p.id] = Thing(p.id, "Person", frozenset(), True, None, tuple(p.center), p.name)
        return cls(things, scene.name)

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> "SceneIndex":
        from raider_ros.sim.scene import parse_scene
        return cls.from_scene(parse_scene(dict(doc), "<scene document>"))

    def type_of(self, thing_id: str) -> str | None:
        t = self.things.get(thing_id)
        return t.type if t else None

    def types(self, ids) -> dict[str, str]:
        return {i: self.things[i].type for i in ids if i in self.things}

    def carrier(self, thing_id: str) -> str | None:
        t = self.things.get(thing_id)
        return t.carrier if t else None

    def find(self, phrase_or_type: str) -> list[str]:
        """Ids whose type is ``phrase_or_type`` (any spelling: "WaterGlass", "water glass")."""
        key = "".join(split_words(phrase_or_type))
        return [t.id for t in self.things.values() if "".join(split_words(t.type)) == key]


def head_noun(type_name: str) -> str:
    words = [w for w in split_words(type_name) if not w.isdigit()]
    return words[-1] if words else type_name.lower()


def type_of_id(thing_id: str) -> str:
    """The type an id names when nothing else is known: 'WaterGlass_1' -> 'WaterGlass'."""
    return re.sub(r"_\d+$", "", thing_id)


def plan_ids(plan: Plan) -> list[str]:
    """The literal object/person/location arguments of the plan's skill actions, in order."""
    out: list[str] = []
    for s in plan.steps:
        if s.action in INTERACTION_ACTIONS:
            continue
        for a in s.args:
            if isinstance(a, Literal) and a.value not in PLACEHOLDER_NAMES and a.value not in out:
                out.append(a.value)
    return out


def _nearest(cands: list[str], scene: SceneIndex, anchor: str | None) -> str:
    if anchor is None or anchor not in scene.things or len(cands) == 1:
        return sorted(cands)[0]
    c = scene.things[anchor].center
    return min(cands, key=lambda i: (math.dist(scene.things[i].center, c), i))


def _by_type(old: str, typ: str, scene: SceneIndex, anchor: str | None, taken: set[str]) -> str:
    exact = [i for i in scene.find(typ) if i not in taken]
    if old in exact:
        return old
    if exact:
        return _nearest(exact, scene, anchor)
    noun = head_noun(typ)
    same_noun = [t.id for t in scene.things.values() if head_noun(t.type) == noun and t.id not in taken]
    if same_noun:
        return _nearest(same_noun, scene, anchor)
    raise AdaptError(f"the plan uses {old} (a {' '.join(split_words(typ))}), and there is none here")


def adapt_plan(plan_text: str, scene: SceneIndex, *, roles_from: Mapping[str, str],
               roles_to: Mapping[str, str], types: Mapping[str, str] | None = None,
               carriers: Mapping[str, str] | None = None) -> tuple[str, dict[str, str]]:
    """The plan rebound to ``scene`` and the ``old id -> new id`` mapping used."""
    try:
        plan = parse_plan(plan_text)
    except PlanError as exc:
        raise AdaptError(f"the stored plan is not valid: {exc}") from None
    types = dict(types or {})
    carriers = dict(carriers or {})
    ids = plan_ids(plan)
    mapping: dict[str, str] = {}
    for role, old in roles_from.items():
        if old in ids or any(old == c for c in carriers.values()):
            if role not in roles_to:
                if old in ids:
                    raise AdaptError(f"the plan needs a {role} ({old}), and the request gives none")
                continue
            mapping[old] = roles_to[role]
    anchor = next(iter(roles_to.values()), None)
    carried_by = {c: obj for obj, c in carriers.items() if obj in ids}
    pending = [i for i in ids if i not in mapping]
    # ids that are not carriers first: a carrier follows what it carries
    for old in [i for i in pending if i not in carried_by]:
        if not _ID.match(old):          # a type name or a word the skills resolve ("Knife")
            mapping[old] = old
            continue
        typ = types.get(old) or type_of_id(old)
        mapping[old] = _by_type(old, typ, scene, anchor, set(mapping.values()) - {old})
    for old in [i for i in pending if i in carried_by]:
        obj = mapping.get(carried_by[old], carried_by[old])
        new = scene.carrier(obj)
        if new is None:
            raise AdaptError(f"the plan takes {obj} from what carries it ({old} in the lesson), "
                             f"and nothing carries {obj} here")
        mapping[old] = new
    steps = []
    for s in plan.steps:
        args = []
        for a in s.args:
            if isinstance(a, Literal):
                if s.action in INTERACTION_ACTIONS:
                    text = a.value
                    for old, new in mapping.items():
                        if old != new:
                            text = re.sub(rf"\b{re.escape(old)}\b", new, text)
                    args.append(Literal(text))
                else:
                    args.append(Literal(mapping.get(a.value, a.value)))
            else:
                args.append(a)
        steps.append(PlanStep(s.action, tuple(args), s.binds))
    return Plan(tuple(steps)).to_code(), mapping


def applicable(plan_text: str, scene: SceneIndex, *, aliases: Mapping[str, str] | None = None) -> str | None:
    """None when every skill step fits the scene, else the reason it does not."""
    try:
        plan = parse_plan(plan_text)
    except PlanError as exc:
        return f"the plan is not valid: {exc}"
    aliases = aliases or {}
    for n, s in enumerate(plan.steps, 1):
        if s.action in INTERACTION_ACTIONS:
            continue
        for i, a in enumerate(s.args):
            if not isinstance(a, Literal):
                continue
            name = aliases.get(a.value, a.value)
            if name in PLACEHOLDER_NAMES:
                continue
            thing = scene.things.get(name)
            if thing is None:
                if not _ID.match(name) and scene.find(name):
                    continue          # a type name with instances here
                return f"step {n} {s.to_code()}: there is no {name} here"
            need = NEEDS.get(s.action, {}).get(i)
            if need == "person" and not thing.person:
                return f"step {n} {s.to_code()}: {name} is not a person"
            if need and need != "person" and need not in thing.properties:
                return f"step {n} {s.to_code()}: {name} is not {need}"
    return None
