"""RAIDER with scene-graph retrieval: the issue detector's first message lists the retrieved
subgraph (or the whole graph), tool arguments and thoughts self-query further objects, and in
mode ``rag`` the agent may ask for the whole graph with a tool of its own.

``retrieve(task, context, *, mode, full=False, self_query=()) -> Subgraph`` is the one thing
the detector needs of retrieval: a local :class:`~raider_ros.retrieval.retriever.Retriever`
(:func:`local_retrieve`) or the scene_graph node's ``scene_graph/retrieve`` service.
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from raider_ros.agent.factory import DetectorSettings, build_detector, make_backend
from raider_ros.agent.flow import ProgramFlowManager, _Run
from raider_ros.agent.parsing import ToolCall
from raider_ros.agent.prompt import IssuePrompt, PromptConfig
from raider_ros.common.token_count import count_tokens
from raider_ros.common.tool_contract import ToolExecutorBase, ToolResult, ToolSpec, Toolset, load_toolset

from .retriever import MODES, RetrievalError, Retriever, Subgraph
from .scene_text import scene_text, templates, update_text

DETECTOR_MODES = ("off", *MODES)
Retrieve = Callable[..., Subgraph]
_CALL_LINE = re.compile(r"call_tool\s*\{.*", re.S)


def local_retrieve(retriever: Retriever) -> Retrieve:
    """A retrieve function over an in-process retriever (stateless per call, as the service)."""
    def retrieve(task: str, context: str = "", *, mode: str | None = None, full: bool = False,
                 self_query: Sequence[str] = ()) -> Subgraph:
        sub = retriever.retrieve(task, context, mode=mode, full=full)
        if self_query and not sub.full:
            retriever.self_query(sub, self_query)
        return sub
    return retrieve


def full_graph_tool() -> ToolSpec:
    t = templates()["full_graph_tool"]
    return ToolSpec(name=str(t["name"]), args=(), description=" ".join(str(t["description"]).split()),
                    returns=" ".join(str(t.get("returns") or "").split()))


@dataclass
class RetrievalRecord:
    """What retrieval did in the last run (for reports and the transcript topic)."""
    mode: str
    subgraph: Subgraph | None = None
    scene_tokens: int = 0                # the scene's representation in the first message
    first_message_tokens: int = 0
    self_queried: list[str] = field(default_factory=list)
    full_graph_requests: int = 0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        sub = self.subgraph
        return {"mode": self.mode, "scene_tokens": self.scene_tokens, "first_message_tokens": self.first_message_tokens,
                "retrieved": sub.ids if sub is not None else [], "total_objects": sub.total_objects if sub else 0,
                "retrieve_ms": round(sub.elapsed_ms, 3) if sub else None, "entities": sub.entities if sub else [],
                "self_queried": list(self.self_queried), "full_graph_requests": self.full_graph_requests,
                "error": self.error}


class RetrievalTools(ToolExecutorBase):
    """The scene-graph tools, plus the whole-graph tool of mode ``rag``."""

    def __init__(self, inner: Any, owner: "RetrievalFlowManager"):
        self.inner, self.owner = inner, owner
        self.full_tool = full_graph_tool().name

    def call(self, name: str, args: Sequence[Any] = (), *, deadline: float = float("inf")) -> ToolResult:
        if name == self.full_tool:
            if self.owner.mode != "rag":
                return ToolResult.fail(f"{name} is not available in retrieval mode {self.owner.mode}")
            try:
                sub = self.owner.retrieve(*self.owner.current_task(), mode="rag", full=True)
            except (RetrievalError, OSError, RuntimeError) as exc:
                return ToolResult.fail(f"{name}: {exc}")
            with self.owner.lock:
                if self.owner.last is not None:
                    self.owner.last.full_graph_requests += 1
            st = scene_text(sub)
            return ToolResult.ok({"objects_in_sight": st.in_sight,
                                  "remembered": [{"id": i, **{k: v for k, v in sub.nodes[i].attributes.items()
                                                              if k in ("room", "last_relation", "state")}}
                                                 for i in sub.remembered()]})
        return self.inner.call(name, args, deadline=deadline)


class _RetrievalRun(_Run):
    """A run whose tool turns self-query the scene graph."""

    def run_tools(self, turn: int, calls: list[ToolCall], call_errors: list[str]) -> bool:
        ok = super().run_tools(turn, calls, call_errors)
        pfm: RetrievalFlowManager = self.pfm  # type: ignore[assignment]
        rec = pfm.last
        if not ok or rec is None or rec.subgraph is None or pfm.mode == "full" or not pfm.self_query:
            return ok
        texts = [str(a) for c in calls for a in c.args]
        last = next((m["content"] for m in reversed(self.messages) if m["role"] == "assistant"), "")
        thoughts = _CALL_LINE.sub("", str(last)).strip()
        if thoughts:
            texts.append(thoughts)
        try:
            sub = pfm.retrieve(*pfm.current_task(), mode=pfm.mode, self_query=texts)
        except (RetrievalError, OSError, RuntimeError) as exc:
            rec.error = f"self-query failed: {exc}"
            return ok
        known = set(rec.subgraph.ids) | set(rec.self_queried)
        new = [i for i in sub.ids if i not in known and sub.nodes[i].attributes.get("kind") == "object"]
        if new:
            rec.self_queried += new
            self.add("user", update_text(sub, new))
            self.emit("retrieval", {"turn": turn, "self_query": new})
        return ok


class RetrievalFlowManager(ProgramFlowManager):
    """RAIDER's program flow with the scene graph retrieved for the task."""
    run_class = _RetrievalRun

    def __init__(self, llm: Any, tools: Any, prompt: IssuePrompt, retrieve: Retrieve, mode: str, *,
                 self_query: bool = True, time_limit_s: float = 20.0, max_turns: int = 12):
        if mode not in MODES:
            raise ValueError(f"unknown retrieval mode {mode!r}; known: {', '.join(MODES)}")
        self.retrieve = retrieve
        self.mode = mode
        self.self_query = self_query
        self.lock = threading.Lock()
        self.last: RetrievalRecord | None = None
        self._task: tuple[str, str] = ("", "")
        super().__init__(llm, RetrievalTools(tools, self), prompt, time_limit_s=time_limit_s, max_turns=max_turns)

    def current_task(self) -> tuple[str, str]:
        return self._task

    def run(self, query: str, context: str | None = None, on_event=None, cancel=None, *, objects=None,
            time_limit_s: float | None = None):
        self._task = (query if isinstance(query, str) else "", context or "")
        rec = self.last = RetrievalRecord(self.mode)

        def first_user(run: _Run) -> str:
            try:
                sub = self.retrieve(query, context or "", mode=self.mode)
            except (RetrievalError, OSError, RuntimeError) as exc:
                rec.error = str(exc)
                run.fail(f"scene-graph retrieval failed: {exc}")
                return ""
            st = scene_text(sub)
            text = "\n".join([self.prompt.user_message(query, context, objects=st.in_sight), *st.lines])
            rec.subgraph, rec.scene_tokens, rec.first_message_tokens = sub, st.tokens, count_tokens(text)
            run.emit("retrieval", {"turn": 0, "mode": self.mode, "ids": sub.ids, "tokens": st.tokens,
                                   "total_objects": sub.total_objects})
            return text

        return self._execute(query, first_user, on_event, cancel, time_limit_s)


def build_retrieval_detector(s: DetectorSettings, tools: Any, retrieve: Retrieve | None, mode: str = "off", *,
                             self_query: bool = True, scene_graph: Callable[[], Any] | None = None):
    """The detector of :func:`raider_ros.agent.factory.build_detector`, with retrieval in ``mode``
    (``off``: exactly that detector). Baselines never retrieve."""
    if mode not in DETECTOR_MODES:
        raise ValueError(f"unknown retrieval mode {mode!r}; known: {', '.join(DETECTOR_MODES)}")
    if mode == "off" or s.method != "raider":
        return build_detector(s, tools, scene_graph=scene_graph)
    if retrieve is None:
        raise ValueError(f"retrieval mode {mode} needs a retriever (a scene graph or the retrieve service)")
    config = PromptConfig(procedure=s.procedure, tool_protocol=s.tool_protocol).with_facts(
        reach_m=s.reach_m, handover_distance_m=s.handover_distance_m)
    base = load_toolset(s.toolset)
    toolset = Toolset(base.name, base.tools + ((full_graph_tool(),) if mode == "rag" else ()), base.source,
                      base.description)
    prompt = IssuePrompt(toolset, config)
    return RetrievalFlowManager(make_backend(s, prompt.toolset), tools, prompt, retrieve, mode,
                                self_query=self_query, time_limit_s=s.time_limit_s, max_turns=s.max_turns)


def subgraph_from_json(text: str) -> Subgraph:
    """A :class:`Subgraph` from :meth:`Subgraph.to_dict` JSON (the retrieve service's answer)."""
    from .retriever import RetrievedNode
    d = json.loads(text)
    sub = Subgraph(task=str(d.get("task", "")), mode=str(d.get("mode", "rag")), full=bool(d.get("full")),
                   entities=list(d.get("entities") or []), total_objects=int(d.get("total_objects") or 0),
                   elapsed_ms=float(d.get("elapsed_ms") or 0.0), stamp=float(d.get("stamp") or 0.0))
    for n in d.get("nodes") or []:
        attrs = {k: v for k, v in n.items() if k not in ("id", "score", "reasons")}
        sub.nodes[str(n["id"])] = RetrievedNode(str(n["id"]), float(n.get("score", 0.0)), list(n.get("reasons") or []), attrs)
    sub.edges = [(e["subject"], e["relation"], e["object"]) for e in d.get("edges") or []]
    return sub
