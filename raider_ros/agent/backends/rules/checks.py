"""ASK & ANSWER: the precondition checks of preconditions.yaml, each a question answered by
tools. A check asks for its tool calls through :class:`Observations` (all checks of an action
ask in the same turn) and, once the answers are in, passes, fails with a sentence naming the
object, the cause and the measured evidence, or stays unknown when no tool could answer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .grounding import Pool, distance_of, join_ids, related_ids
from .knowledge import Knowledge, type_key, type_words
from .lexicon import type_is_a
from .transcript import Answer, Observations, entry_for

BLOCK_HIDDEN_FRACTION = 0.2      # benchmark format: an occluder hides at least 20 % of the target
PATH_CORRIDOR_M = 0.3            # ... or stands this close to the floor path


# actions done to a thing where it stands, which what lies on or in it does not hinder (opening
# is not one: a book on a box's lid keeps it shut)
_IN_PLACE_ACTIONS = ("turn_on", "turn_off", "fill")


@dataclass
class CheckOutcome:
    check: str
    role: str
    obj: str
    status: str                  # pass | fail | unknown | pending
    question: str
    text: str = ""               # failure sentence | what passed | why unknown


class Checker:
    def __init__(self, obs: Observations, kb: Knowledge, *, action: str, say: str,
                 grounded: Mapping[str, str], pool: Pool, distance_tool: str | None,
                 reach_m: float, handover_m: float, place_relation: str | None):
        self.obs, self.kb = obs, kb
        self.action, self.say = action, say
        self.grounded = dict(grounded)
        self.pool = pool
        self.distance_tool = distance_tool
        self.reach_m = reach_m
        self.handover_m = handover_m
        self.place_relation = place_relation

    # ------------------------------------------------------------------ helpers
    def label(self, eid: str) -> str:
        name = self.pool.people.get(eid)
        return f"{name} ({eid})" if name else eid

    def _q(self, check: str, **values: Any) -> str:
        return self.kb.sentence("questions", check, **values)

    def _fail(self, key: str, **values: Any) -> str:
        return self.kb.sentence("failures", key, **values)

    def _pass(self, check: str, **values: Any) -> str:
        return self.kb.sentence("passes", check, **values)

    def _hand(self) -> str:
        held = self.pool.held
        return self.kb.sentence("hand", "busy", held=held) if held else self.kb.sentence("hand", "empty")

    @staticmethod
    def _unknown(a: Answer) -> str:
        return a.error or ("tool not available" if a.status == "unavailable" else "no answer")

    # ------------------------------------------------------------------ entry point
    def run(self, spec: Mapping[str, Any]) -> CheckOutcome | None:
        """The outcome of one check, or None when it does not apply (no such argument)."""
        kind = str(spec["check"])
        roles = list(self.grounded)
        role = str(spec.get("arg") or (roles[0] if roles else "object"))
        obj = self.grounded.get(role)
        if obj is None:
            return None
        fn = getattr(self, "_c_" + kind, None)
        if fn is None:
            raise ValueError(f"preconditions.yaml: unknown check {kind!r}")
        return fn(spec, role, obj)

    def _outcome(self, kind: str, role: str, obj: str, status: str, text: str, **q: Any) -> CheckOutcome:
        return CheckOutcome(kind, role, obj, status, self._q(kind, obj=self.label(obj), **q), text)

    # ------------------------------------------------------------------ the checks
    def _c_property(self, spec, role, obj):
        prop = str(spec["property"])
        words = self.kb.text["property_words"].get(prop) or {"adj": prop, "reason": f"it lacks the property {prop}"}
        a = self.obs.get("get_obj_properties", obj)
        if a.pending:
            return self._outcome("property", role, obj, "pending", "", adj=words["adj"])
        props = None
        if a.ok:
            entry = entry_for(a.data, "object", obj)
            props = entry.get("properties") if isinstance(entry, dict) else entry
        if isinstance(props, list):
            if prop in props:
                return self._outcome("property", role, obj, "pass", self._pass("property", obj=obj, adj=words["adj"]),
                                     adj=words["adj"])
            return self._outcome("property", role, obj, "fail",
                                 self._fail("property", obj=obj, adj=words["adj"], reason=words["reason"]),
                                 adj=words["adj"])
        if prop == "pickupable" and type_key(obj) in self.kb.not_pickupable:       # common sense
            return self._outcome("property", role, obj, "fail",
                                 self._fail("property", obj=obj, adj=words["adj"], reason=words["reason"]),
                                 adj=words["adj"])
        return self._outcome("property", role, obj, "unknown", f"whether {obj} is {words['adj']} ({self._unknown(a)})",
                             adj=words["adj"])

    def _c_state(self, spec, role, obj):
        key, value = str(spec["key"]), bool(spec["value"])
        words = self.kb.text["state_words"].get(key) or {"true": key, "false": f"not {key}"}
        needed, actual = words[str(value).lower()], words[str(not value).lower()]
        a = self.obs.get("get_obj_state", obj)
        if a.pending:
            return self._outcome("state", role, obj, "pending", "", needed=needed)
        entry = entry_for(a.data, "object", obj) if a.ok else None
        state = entry.get("state") if isinstance(entry, dict) else None
        v = state.get(key) if isinstance(state, dict) else None
        if not isinstance(v, bool):
            if spec.get("optional"):
                return None
            why = f"no '{key}' state reported" if a.ok else self._unknown(a)
            return self._outcome("state", role, obj, "unknown", f"whether {obj} is {needed} ({why})", needed=needed)
        if v == value:
            return self._outcome("state", role, obj, "pass", self._pass("state", obj=obj, needed=needed), needed=needed)
        done = self.kb.text["done_words"].get(self.action, self.say)
        return self._outcome("state", role, obj, "fail",
                             self._fail(str(spec.get("failure") or "state"), obj=obj, actual=actual, done=done),
                             needed=needed)

    def _c_hand_free(self, spec, role, obj):
        held = self.pool.held
        if held is None:
            return self._outcome("hand_free", role, obj, "pass", self._pass("hand_free"))
        if held == obj:
            return self._outcome("hand_free", role, obj, "fail", self._fail("already_holding", obj=obj))
        return self._outcome("hand_free", role, obj, "fail", self._fail("hand_busy", held=held, say=self.say, obj=obj))

    def _c_holding(self, spec, role, obj):
        if self.pool.held == obj:
            return self._outcome("holding", role, obj, "pass", self._pass("holding", obj=obj))
        return self._outcome("holding", role, obj, "fail", self._fail("not_holding", obj=obj, hand=self._hand(), say=self.say))

    def _c_holding_tool(self, spec, role, obj):
        tools = self.kb.type_lists.get(str(spec.get("tools")), frozenset())
        tool = str(spec.get("tool_name") or spec.get("tools"))
        held = self.pool.held
        # a compound type whose head is a listed tool is that kind of tool (BreadKnife: a knife), and
        # so is a type WordNet files under the tool (Scalpel: a knife), as the robot's skill reads it
        if held and (type_key(held) in tools or (type_words(held) or [""])[-1] in tools or type_is_a(held, tool)):
            return self._outcome("holding_tool", role, obj, "pass", self._pass("holding_tool", held=held), tool=tool)
        return self._outcome("holding_tool", role, obj, "fail",
                             self._fail("no_tool", say=self.say, obj=obj, tool=tool, hand=self._hand()), tool=tool)

    def _c_reachable(self, spec, role, obj):
        if obj == self.pool.held:
            return self._outcome("reachable", role, obj, "pass", f"{obj} is in the gripper")
        if self.distance_tool is None:
            return self._outcome("reachable", role, obj, "unknown", f"the distance to {obj} (no distance tool)")
        a = self.obs.get(self.distance_tool, obj)
        if a.pending:
            return self._outcome("reachable", role, obj, "pending", "")
        entry = entry_for(a.data, "target", obj) if a.ok else None
        d = distance_of(entry)
        if d is None:
            return self._outcome("reachable", role, obj, "unknown", f"the distance to {obj} ({self._unknown(a)})")
        reach = entry.get("reach_m") if isinstance(entry, dict) else None
        reach = float(reach) if isinstance(reach, (int, float)) and not isinstance(reach, bool) \
            else self.reach_m
        within = entry.get("within_reach") if isinstance(entry, dict) else None
        within = within if isinstance(within, bool) else d <= reach
        if within:
            return self._outcome("reachable", role, obj, "pass", self._pass("reachable", obj=obj, distance=f"{d:.2f}"))
        return self._outcome("reachable", role, obj, "fail",
                             self._fail("too_far", obj=obj, distance=f"{d:.2f}", reach=f"{reach:.2f}", say=self.say))

    def _related(self, relation: str, obj: str) -> tuple[Answer, list[str] | None, dict]:
        a = self.obs.get("check_obj_relationship", relation, obj)
        if not a.ok:
            return a, None, {}
        entry = entry_for(a.data, "object", obj)
        evidence = entry.get("evidence") if isinstance(entry, dict) and isinstance(entry.get("evidence"), dict) else {}
        ids = related_ids(a.data, obj)
        skip = {obj, self.pool.held, *self.grounded.values()}
        return a, ([i for i in ids if i not in skip] if ids is not None else None), evidence

    def _c_not_blocked(self, spec, role, obj):
        if obj == self.pool.held:
            return None
        if not self.obs.has("check_obj_relationship") and self.obs.has("check_free_path"):
            return self._blocked_path(role, obj)
        a, others, evidence = self._related("blocking", obj)
        if a.pending:
            return self._outcome("not_blocked", role, obj, "pending", "")
        if others is None:
            return self._outcome("not_blocked", role, obj, "unknown", f"whether anything blocks {obj} ({self._unknown(a)})")
        if others and (role == "location" or self.action in _IN_PLACE_ACTIONS):
            # what already lies on or in the place hides part of it, but is not in the way of
            # putting something there ("toss the sweater into the hamper" with a shirt in it), nor
            # of switching or filling the thing where it stands (the kettle on the stove)
            contents: set[str] = set()
            for rel in ("on top of", "inside"):
                r, ids, _ = self._related(rel, obj)
                if r.pending:
                    return self._outcome("not_blocked", role, obj, "pending", "")
                contents |= set(ids or [])
            others = [b for b in others if b not in contents]
        if not others:
            return self._outcome("not_blocked", role, obj, "pass", self._pass("not_blocked", obj=obj))
        ev = "; ".join(filter(None, (_block_evidence(b, obj, evidence.get(b)) for b in others)))
        return self._outcome("not_blocked", role, obj, "fail",
                             self._fail("blocked", obj=obj, others=join_ids(others), be="is" if len(others) == 1 else "are",
                                        evidence=f" ({ev})" if ev else ""))

    def _blocked_path(self, role, obj):
        """not_blocked from check_free_path: what stands on the floor path to the object."""
        a = self.obs.get("check_free_path", obj)
        if a.pending:
            return self._outcome("not_blocked", role, obj, "pending", "")
        entry = entry_for(a.data, "target", obj) if a.ok else None
        if not isinstance(entry, dict) or not isinstance(entry.get("free"), bool):
            return self._outcome("not_blocked", role, obj, "unknown", f"whether anything blocks {obj} ({self._unknown(a)})")
        skip = {obj, self.pool.held, *self.grounded.values()}
        others = [str(b) for b in entry.get("blocking") or [] if str(b) not in skip]
        if not others:
            return self._outcome("not_blocked", role, obj, "pass", self._pass("not_blocked", obj=obj))
        evidence = entry.get("evidence") if isinstance(entry.get("evidence"), dict) else {}
        ev = "; ".join(_on_path(b, float(e["distance_to_path_m"]), e, "stands", "the robot's path to it")
                       for b, e in evidence.items() if b in others and isinstance(e, dict)
                       and isinstance(e.get("distance_to_path_m"), (int, float)))
        return self._outcome("not_blocked", role, obj, "fail",
                             self._fail("blocked", obj=obj, others=join_ids(others), be="is" if len(others) == 1 else "are",
                                        evidence=f" ({ev})" if ev else ""))

    def _c_nothing_on_top(self, spec, role, obj):
        if obj == self.pool.held:
            return None
        a, others, _ = self._related("on top of", obj)
        if a.pending:
            return self._outcome("nothing_on_top", role, obj, "pending", "")
        if others is None:
            return self._outcome("nothing_on_top", role, obj, "unknown", f"what stands on {obj} ({self._unknown(a)})")
        if not others:
            return self._outcome("nothing_on_top", role, obj, "pass", self._pass("nothing_on_top", obj=obj))
        return self._outcome("nothing_on_top", role, obj, "fail",
                             self._fail("on_top", obj=obj, others=join_ids(others), be="is" if len(others) == 1 else "are"))

    def _c_container_open(self, spec, role, obj):
        if role == "location" and self.place_relation not in (None, "inside"):
            return None
        p = self.obs.get("get_obj_properties", obj)
        s = self.obs.get("get_obj_state", obj)
        if p.pending or s.pending:
            return self._outcome("container_open", role, obj, "pending", "")
        pe = entry_for(p.data, "object", obj) if p.ok else None
        props = pe.get("properties") if isinstance(pe, dict) else None
        se = entry_for(s.data, "object", obj) if s.ok else None
        state = se.get("state") if isinstance(se, dict) else None
        is_open = state.get("open") if isinstance(state, dict) else None
        if isinstance(props, list) and "openable" not in props:
            return None
        if is_open is False:
            return self._outcome("container_open", role, obj, "fail", self._fail("container_closed", obj=obj))
        if is_open is True:
            return self._outcome("container_open", role, obj, "pass", self._pass("container_open", obj=obj))
        return None

    def _c_receptacle_free(self, spec, role, obj):
        if type_key(obj) not in self.kb.single_item_receptacles:
            return None
        found: list[str] = []
        waiting = False
        for rel in ("inside", "on top of"):
            a, others, _ = self._related(rel, obj)
            waiting |= a.pending
            found += [o for o in others or [] if o not in found]
        if waiting:
            return self._outcome("receptacle_free", role, obj, "pending", "")
        if found:
            return self._outcome("receptacle_free", role, obj, "fail", self._fail("receptacle_busy", obj=obj, others=join_ids(found)))
        return self._outcome("receptacle_free", role, obj, "pass", self._pass("receptacle_free", obj=obj))

    def _c_free_path(self, spec, role, obj):
        a = self.obs.get("check_free_path", obj)
        if a.pending:
            return self._outcome("free_path", role, obj, "pending", "")
        entry = entry_for(a.data, "target", obj) if a.ok else None
        if isinstance(entry, bool):
            entry = {"free": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("free"), bool):
            return self._outcome("free_path", role, obj, "unknown", f"whether the path to {obj} is free ({self._unknown(a)})")
        if entry["free"]:
            return self._outcome("free_path", role, obj, "pass", self._pass("free_path", obj=self.label(obj)))
        blockers = [str(b) for b in entry.get("blocking") or []]
        evidence = entry.get("evidence") if isinstance(entry.get("evidence"), dict) else {}
        ev = "; ".join(_on_path(b, float(e["distance_to_path_m"]), e, "is", "the path") for b, e in evidence.items()
                       if isinstance(e, dict) and isinstance(e.get("distance_to_path_m"), (int, float)))
        return self._outcome("free_path", role, obj, "fail",
                             self._fail("path_blocked", obj=self.label(obj), others=join_ids(blockers) or "an obstacle",
                                        evidence=f" ({ev})" if ev else ""))

    def _person_flag(self, kind: str, tool: str, key: str, fail_key: str, role: str, pid: str):
        a = self.obs.get(tool, pid)
        if a.pending:
            return self._outcome(kind, role, pid, "pending", "")
        entry = entry_for(a.data, "human", pid) if a.ok else None
        v = entry.get(key) if isinstance(entry, dict) else (entry if isinstance(entry, bool) else None)
        if not isinstance(v, bool):
            return self._outcome(kind, role, pid, "unknown", f"{key.replace('_', ' ')} of {pid} ({self._unknown(a)})")
        if v:
            return self._outcome(kind, role, pid, "pass", self._pass(kind, obj=self.label(pid)))
        return self._outcome(kind, role, pid, "fail", self._fail(fail_key, obj=self.label(pid)))

    def _c_person_gaze(self, spec, role, pid):
        return self._person_flag("person_gaze", "detect_human_gaze", "looking_at_robot", "person_not_looking", role, pid)

    def _c_person_hands(self, spec, role, pid):
        return self._person_flag("person_hands", "human_hands_free", "hands_free", "person_hands_busy", role, pid)

    def _c_person_distance(self, spec, role, pid):
        a = self.obs.get("dist_robot_to_human", pid)
        if a.pending:
            return self._outcome("person_distance", role, pid, "pending", "")
        d = distance_of(entry_for(a.data, "human", pid)) if a.ok else None
        if d is None:
            return self._outcome("person_distance", role, pid, "unknown", f"the distance to {pid} ({self._unknown(a)})")
        if d <= self.handover_m:
            return self._outcome("person_distance", role, pid, "pass",
                                 self._pass("person_distance", obj=self.label(pid), distance=f"{d:.2f}"))
        return self._outcome("person_distance", role, pid, "fail",
                             self._fail("person_far", obj=self.label(pid), distance=f"{d:.2f}", limit=f"{self.handover_m:.2f}"))


def _block_evidence(blocker: str, target: str, ev: Any) -> str:
    if not isinstance(ev, dict):
        return ""
    parts = []
    hidden = ev.get("hidden_fraction")
    if isinstance(hidden, (int, float)) and hidden >= BLOCK_HIDDEN_FRACTION:
        parts.append(f"{blocker} hides {100 * hidden:.0f}% of {target}")
    path = ev.get("path_distance_m")
    if isinstance(path, (int, float)) and path < PATH_CORRIDOR_M:
        parts.append(_on_path(blocker, path, ev, "stands", "the robot's path to it"))
    return "; ".join(parts)


def _on_path(blocker: str, dist: float, ev: Mapping, verb: str, path: str) -> str:
    """'<blocker> stands 0.05 m from <path>', naming the sensor when the tool says which saw it
    (``seen_by``: the base laser sees the floor the camera cannot); an obstacle nothing
    perceived covers (``unidentified``: its name already says where it is) gets the measure only."""
    seen = ev.get("seen_by") if isinstance(ev.get("seen_by"), str) else ""
    if ev.get("unidentified") is True:
        return f"seen by the {seen or 'base laser'}, {dist:.2f} m from {path}"
    return f"{blocker} {verb} {dist:.2f} m from {path}" + (f", seen by the {seen}" if seen else "")
