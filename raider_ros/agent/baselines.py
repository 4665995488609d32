"""Baselines of the paper's §4.2.1, with the same ``run(query, context, on_event, cancel)``
and :class:`AgentResult` as the agent, selectable by name with :func:`make_method`.

* ``llm_visual_obs`` — :class:`LLMVisualObs`: the agent's prompt without the tool sections; the
  first user message carries a description of the whole scene graph instead (no tool calls).
* ``precond`` — :class:`Precond`: the fixed precondition checks of Table B.3
  (``data/prompts/issue_detection/baseline_precond.yaml``), run through the tools, for
  structured queries such as ``pick(Apple)``; anything else is reported as unsupported.

Scene graphs are plain dicts, either a scene-graph snapshot (``{"nodes": [...], "edges": [...]}``
with ``kind``, ``type``, ``visible``, ``held``, ``state``, ``name``, ... per node) or the
simpler ``{"robot": {"holding"}, "objects": [...], "people": [...], "relations": [[s, r, o]]}``.
"""
from __future__ import annotations

import re
import time
from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

from raider_ros.agent.flow import (AgentResult, Cancel, EventHook, ProgramFlowManager, ToolCallRecord,
                                   _Events, _is_cancelled)
from raider_ros.agent.llm import LLM
from raider_ros.agent.prompt import IssuePrompt, PromptConfig, _read_yaml, fill
from raider_ros.common.tool_contract import NoTools, ToolExecutor, ToolResult

METHODS = ("raider", "llm_visual_obs", "precond")
_ID_SUFFIX = re.compile(r"^(.*?)_\d+$")
SceneGraphSource = Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None


# --------------------------------------------------------------------------- scene description
def _type_of(obj_id: str) -> str:
    m = _ID_SUFFIX.match(obj_id)
    return m.group(1) if m else obj_id


def _normalise_graph(graph: Mapping[str, Any]) -> tuple[list[dict], list[dict], list[tuple[str, str, str]], str | None]:
    """(objects, people, relations, held object) of either scene-graph shape; only what is in view
    (plus the held object)."""
    if "nodes" in graph:
        nodes = [n for n in graph.get("nodes") or [] if isinstance(n, Mapping)]
        robot = next((n for n in nodes if n.get("kind") == "robot"), {})
        holding = robot.get("holding")
        objects = [dict(n) for n in nodes if n.get("kind", "object") == "object" and (n.get("visible", True) or n.get("held"))]
        people = [dict(n) for n in nodes if n.get("kind") == "person" and n.get("visible", True)]
        for p in people:
            p["state"] = {k: p[k] for k in ("looking_at_robot", "hands_free") if p.get(k) is not None}
        rels = [(e.get("subject"), e.get("relation"), e.get("object")) for e in graph.get("edges") or []
                if isinstance(e, Mapping)]
    else:
        holding = (graph.get("robot") or {}).get("holding")
        objects = [dict(o) for o in graph.get("objects") or [] if o.get("visible", True) or o.get("id") == holding]
        people = [dict(p) for p in graph.get("people") or [] if p.get("visible", True)]
        rels = []
        for r in graph.get("relations") or []:
            if isinstance(r, Mapping):
                rels.append((r.get("subject"), r.get("relation"), r.get("object")))
            elif isinstance(r, (list, tuple)) and len(r) == 3:
                rels.append(tuple(r))
    shown = {o.get("id") for o in objects} | {p.get("id") for p in people}
    rels = [(s, r, o) for s, r, o in rels if r not in ("holding", None) and s in shown and o in shown]
    return objects, people, rels, holding


def describe_scene(graph: Mapping[str, Any]) -> str:
    """The "visual observation" of LLMVisualObs: every object in view with its states, the
    people, the spatial relations between them and the gripper's content."""
    words = _read_yaml("scene_description.yaml")
    state_words = words.get("state_words") or {}

    def states(state: Any) -> str:
        if not isinstance(state, Mapping):
            return ""
        out = []
        for k, v in state.items():
            pair = state_words.get(k)
            if isinstance(v, bool) and pair:
                out.append(pair[0] if v else pair[1])
            elif v is not None:
                out.append(f"{k}: {v}")
        return f"; {', '.join(out)}" if out else ""

    objects, people, rels, holding = _normalise_graph(graph)
    parts = [fill(words["object"], {"id": o.get("id"), "type": o.get("type") or _type_of(str(o.get("id"))),
                                    "states": states(o.get("state"))}) for o in objects if o.get("id")]
    parts += [fill(words["person"], {"id": p.get("id"), "name": f", {p['name']}" if p.get("name") else "",
                                     "states": states(p.get("state"))}) for p in people if p.get("id")]
    parts += [fill(words["relation"], {"subject": s, "relation": r, "object": o}) for s, r, o in rels]
    parts.append(fill(words["holding"], {"object": holding}) if holding else words["empty_gripper"])
    if not objects and not people:
        parts.insert(0, words["nothing"])
    return ". ".join(parts) + "."


class LLMVisualObs(ProgramFlowManager):
    """The LLM sees the whole scene description at once and answers without tools."""
    method = "llm_visual_obs"

    def __init__(self, llm: LLM, scene_graph: SceneGraphSource = None, config: PromptConfig | None = None,
                 time_limit_s: float = 20.0, max_turns: int = 3):
        super().__init__(llm, NoTools(), IssuePrompt(None, config), time_limit_s, max_turns)
        self.scene_graph = scene_graph

    def run(self, query: str, context: str | None = None, on_event: EventHook | None = None,
            cancel: Cancel = None, *, scene_graph: SceneGraphSource = None,
            objects: Sequence[str] | None = None, time_limit_s: float | None = None) -> AgentResult:
        source = scene_graph if scene_graph is not None else self.scene_graph
        graph = source() if callable(source) else source
        if not isinstance(graph, Mapping):
            res = AgentResult(status="error", method=self.method, backend=getattr(self.llm, "name", ""),
                              error="llm_visual_obs needs a scene graph (a dict) to describe the scene")
            return res
        observation = describe_scene(graph)
        return self._execute(query, lambda run: self.prompt.user_message(query, context, observation=observation),
                             on_event, cancel, time_limit_s)


# --------------------------------------------------------------------------- Precond
@lru_cache(maxsize=1)
def _precond_table() -> dict:
    return _read_yaml("baseline_precond.yaml")


_STRUCTURED = re.compile(r"^\s*([A-Za-z_][A-Za-z_ ]*?)\s*\(\s*([^()]*?)\s*\)\s*[.?!]?\s*$")


def _key(s: str) -> str:
    return re.sub(r"[\s_\-]", "", str(s)).lower()


class _CheckFailed(Exception):
    pass


class Precond:
    """Table B.3 precondition checks through a :class:`ToolExecutor` (no LLM)."""
    method = "precond"
    name = "precond (no LLM)"

    def __init__(self, tools: ToolExecutor, time_limit_s: float = 20.0):
        self.tools = tools
        self.time_limit_s = float(time_limit_s)

    def run(self, query: str, context: str | None = None, on_event: EventHook | None = None,
            cancel: Cancel = None, *, time_limit_s: float | None = None, **_: Any) -> AgentResult:
        t0 = time.monotonic()
        res = AgentResult(method=self.method, backend=self.name)
        emit = _Events(on_event)
        limit = self.time_limit_s if time_limit_s is None else min(self.time_limit_s, float(time_limit_s))
        try:
            self._run(query, res, emit, cancel, t0 + limit)
        except _CheckFailed:
            pass
        except Exception as e:  # noqa: BLE001 - never raise out of run()
            res.status, res.error, res.issue = "error", f"internal error: {type(e).__name__}: {e}", None
        res.elapsed_s = time.monotonic() - t0
        return res

    def _run(self, query: str, res: AgentResult, emit: _Events, cancel: Cancel, deadline: float) -> None:
        table = _precond_table()
        m = _STRUCTURED.match(query or "")
        if not m:
            return self._fail(res, f"unsupported query: precond handles only structured actions such as "
                                   f"pick(Apple), got {query!r}")
        action = _key(m.group(1))
        action = {_key(k): v for k, v in (table.get("aliases") or {}).items()}.get(action, action)
        spec = (table.get("actions") or {}).get(action)
        if spec is None:
            return self._fail(res, f"unsupported action {m.group(1)!r}: precond knows "
                                   f"{', '.join(table.get('actions') or {})}")
        args = [a.strip().strip("'\"") for a in m.group(2).split(",") if a.strip()]
        required = [a for a in spec["args"] if not a.endswith("?")]
        if not len(required) <= len(args) <= len(spec["args"]):
            return self._fail(res, f"{action} takes {len(required)}..{len(spec['args'])} argument(s) "
                                   f"({', '.join(spec['args'])}), got {len(args)}")
        ctx = _CheckContext(self.tools, res, emit, cancel, deadline)
        grounded: list[str | None] = [None] * len(args)
        passed: list[str] = []
        sentences = table["sentences"]
        for chk in spec["checks"]:
            kind, i = chk["check"], chk.get("arg")
            if i is not None and i >= len(args):
                continue   # optional argument not given
            arg = (grounded[i] or args[i]) if i is not None else None
            ok, values = ctx.check(kind, chk, arg, grounded, i)
            if ok is None:   # skipped
                continue
            if i is not None and grounded[i]:
                arg = grounded[i]
            sentence = fill(sentences[kind]["pass" if ok else "fail"],
                            {"arg": arg, **{k: v for k, v in chk.items() if k != "arg"}, **values})
            if not ok:
                res.issue, res.explanation = "unfeasibility", _sentence(sentence)
                break
            passed.append(sentence)
        else:
            res.issue, res.explanation = "none", _sentence("; ".join(passed))
        res.grounding = [g for g in grounded if g]
        emit("issue", {"turn": 0, "issue": res.issue, "explanation": res.explanation, "grounding": res.grounding})

    @staticmethod
    def _fail(res: AgentResult, reason: str) -> None:
        res.status, res.error, res.issue = "error", reason, None


def _sentence(s: str) -> str:
    return f"{s[:1].upper()}{s[1:]}." if s else ""


class _CheckContext:
    """Runs one Precond check through the tools, caching tool answers within the run."""

    def __init__(self, tools: ToolExecutor, res: AgentResult, emit: _Events, cancel: Cancel, deadline: float):
        self.tools, self.res, self.emit, self.cancel, self.deadline = tools, res, emit, cancel, deadline
        self.cache: dict[tuple, Any] = {}
        self.words = _read_yaml("scene_description.yaml").get("state_words") or {}

    def call(self, name: str, *args: str) -> Any:
        key = (name, *args)
        if key in self.cache:
            return self.cache[key]
        if _is_cancelled(self.cancel):
            self._stop("cancelled")
        if time.monotonic() >= self.deadline:
            self._stop("time limit reached during the precondition checks")
        self.emit("tool_call", {"turn": 0, "index": len(self.res.tool_calls), "name": name, "args": list(args)})
        t0 = time.monotonic()
        try:
            r = self.tools.call(name, list(args), deadline=self.deadline)
        except Exception as e:  # noqa: BLE001 - a broken executor fails the check
            r = ToolResult.fail(f"{type(e).__name__}: {e}")
        r.duration_s = r.duration_s or time.monotonic() - t0
        self.res.tool_calls.append(ToolCallRecord(name, list(args), r.success, r.text if r.success else (r.error or r.text),
                                                  r.duration_s, 0, r.error))
        self.emit("tool_result", {"turn": 0, "name": name, "args": list(args), "success": r.success,
                                  "text": r.text, "error": r.error, "duration_s": r.duration_s})
        if not r.success:
            self._stop(fill(_precond_table()["sentences"]["tool_failed"],
                            {"check": name, "arg": ", ".join(args) or "-", "error": r.error or r.text}))
        self.cache[key] = r.data
        return r.data

    def _stop(self, reason: str) -> None:
        self.res.status, self.res.error, self.res.issue = "error", reason, None
        raise _CheckFailed(reason)

    def present(self) -> list[str]:
        visible = self.call("object_detection") or []
        held = self.call("robot_holding")
        return [str(x) for x in visible] + ([str(held)] if held else [])

    @staticmethod
    def match(name: str, ids: Sequence[str]) -> str | None:
        k = _key(name)
        for i in ids:
            if _key(i) == k:
                return i
        for i in ids:
            if _key(_type_of(i)) == k:
                return i
        return None

    def check(self, kind: str, chk: Mapping[str, Any], arg: str | None, grounded: list, i: int | None
              ) -> tuple[bool | None, dict]:
        if kind == "present":
            hit = self.match(arg, self.present())
            if hit:
                grounded[i] = hit
            return hit is not None, {}
        if kind in ("hand_empty", "holding", "holding_type"):
            held = self.call("robot_holding")
            value = held or "nothing"
            if kind == "hand_empty":
                return held is None, {"value": value}
            if kind == "holding":
                return held is not None and self.match(arg, [str(held)]) is not None, {"value": value}
            return held is not None and _key(_type_of(str(held))) == _key(chk["type"]), {"value": value}
        if kind == "open_if_openable":
            hit = self.match(arg, self.present())
            if hit is None:
                return None, {}
            grounded[i] = hit
            if "openable" not in self._properties(hit):
                return None, {}
            return bool(self._state(hit).get("open")), {}
        if kind == "property":
            return chk["property"] in self._properties(arg), {}
        if kind == "state":
            want = bool(chk["value"])
            pair = self.words.get(chk["key"]) or [chk["key"], f"not {chk['key']}"]
            state = self._state(arg)
            return bool(state.get(chk["key"], False)) == want, {"state_word": pair[0] if want else pair[1]}
        raise ValueError(f"baseline_precond.yaml: unknown check {kind!r}")

    def _properties(self, obj: str) -> list[str]:
        data = self.call("get_obj_properties", obj)
        props = data.get("properties") if isinstance(data, Mapping) else data
        return [str(p) for p in props or []]

    def _state(self, obj: str) -> Mapping[str, Any]:
        data = self.call("get_obj_state", obj)
        state = data.get("state") if isinstance(data, Mapping) else data
        return state if isinstance(state, Mapping) else {}


# --------------------------------------------------------------------------- by name
def make_method(name: str, *, llm: LLM | None = None, tools: ToolExecutor | None = None,
                toolset: str = "household", config: PromptConfig | None = None,
                scene_graph: SceneGraphSource = None, time_limit_s: float = 20.0, **kw: Any):
    """``raider`` (the agent; ``config.procedure`` picks an ablation), ``llm_visual_obs`` or
    ``precond``. Each has ``run(query, context=None, on_event=None, cancel=None)``."""
    if name == "raider":
        if llm is None or tools is None:
            raise ValueError("method raider needs an llm and tools")
        return ProgramFlowManager(llm, tools, IssuePrompt(toolset, config), time_limit_s, **kw)
    if name == "llm_visual_obs":
        if llm is None:
            raise ValueError("method llm_visual_obs needs an llm")
        return LLMVisualObs(llm, scene_graph, config, time_limit_s, **kw)
    if name == "precond":
        if tools is None:
            raise ValueError("method precond needs tools")
        return Precond(tools, time_limit_s)
    raise ValueError(f"unknown method {name!r} (known: {', '.join(METHODS)})")
