"""Summarizers: one :class:`StateSummary` from each module's ROS-free state.

=================  ==========================================================================
module             reads
=================  ==========================================================================
world_model        a scene-graph ``SceneSnapshot`` (objects in view / out of view / held,
                   their types, distances, states, properties, relations; counts when many)
people             the same snapshot's person nodes (name or not recognised, distance,
                   gaze, hands)
issue_detector     the query checked and its ``AgentResult`` (or the executor's
                   ``DetectionOutcome``): verdict, explanation, grounding, tools used
recovery_planner   a recovery ``Plan`` (or the reason it was rejected) and what it was for
plan_executor      an :class:`~raider_ros.state_qa.trackers.ExecutionTracker` (task, plan,
                   current step and stage, steps done, issues, recoveries, outcome)
human_interface    a :class:`~raider_ros.state_qa.trackers.DialogueLog`
robot              the robot's pose / holding / reach (sim ``Robot``, perception
                   ``RobotInfo`` or a dict), its skills, a :class:`SkillLog`, and the scene
                   for "near what"
(any, e.g. safety) :func:`summarize_generic` - a plain dict (constraints, violations, ...)
=================  ==========================================================================

Facts name things by their ids (``Medicine_1``) and types in words ("medicine counter"). Every
summarizer takes ``stamp`` (seconds); without it, the object's own stamp or the current time.
"""
from __future__ import annotations

import math
import time
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

from raider_ros.common.text import split_words

from .summary import StateSummary, make_summary
from .trackers import DialogueLog, ExecutionTracker, SkillLog, SkillRecord

MAX_LISTED = 15          # objects named one by one; beyond that, counts by type
MAX_RELATIONS = 6        # relations listed per object
MAX_HISTORY = 6          # skills / dialogue lines / events listed
MAX_COUNTED = 12         # rooms / types counted one by one in a house-scale summary; beyond, "and N more"

STATE_WORDS = {          # state key -> (word when true, word when false)
    "open": ("open", "closed"), "switched_on": ("switched on", "switched off"),
    "sliced": ("sliced", "not sliced"), "clean": ("clean", "dirty"), "filled": ("filled", "empty"),
    "cooked": ("cooked", "not cooked"), "broken": ("broken", "not broken"),
}


@lru_cache(maxsize=4096)
def type_words(type_name: str | None) -> str:
    """'MedicineCounter' -> 'medicine counter'."""
    return " ".join(split_words(type_name or "")) or "thing"


def _now(stamp: float | None) -> float:
    """The summary's stamp: the caller's (a node passes its clock's time), else wall time."""
    return time.time() if stamp is None else float(stamp)


def _join(items: Sequence[str], more: int = 0) -> str:
    items = list(items)
    if more > 0:
        items.append(f"and {more} more")
    return ", ".join(items) if items else "none"


def _counts(keys: Iterable[str], what: str = "kinds", limit: int = MAX_COUNTED) -> str:
    """``"412 mug, 97 plate, and 30 more kinds (120 objects)"``: the most frequent first."""
    counts: dict[str, int] = {}
    for k in keys:
        counts[k] = counts.get(k, 0) + 1
    items = sorted(counts.items(), key=lambda x: (-x[1], x[0]))
    shown = [f"{c} {k}" for k, c in items[:limit]]
    rest = items[limit:]
    if rest:
        shown.append(f"and {len(rest)} more {what} ({sum(c for _, c in rest)} objects)")
    return ", ".join(shown) if shown else "none"


def _metres(d: Any) -> str | None:
    try:
        d = float(d)
    except (TypeError, ValueError):
        return None
    return f"{d:.2f} m away" if math.isfinite(d) else None


# --------------------------------------------------------------------------- perception
def _nodes(snapshot: Any, kind: str) -> list[tuple[str, dict]]:
    return [(n, a) for n, a in snapshot.graph.nodes(data=True) if a.get("kind") == kind]


def _by_distance(items: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    def key(item):
        d = item[1].get("distance_m")
        return (0 if isinstance(d, (int, float)) and math.isfinite(d) else 1, d if isinstance(d, (int, float)) else 0,
                item[0])
    return sorted(items, key=key)


def _state_text(state: Mapping | None) -> str:
    if not state:
        return ""
    words = []
    for k, v in state.items():
        if k in STATE_WORDS:
            words.append(STATE_WORDS[k][0 if v else 1])
        else:
            words.append(f"{k.replace('_', ' ')}: {'yes' if v else 'no'}")
    return ", ".join(words)


def _ago(snapshot: Any, attrs: Mapping) -> str:
    """How long ago, in coarse steps (under 10 s, then tens of seconds, then minutes): a summary
    then changes every 10 s at most while things are out of view, not at every frame."""
    seen = attrs.get("last_seen")
    if seen is None:
        return "never seen"
    d = max(0.0, float(snapshot.stamp) - float(seen))
    if d < 10:
        return "last seen less than 10 s ago"
    if d < 60:
        return f"last seen about {int(d // 10) * 10} s ago"
    return f"last seen about {int(d // 60)} min ago"


def summarize_world_model(snapshot: Any, *, stamp: float | None = None, max_listed: int = MAX_LISTED,
                          module: str = "world_model") -> StateSummary:
    """Objects of a scene-graph snapshot: in view (nearest first), known but out of view, held."""
    objects = _nodes(snapshot, "object")
    held = [(n, a) for n, a in objects if a.get("held")]
    visible = _by_distance([(n, a) for n, a in objects if a.get("visible") and not a.get("held")])
    unseen = sorted([(n, a) for n, a in objects if not a.get("visible") and not a.get("held")],
                    key=lambda x: -(x[1].get("last_seen") or 0))
    counts: dict[str, int] = {}
    for _, a in visible:
        t = type_words(a.get("type"))
        counts[t] = counts.get(t, 0) + 1
    listed_visible = visible[:max_listed]
    listed_unseen = unseen[: max(0, max_listed - len(listed_visible))]
    # relations only of the objects listed (at house scale the graph holds tens of thousands)
    relations: dict[str, list[str]] = {}
    graph = snapshot.graph
    for n, _ in [*listed_visible, *listed_unseen, *held]:
        for _, o, rels in graph.out_edges(n, data="relations"):
            relations.setdefault(n, []).extend(f"{rel} {o}" for rel in (rels or ()) if rel != "holding")

    listed = _join([f"{n} ({type_words(a.get('type'))})" for n, a in listed_visible], len(visible) - len(listed_visible))
    facts: list[tuple[str, str]] = [
        ("visible_objects", f"{len(visible)} object(s): {listed}" if visible else "no objects"),
        ("type_counts", _join([f"{c} {t}" for t, c in sorted(counts.items(), key=lambda x: (-x[1], x[0]))])),
    ]
    if unseen:
        facts.append(("unseen_objects", _join([f"{n} ({type_words(a.get('type'))}, {_ago(snapshot, a)})"
                                               for n, a in listed_unseen], len(unseen) - len(listed_unseen))))
    if len(unseen) > len(listed_unseen):
        # at house scale (thousands remembered): counts by room and by type, never one line each
        facts.append(("unseen_by_room", _counts((a.get("room") or "room unknown" for _, a in unseen), "rooms")))
        facts.append(("unseen_type_counts", _counts(type_words(a.get("type")) for _, a in unseen)))
    if held:
        facts.append(("held_object", _join([f"{n} ({type_words(a.get('type'))})" for n, a in held])))
    for n, a in [*listed_visible, *listed_unseen, *held]:
        parts = [type_words(a.get("type"))]
        if a.get("held"):
            parts.append("in my gripper")
        elif a.get("visible"):
            parts.append("in view")
            dist = _metres(a.get("distance_m"))
            if dist:
                parts.append(dist)
        else:
            parts.append(f"out of view ({_ago(snapshot, a)})")
        st = _state_text(a.get("state"))
        if st:
            parts.append(st)
        if a.get("properties"):
            parts.append("can be " + " / ".join(_property_word(p) for p in a["properties"]))
        facts.append((f"object:{n}", ", ".join(parts)))
        rels = relations.get(n, [])
        if rels:
            facts.append((f"relations:{n}", _join(rels[:MAX_RELATIONS], len(rels) - MAX_RELATIONS)))

    if visible:
        text = (f"I perceive {len(visible)} object(s) in view: "
                f"{_join([n for n, _ in listed_visible], len(visible) - len(listed_visible))}.")
    else:
        text = "I perceive no objects in view."
    if unseen:
        text += f" {len(unseen)} more known but out of view."
    if held:
        text += f" In my gripper: {', '.join(n for n, _ in held)}."
    n_rel = sum(len(rels) - ("holding" in rels) for subject, _, rels in graph.edges(data="relations", default=())
                if subject != "robot")
    if n_rel:
        text += f" {n_rel} spatial relation(s) hold between them."
    return make_summary(module, text, facts, _now(stamp))


_PROPERTY_WORDS = {"pickupable": "picked up", "openable": "opened", "toggleable": "switched on/off",
                   "sliceable": "sliced", "receptacle": "used as a place to put things", "cookable": "cooked",
                   "dirtyable": "cleaned", "fillable": "filled", "moveable": "moved", "breakable": "broken"}


def _property_word(p: str) -> str:
    return _PROPERTY_WORDS.get(p, p)


def _person_text(snapshot: Any, n: str, a: Mapping) -> str:
    name = a.get("name")
    parts = [f"recognised as {name}" if name else "not recognised (I do not know their name)"]
    if a.get("visible"):
        parts.append("in view")
        dist = _metres(a.get("distance_m"))
        if dist:
            parts.append(dist)
    else:
        parts.append(f"out of view ({_ago(snapshot, a)})")
    look = a.get("looking_at_robot")
    if look is not None:
        parts.append("looking at me" if look else "not looking at me")
    hands = a.get("hands_free")
    if hands is not None:
        parts.append("hands free" if hands else "hands busy")
    return ", ".join(parts)


def summarize_people(snapshot: Any, *, stamp: float | None = None, module: str = "people") -> StateSummary:
    """People of a scene-graph snapshot: recognised or not, distance, gaze, hands."""
    people = _by_distance(_nodes(snapshot, "person"))
    visible = [(n, a) for n, a in people if a.get("visible")]
    unseen = [(n, a) for n, a in people if not a.get("visible")]
    label = lambda n, a: f"{n} ({a['name']})" if a.get("name") else f"{n} (not recognised)"  # noqa: E731
    names = [a["name"] for _, a in people if a.get("name")]
    facts: list[tuple[str, str]] = [
        ("people_visible", f"{len(visible)} person(s): {_join([label(n, a) for n, a in visible])}" if visible
         else "nobody"),
        ("recognised_people", _join(names) if names else "nobody"),
    ]
    if unseen:
        facts.append(("people_unseen", _join([label(n, a) for n, a in unseen])))
    for n, a in people:
        facts.append((f"person:{n}", _person_text(snapshot, n, a)))
    if visible:
        text = f"I perceive {len(visible)} person(s): {_join([label(n, a) for n, a in visible])}."
    else:
        text = "I perceive nobody in view."
    if unseen:
        text += f" Seen earlier, now out of view: {_join([label(n, a) for n, a in unseen])}."
    return make_summary(module, text, facts, _now(stamp))


# --------------------------------------------------------------------------- issue detector
VERDICT_WORDS = {"none": "no issue (feasible)", "ambiguity": "ambiguity (unclear which thing is meant)",
                 "unfeasibility": "unfeasibility (cannot be done as asked)"}


def summarize_issue_check(query: str, result: Any, *, context: str = "", stamp: float | None = None,
                          module: str = "issue_detector") -> StateSummary:
    """The last check of ``query``: an ``AgentResult`` (issue, explanation, grounding,
    tool_calls, status, error, backend) or a ``DetectionOutcome`` (issue, explanation,
    grounding, status, reason)."""
    status = str(getattr(result, "status", "ok") or "ok")
    issue = getattr(result, "issue", None)
    explanation = str(getattr(result, "explanation", "") or "")
    grounding = [str(g) for g in (getattr(result, "grounding", None) or [])]
    tools = [str(getattr(t, "name", t)) for t in (getattr(result, "tool_calls", None) or [])]
    tools_distinct = list(dict.fromkeys(tools))
    error = getattr(result, "error", None) or getattr(result, "reason", None)
    facts: list[tuple[str, str]] = [("last_query", str(query))]
    if context:
        facts.append(("query_context", str(context)))
    if status != "ok":
        verdict = "error (the check did not finish)"
        facts += [("verdict", verdict), ("check_error", str(error or "no reason given"))]
        text = f"My last check of {query} failed: {error or 'no reason given'}."
    else:
        issue = (issue or "none").strip().lower()
        verdict = VERDICT_WORDS.get(issue, issue)
        facts.append(("verdict", verdict))
        if explanation:
            facts.append(("explanation", explanation))
        text = f"My last check: {query} -> {verdict}." + (f" {explanation}" if explanation else "")
    if grounding:
        facts.append(("grounding", _join(grounding)))
    if tools:
        facts.append(("tools_used", _join(tools_distinct) + f" ({len(tools)} call(s))"))
    backend = getattr(result, "backend", "")
    if backend:
        facts.append(("check_backend", str(backend)))
    return make_summary(module, text, facts, _now(stamp))


# --------------------------------------------------------------------------- recovery planner
def summarize_recovery(plan: Any, *, query: str, issue: str, explanation: str = "", holding: str | None = None,
                       error: str | None = None, backend: str = "", stamp: float | None = None,
                       module: str = "recovery_planner") -> StateSummary:
    """The last recovery ``Plan`` for ``query`` (or, with ``plan`` None, the ``error`` that
    made the planner give up)."""
    facts: list[tuple[str, str]] = [("recovery_for", f"{query} ({issue}{': ' + explanation if explanation else ''})")]
    if holding:
        facts.append(("holding_when_planned", str(holding)))
    if plan is None or not getattr(plan, "steps", None):
        why = error or "no plan was produced"
        facts.append(("plan_rejected", str(why)))
        text = f"I could not make a recovery plan for {query}: {why}."
    else:
        steps = list(plan.steps)
        code = plan.to_code().replace("\n", "; ")
        facts.append(("recovery_plan", code))
        facts.append(("recovery_actions", _join([s.action for s in steps])))
        facts.append(("recovery_steps_count", str(len(steps))))
        questions = [_arg_text(s) for s in steps if s.action == "ask"]
        said = [_arg_text(s) for s in steps if s.action == "say"]
        if questions:
            facts.append(("planned_questions", " / ".join(questions)))
        if said:
            facts.append(("planned_statements", " / ".join(said)))
        if error:
            facts.append(("plan_rejected", str(error)))
        text = f"To resolve the {issue} of {query} I planned: {code}."
    if backend:
        facts.append(("planner_backend", str(backend)))
    return make_summary(module, text, facts, _now(stamp))


def _arg_text(step: Any) -> str:
    a = step.args[0] if step.args else None
    return str(getattr(a, "value", getattr(a, "name", "")) or "")


# --------------------------------------------------------------------------- executor
def summarize_executor(tracker: ExecutionTracker, *, stamp: float | None = None,
                       module: str = "plan_executor") -> StateSummary:
    st = tracker.state()
    if st.status == "idle" and not st.steps:
        return make_summary(module, "I have no task: nothing has been executed yet.",
                            [("task_status", "idle (no task yet)")], _now(stamp))
    total = len(st.steps)
    done = [s for s in st.steps if s.status == "done"]
    left = [s for s in st.steps if s.status not in ("done", "aborted", "cancelled")]
    label = lambda s: f"{s.index + 1}. {s.step}" + (f" ({s.text})" if s.text else "")  # noqa: E731
    status_words = {"running": "running", "success": "finished successfully", "aborted": "aborted",
                    "cancelled": "cancelled", "idle": "idle"}
    facts: list[tuple[str, str]] = [
        ("task", f"{st.task} ({total} steps)"),
        ("task_status", status_words.get(st.status, st.status)),
        ("task_plan", "; ".join(label(s) for s in st.steps)),
        ("steps_done", f"{len(done)} of {total}" + (": " + "; ".join(label(s) for s in done) if done else "")),
    ]
    if st.status == "running" and st.current is not None and st.current < total:
        cur = st.steps[st.current]
        facts.append(("current_step", f"step {cur.index + 1} of {total}: {cur.step}, {st.stage}: {st.message}"))
    if left and st.status == "running":
        facts.append(("steps_left", "; ".join(label(s) for s in left)))
    elif left:
        facts.append(("steps_not_done", "; ".join(label(s) for s in left)))
    issues = [f"step {s.index + 1}: {i}" for s in st.steps for i in s.issues]
    if issues:
        facts.append(("issues_met", " | ".join(issues[-MAX_HISTORY:])))
    rec = [f"step {s.index + 1}: {s.recoveries}" for s in st.steps if s.recoveries]
    facts.append(("recoveries", _join(rec) if rec else "none"))
    if st.plans:
        facts.append(("recovery_plans_run", " | ".join(f"step {i + 1}: {c.replace(chr(10), '; ')}"
                                                       for i, c in st.plans[-MAX_HISTORY:])))
    if st.reason and st.status != "running":
        facts.append(("task_outcome", st.reason))
    facts.append(("recent_events", " | ".join(t for _, t in st.events[-MAX_HISTORY:])))
    if st.status == "running" and st.current is not None and st.current < total:
        text = (f"I am carrying out {st.task}: step {st.current + 1} of {total} ({st.steps[st.current].step}), "
                f"{st.stage}. {len(done)} step(s) done.")
    else:
        text = f"Task {st.task} {status_words.get(st.status, st.status)}: {len(done)} of {total} step(s) done."
        if st.reason:
            text += f" {st.reason}."
    return make_summary(module, text, facts, _now(stamp))


# --------------------------------------------------------------------------- dialogue
def summarize_dialogue(log: DialogueLog, *, stamp: float | None = None,
                       module: str = "human_interface") -> StateSummary:
    lines = [u for u in log.lines() if u.kind != "world"]
    if not lines:
        return make_summary(module, "Nobody has talked with me yet.", [("dialogue_lines", "0")], _now(stamp))
    asked = [u for u in lines if u.kind == "ask"]
    facts: list[tuple[str, str]] = [("dialogue_lines", str(len(lines)))]
    robot = [u for u in lines if u.speaker == "ROBOT"]
    if robot:
        facts.append(("last_robot_said", robot[-1].text))
    if asked:
        facts.append(("questions_asked", str(len(asked))))
        facts.append(("last_question", asked[-1].text))
    answers = [u for u in lines if u.kind == "answer"]
    if answers:
        facts.append(("last_answer", answers[-1].text))
    unanswered = []
    for i, u in enumerate(lines):
        if u.kind == "ask":
            nxt = lines[i + 1] if i + 1 < len(lines) else None
            if nxt is None or nxt.kind == "no_answer":
                unanswered.append(u.text)
    facts.append(("unanswered_questions", " / ".join(unanswered) if unanswered else "none"))
    pairs = []
    for i, u in enumerate(lines):
        if u.kind == "ask":
            nxt = lines[i + 1] if i + 1 < len(lines) else None
            ans = nxt.text if nxt is not None and nxt.kind == "answer" else "(no answer)"
            pairs.append(f"I asked \"{u.text}\" - the answer: \"{ans}\"")
        elif u.kind == "say":
            pairs.append(f"I said \"{u.text}\"")
    facts.append(("dialogue", " | ".join(pairs[-MAX_HISTORY:])))
    world = [u for u in log.lines() if u.kind == "world"]
    if world:
        facts.append(("person_changed_world", " | ".join(u.text for u in world[-MAX_HISTORY:])))
    text = f"{len(lines)} line(s) of dialogue; {len(asked)} question(s) asked."
    if asked:
        text += f" Last question: \"{asked[-1].text}\""
    return make_summary(module, text, facts, _now(stamp))


# --------------------------------------------------------------------------- robot
def _robot_field(robot: Any, name: str, default: Any = None) -> Any:
    if isinstance(robot, Mapping):
        return robot.get(name, default)
    return getattr(robot, name, default)


def _near(robot_xy: tuple[float, float], surroundings: Any, holding: Any = None,
          limit_m: float = 1.5) -> list[tuple[str, float]]:
    if surroundings is None:
        return []
    items: Iterable = surroundings
    if hasattr(surroundings, "entities"):      # a sim Scene
        items = [(e.id, e.center[0], e.center[1]) for e in surroundings.entities]
    out = []
    for item in items:
        ent_id, x, y = item[0], float(item[1]), float(item[2])
        if holding is not None and ent_id == holding:
            continue
        d = math.hypot(x - robot_xy[0], y - robot_xy[1])
        if d <= limit_m:
            out.append((str(ent_id), d))
    return sorted(out, key=lambda x: x[1])[:3]


def _person_label(person: str, surroundings: Any) -> str:
    """'Person_1 (Adriana)' when the scene knows the person's name, else the id as given."""
    for p in getattr(surroundings, "people", ()) or ():
        if getattr(p, "id", None) == person and getattr(p, "name", None):
            return f"{person} ({p.name})"
    return person


def summarize_robot(robot: Any, *, skills: Sequence[str] = (), skill_log: SkillLog | Sequence[SkillRecord] | None = None,
                    surroundings: Any = None, stamp: float | None = None, module: str = "robot") -> StateSummary:
    """The robot body: ``robot`` has x, y, yaw_deg, holding, reach (sim ``Robot``, perception
    ``RobotInfo`` or a dict); ``surroundings`` (a sim ``Scene`` or ``[(id, x, y)]``) says what
    it stands near; ``skill_log`` what it ran."""
    x, y = float(_robot_field(robot, "x", 0.0)), float(_robot_field(robot, "y", 0.0))
    yaw = float(_robot_field(robot, "yaw_deg", 0.0))
    holding = _robot_field(robot, "holding")
    reach = _robot_field(robot, "reach")
    near = _near((x, y), surroundings, holding)
    facts: list[tuple[str, str]] = [
        ("pose", f"x {x:.2f} m, y {y:.2f} m, facing {yaw:.0f} deg"),
        ("holding", str(holding) if holding else "nothing"),
    ]
    if near:
        facts.append(("near", _join([f"{i} ({d:.1f} m)" for i, d in near])))
    if reach is not None:
        facts.append(("reach", f"{float(reach):.2f} m"))
    if skills:
        facts.append(("skills", _join(list(skills))))
    records = skill_log.records() if isinstance(skill_log, SkillLog) else list(skill_log or [])
    if records:
        last = records[-1]
        facts.append(("last_skill", last.call))
        facts.append(("last_skill_result", ("succeeded" if last.success else "failed")
                      + (f": {last.message}" if last.message else "")))
        facts.append(("recent_skills", " | ".join(f"{r.call}: {r.message or ('ok' if r.success else 'failed')}"
                                                  for r in records[-MAX_HISTORY:])))
        handled = [r.args[0] for r in records if r.success and r.name in ("pick", "handover") and r.args]
        picked = [r.args[0] for r in records if r.success and r.name == "pick" and r.args]
        if picked:
            facts.append(("picked_objects", _join(list(dict.fromkeys(reversed(picked))))))
        if handled:
            facts.append(("last_handled_object", handled[-1]))
        for r in [r for r in records if r.success and r.name == "handover" and len(r.args) >= 2][-3:]:
            facts.append((f"handed_to:{r.args[0]}", _person_label(r.args[1], surroundings)))
        failures = [r for r in records if not r.success]
        if failures:
            facts.append(("skill_failures", " | ".join(f"{r.call}: {r.message}" for r in failures[-3:])))
    else:
        facts.append(("last_skill", "none yet"))
    text = f"I am at x {x:.2f}, y {y:.2f} facing {yaw:.0f} deg"
    text += f", near {near[0][0]}" if near else ""
    text += f"; holding {holding}." if holding else "; my gripper is empty."
    if records:
        text += f" Last skill: {records[-1].call} {'succeeded' if records[-1].success else 'failed'}."
    last_stamp = records[-1].stamp if records else None
    return make_summary(module, text, facts, _now(stamp))


def summarize_sim_robot(world: Any, skill_log: SkillLog | None = None, *, stamp: float | None = None,
                        module: str = "robot") -> StateSummary:
    """:func:`summarize_robot` for a ``SimWorld``: its robot, skills and scene."""
    scene = world.scene
    return summarize_robot(scene.robot, skills=world.skills(), skill_log=skill_log, surroundings=scene,
                           stamp=stamp, module=module)


# --------------------------------------------------------------------------- generic
def _flatten(prefix: str, value: Any, out: list[tuple[str, str]], depth: int = 0) -> None:
    if isinstance(value, Mapping) and depth < 3:
        if not value:
            out.append((prefix, "none"))
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = [str(v) for v in value]
        out.append((prefix, " | ".join(items) if items else "none"))
    elif isinstance(value, bool):
        out.append((prefix, "yes" if value else "no"))
    elif value is None:
        out.append((prefix, "none"))
    else:
        out.append((prefix, str(value)))


def summarize_generic(module: str, data: Mapping[str, Any], *, text: str | None = None,
                      stamp: float | None = None) -> StateSummary:
    """Any module's state as a dict (nested keys joined with '.', lists with ' | ')::

        summarize_generic("safety_monitor", {"constraints": ["never enter the bathroom"],
                                              "violations": []})
    """
    if not isinstance(data, Mapping):
        raise TypeError(f"summarize_generic({module!r}): expected a mapping, got {type(data).__name__}")
    facts: list[tuple[str, str]] = []
    _flatten("", data, facts)
    if text is None:
        text = "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in facts[:6]) or f"{module}: no state"
    return make_summary(module, text, facts, _now(stamp))


def summarize_safety(constraints: Sequence[tuple[str, str]], violations: Sequence[str] = (),
                     blocked: Sequence[str] = (), *, stamp: float | None = None) -> StateSummary:
    """The safety monitor's state: its constraints as ``(sentence, status)`` pairs (status
    safe | pending | unsafe, '' before any world state), the executed steps that broke one
    (``violations``) and the actions it refused before they ran (``blocked``), newest last.
    Facts ``constraints``, ``violations`` and ``blocked_actions`` (data/state_qa/facts.yaml)."""
    rules = [f"{text} ({status})" if status else text for text, status in constraints]
    text = (f"{len(rules)} safety constraint(s)" + (f": {'; '.join(rules[:4])}" if rules else "")
            + f". Violations: {len(violations)}. Actions blocked: {len(blocked)}"
            + (f", last {blocked[-1]}" if blocked else "") + ".")
    return summarize_generic("safety_monitor", {"constraints": rules, "violations": list(violations),
                                                "blocked_actions": list(blocked)}, text=text, stamp=stamp)
