"""The program flow manager (paper §3.2): the loop between the LLM and the tools.

Each turn the LLM's reply is searched for tool calls and a final response. Tool calls are
run (the calls of one turn concurrently) and their results go back as user messages; a final
response with no tool calls ends the run. Four warnings go back to the LLM when something is
off: (1) a final response next to tool calls, (2) a tool that does not exist, (3) a tool call
that failed or could not be read, (4) neither tool calls nor a final response.

The run has a hard time limit: the LLM and the tools get it as ``deadline``, and the manager
stops waiting for them when it passes. Nothing raises out of :meth:`ProgramFlowManager.run`:
every failure is an :class:`AgentResult` with ``status="error"`` and a reason.

Events, ``on_event(stage, payload)`` (called one at a time, possibly from tool threads):

- ``ground`` / ``ask`` / ``answer`` / ``issue`` — ``{"turn", "text"}``: a procedure step, from the
  step headings the model writes (without headings: tool calls are ``answer``); the final
  ``issue`` event carries ``{"turn", "issue", "explanation", "grounding"}`` instead of text.
- ``tool_call`` — ``{"turn", "index", "name", "args"}`` when a call starts.
- ``tool_result`` — ``{"turn", "index", "name", "args", "success", "text", "error", "duration_s"}``.
- ``warning`` — ``{"number", "title", "message", "turn"}``.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from raider_ros.agent.llm import LLM, LLMError, LLMReply
from raider_ros.agent.parsing import ParsedReply, ToolCall, parse_reply
from raider_ros.agent.prompt import IssuePrompt
from raider_ros.common.token_count import PER_MESSAGE, PER_REPLY, count_tokens
from raider_ros.common.tool_contract import ToolExecutor, ToolResult, run_concurrently

log = logging.getLogger(__name__)

EventHook = Callable[[str, dict], None]
Cancel = Callable[[], bool] | threading.Event | None
STAGES = ("ground", "ask", "answer", "issue")
_LATE_GRACE_S = 0.1   # how long past the deadline a backend may take to raise its own error


@dataclass
class ToolCallRecord:
    name: str
    args: list
    success: bool
    result: str                 # the tool's text result, or the failure reason
    duration_s: float = 0.0
    turn: int = 0               # LLM turn that asked for it (0: asked by the manager itself)
    error: str | None = None


@dataclass
class AgentWarning:
    number: int                 # 1..4 as in the paper
    title: str
    message: str                # the message sent to the LLM
    turn: int


@dataclass
class AgentResult:
    issue: str | None = None                  # none | ambiguity | unfeasibility (None on error)
    explanation: str = ""
    grounding: list[str] = field(default_factory=list)
    status: str = "ok"                        # ok | error
    error: str | None = None                  # why the run failed (status error)
    llm_turns: int = 0
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_estimated: bool = False            # True when some counts are tiktoken estimates
    elapsed_s: float = 0.0
    llm_s: float = 0.0                        # time spent waiting for the LLM
    transcript: list[dict] = field(default_factory=list)
    warnings: list[AgentWarning] = field(default_factory=list)
    backend: str = ""
    method: str = "raider"

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


class _Events:
    """Calls the user's hook, one event at a time (tool events come from worker threads);
    a hook that raises is logged, never allowed to break the run."""

    def __init__(self, hook: EventHook | None):
        self.hook = hook
        self.lock = threading.Lock()

    def __call__(self, stage: str, payload: dict) -> None:
        if self.hook is None:
            return
        with self.lock:
            try:
                self.hook(stage, payload)
            except Exception:  # noqa: BLE001
                log.exception("on_event hook failed for %s", stage)


def _is_cancelled(cancel: Cancel) -> bool:
    if cancel is None:
        return False
    if isinstance(cancel, threading.Event):
        return cancel.is_set()
    try:
        return bool(cancel())
    except Exception:  # noqa: BLE001 - a broken cancel hook counts as "not cancelled"
        log.exception("cancel hook failed")
        return False


def _wait_for(fn: Callable[[], Any], deadline: float, cancel: Cancel) -> tuple[str, Any]:
    """Run ``fn`` in a worker thread; stop waiting at the deadline or on cancel.
    Returns ("ok", value) | ("raised", exception) | ("timeout", None) | ("cancelled", None)."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - handed back to the caller
            box["error"] = e
        finally:
            done.set()

    threading.Thread(target=target, daemon=True, name="raider-wait").start()
    step = 0.02 if cancel is not None else None
    while True:
        left = deadline + _LATE_GRACE_S - time.monotonic()
        if done.wait(max(0.0, min(left, step) if step else left)):
            break
        if _is_cancelled(cancel):
            if done.is_set():          # finished while the hook was asked: keep the answer
                break
            return "cancelled", None
        if time.monotonic() >= deadline + _LATE_GRACE_S:
            return "timeout", None
    if "error" in box:
        return "raised", box["error"]
    return "ok", box.get("value")


class ProgramFlowManager:
    """``run(query, context)`` asks ``llm`` to detect issues with ``tools`` under ``prompt``."""
    method = "raider"

    def __init__(self, llm: LLM, tools: ToolExecutor, prompt: IssuePrompt | None = None,
                 time_limit_s: float = 20.0, max_turns: int = 12):
        if time_limit_s <= 0:
            raise ValueError(f"time_limit_s must be positive, got {time_limit_s}")
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        self.llm = llm
        self.tools = tools
        self.prompt = prompt or IssuePrompt()
        self.time_limit_s = float(time_limit_s)
        self.max_turns = int(max_turns)

    # ------------------------------------------------------------------ public
    def run(self, query: str, context: str | None = None, on_event: EventHook | None = None,
            cancel: Cancel = None, *, objects: Sequence[str] | None = None,
            time_limit_s: float | None = None) -> AgentResult:
        """``time_limit_s``: a shorter limit for this run (a caller's deadline), else the manager's."""
        def first_user(run: _Run) -> str:
            objs = objects
            if objs is None and self.prompt.config.include_objects_in_sight and self._has_tool("object_detection"):
                objs = run.detect_objects()
            return self.prompt.user_message(query, context, objects=objs)

        return self._execute(query, first_user, on_event, cancel, time_limit_s)

    # ------------------------------------------------------------------ shared by the variants
    def _execute(self, query: str, first_user: Callable[["_Run"], str], on_event: EventHook | None,
                 cancel: Cancel, time_limit_s: float | None = None) -> AgentResult:
        t0 = time.monotonic()
        limit = self.time_limit_s if time_limit_s is None else max(0.0, min(self.time_limit_s, float(time_limit_s)))
        run = (getattr(self, "run_class", None) or _Run)(self, t0 + limit, _Events(on_event), cancel)
        run.limit_s = limit
        try:
            if not isinstance(query, str) or not query.strip():
                run.fail("empty query: nothing to check")
            else:
                first = first_user(run)
                if run.res.status == "ok":
                    run.loop(first)
        except Exception as e:  # noqa: BLE001 - a bug must not take the caller down with it
            log.exception("agent run failed")
            run.fail(f"internal error: {type(e).__name__}: {e}")
        run.res.elapsed_s = time.monotonic() - t0
        run.res.transcript = list(run.messages)
        return run.res

    def _has_tool(self, name: str) -> bool:
        return self.prompt.toolset is not None and self.prompt.toolset.get(name) is not None


class _Run:
    """The state of one run: messages, result, deadline."""

    def __init__(self, pfm: ProgramFlowManager, deadline: float, emit: _Events, cancel: Cancel):
        self.pfm, self.deadline, self.emit, self.cancel = pfm, deadline, emit, cancel
        self.limit_s = pfm.time_limit_s
        self.prompt = pfm.prompt
        self.res = AgentResult(backend=getattr(pfm.llm, "name", type(pfm.llm).__name__), method=pfm.method)
        self.messages: list[dict] = []
        self._msg_tokens: list[int] = []

    # ------------------------------------------------------------------ outcome
    def fail(self, reason: str) -> None:
        self.res.status, self.res.error, self.res.issue = "error", reason, None

    def time_up_reason(self, detail: str = "") -> str:
        r = self.res
        reason = (f"time limit of {self.limit_s:g} s reached after {r.llm_turns} LLM turn(s) "
                  f"and {len(r.tool_calls)} tool call(s) without a final response")
        return f"{reason} ({detail})" if detail else reason

    # ------------------------------------------------------------------ conversation
    def add(self, role: str, content: str) -> None:
        self.messages.append({"role": role, "content": content})
        self._msg_tokens.append(PER_MESSAGE + count_tokens(content))

    def warn(self, number: int, turn: int, **values: Any) -> None:
        title, text = self.prompt.warning(number, **values)
        self.add("user", text)
        w = AgentWarning(number, title, text, turn)
        self.res.warnings.append(w)
        self.emit("warning", dataclasses.asdict(w))

    # ------------------------------------------------------------------ the loop
    def loop(self, first_user: str) -> None:
        self.add("system", self.prompt.system)
        self.add("user", first_user)
        for turn in range(1, self.pfm.max_turns + 1):
            if _is_cancelled(self.cancel):
                return self.fail("cancelled")
            if time.monotonic() >= self.deadline:
                return self.fail(self.time_up_reason())
            reply = self.ask_llm()
            if reply is None:
                return
            self.res.llm_turns = turn
            parsed = parse_reply(reply.text or "", self.prompt.issue_ids)
            calls = list(parsed.tool_calls)
            for c in reply.tool_calls or []:       # native tool calls
                if c.get("error") or not c.get("tool"):
                    parsed.call_errors.append(f"the tool call {json.dumps(c)[:120]} could not be read: "
                                              f"{c.get('error') or 'no tool name'}")
                else:
                    calls.append(ToolCall(str(c["tool"]), list(c.get("args") or [])))
            self.add("assistant", _assistant_text(reply, calls[len(parsed.tool_calls):]))
            self.report_stages(turn, parsed, calls)
            if calls or parsed.call_errors:
                if parsed.final is not None:
                    self.warn(1, turn)
                if not self.run_tools(turn, calls, parsed.call_errors):
                    return
                continue
            if parsed.final is not None:
                f = parsed.final
                grounding = f.grounding if f.grounding_given else grounding_from_calls(self.res.tool_calls, self.prompt.toolset)
                self.res.issue, self.res.explanation, self.res.grounding = f.issue, f.explanation, grounding
                self.emit("issue", {"turn": turn, "issue": f.issue, "explanation": f.explanation,
                                    "grounding": grounding})
                return
            self.warn(4, turn, detail=f" (the final response could not be read: {parsed.final_error})"
                      if parsed.final_error else "")
        self.fail(f"no final response after {self.pfm.max_turns} LLM turns (the turn limit)"
                  + self._unusable_replies_note())

    def _unusable_replies_note(self) -> str:
        """Name the cause when the LLM's last replies were unusable (garbage, prose only)."""
        recent = [w for w in self.res.warnings if w.number == 4]
        if len(recent) < 2 or recent[-1].turn != self.pfm.max_turns:
            return ""
        last = next((m["content"] for m in reversed(self.messages) if m["role"] == "assistant"), "")
        sample = " ".join(str(last).split())[:80]
        return (f"; the LLM's last {len(recent)} replies held neither a tool call nor a final response "
                f"(garbage or off-protocol output, e.g. {sample!r})")

    def ask_llm(self) -> LLMReply | None:
        llm, messages = self.pfm.llm, list(self.messages)
        t0 = time.monotonic()
        kind, value = _wait_for(lambda: llm.complete(messages, deadline=self.deadline),
                                self.deadline, self.cancel)
        self.res.llm_s += time.monotonic() - t0
        late = time.monotonic() >= self.deadline
        if kind == "cancelled":
            self.fail("cancelled")
        elif kind == "timeout":
            self.fail(self.time_up_reason("no answer from the LLM in time"))
        elif kind == "raised":
            detail = value.reason if isinstance(value, LLMError) else f"{type(value).__name__}: {value}"
            self.fail(self.time_up_reason(f"LLM: {detail}") if late
                      else f"LLM backend {self.res.backend} failed: {detail}")
        elif not isinstance(value, LLMReply):
            self.fail(f"LLM backend {self.res.backend} returned {type(value).__name__}, not an LLMReply")
        else:
            self.count_tokens(value)
            return value
        return None

    def count_tokens(self, reply: LLMReply) -> None:
        if reply.prompt_tokens:
            self.res.prompt_tokens += int(reply.prompt_tokens)
        else:
            self.res.prompt_tokens += PER_REPLY + sum(self._msg_tokens)
            self.res.tokens_estimated = True
        if reply.completion_tokens:
            self.res.completion_tokens += int(reply.completion_tokens)
        else:
            self.res.completion_tokens += count_tokens(reply.text or "")
            self.res.tokens_estimated = True

    def report_stages(self, turn: int, parsed: ParsedReply, calls: list[ToolCall]) -> None:
        stages = [(s, t) for s, t in parsed.stages
                  if not (s == "issue" and parsed.final is not None and not calls)]  # reported with the result
        if not stages and calls:
            stages = [("answer", "")]
        for stage, text in stages:
            self.emit(stage, {"turn": turn, "text": text[:1000]})

    # ------------------------------------------------------------------ tools
    def run_tools(self, turn: int, calls: list[ToolCall], call_errors: list[str]) -> bool:
        """Run a turn's calls and append their results; False when the run must stop."""
        toolset = self.prompt.toolset
        todo: list[tuple[int, ToolCall]] = []
        notes: dict[int, tuple[int, dict]] = {}    # call index -> (warning number, values)
        for i, c in enumerate(calls):
            spec = toolset.get(c.tool) if toolset is not None else None
            if spec is None:
                names = ", ".join(toolset.names) if toolset is not None else "none"
                notes[i] = (2, {"tool": c.tool, "tools": names})
            elif len(c.args) != len(spec.args) and spec.args:
                notes[i] = (3, {"detail": f"{c.tool} takes {len(spec.args)} argument(s), "
                                          f"got {len(c.args)}: {json.dumps(c.args)}.",
                                "expected": spec.signature()})
            else:
                if not spec.args:
                    c.args = []
                todo.append((i, c))
        results = self.call_tools([(c.tool, c.args) for _, c in todo], turn)
        if results is None:
            return False
        fatal = next((r for r in results if r.fatal), None)
        if fatal is not None:
            self.fail(f"tools unavailable: {fatal.error}")
            return False
        by_index = dict(zip((i for i, _ in todo), results))
        for i, c in enumerate(calls):
            if i in notes:
                number, values = notes[i]
                self.warn(number, turn, **values)
                continue
            r = by_index[i]
            if r.success:
                self.add("user", self.prompt.tool_message(c.tool, c.args, r.text))
            else:
                reason = r.error or r.text
                if r.data is not None and r.text and r.text not in reason:
                    reason = f"{reason} {r.text}"
                self.warn(3, turn, expected=toolset.get(c.tool).signature(),
                          detail=self.prompt.tool_message(c.tool, c.args, reason, failed=True) + ".")
        for err in call_errors:
            self.warn(3, turn, detail=f"{err[0].upper()}{err[1:]}.", expected="see the tool list")
        return True

    def call_tools(self, calls: list[tuple[str, list]], turn: int) -> list[ToolResult] | None:
        if not calls:
            return []
        emit = self.emit

        def on_start(i: int, name: str, args: list) -> None:
            emit("tool_call", {"turn": turn, "index": i, "name": name, "args": args})

        def on_done(i: int, name: str, args: list, r: ToolResult) -> None:
            emit("tool_result", {"turn": turn, "index": i, "name": name, "args": args, "success": r.success,
                                 "text": r.text, "error": r.error, "duration_s": r.duration_s})

        tools = self.pfm.tools
        if hasattr(tools, "call_many"):
            fn = lambda: tools.call_many(calls, deadline=self.deadline, on_start=on_start, on_done=on_done)  # noqa: E731
        else:
            fn = lambda: run_concurrently(tools.call, calls, deadline=self.deadline,  # noqa: E731
                                          on_start=on_start, on_done=on_done)
        kind, value = _wait_for(fn, self.deadline, self.cancel)
        if kind == "cancelled":
            self.fail("cancelled")
            return None
        if kind == "timeout":
            self.fail(self.time_up_reason("waiting for tools"))
            return None
        if kind == "raised" or not isinstance(value, list) or len(value) != len(calls):
            detail = f"{type(value).__name__}: {value}" if kind == "raised" else "wrong number of results"
            value = [ToolResult.fail(f"tool executor failed: {detail}") for _ in calls]
        for (name, args), r in zip(calls, value):
            self.res.tool_calls.append(ToolCallRecord(name, list(args), r.success,
                                                      r.text if r.success else (r.error or r.text),
                                                      r.duration_s, turn, r.error))
        return value

    def detect_objects(self) -> list[str] | None:
        """The objects in sight for the first user message (asked by the manager, turn 0)."""
        results = self.call_tools([("object_detection", [])], 0)
        if results and results[0].success and isinstance(results[0].data, list):
            return [str(x) for x in results[0].data]
        return None


_ID_KEYS = ("object", "target", "human")


def grounding_from_calls(records: Sequence[ToolCallRecord], toolset: Any) -> list[str]:
    """The grounding of a final response that gives none (the paper's format): the object and
    person arguments of the run's successful tool calls, as the ids the tools resolved them to
    ("mug" -> Mug_1, Mug_2), in the order first asked. An argument is an object argument unless
    its schema is an enumeration (a relation name) or it is a free-text query."""
    out: list[str] = []

    def add(x: Any) -> None:
        s = str(x).strip()
        if s and s not in out:
            out.append(s)

    for rec in records:
        spec = toolset.get(rec.name) if toolset is not None else None
        if not rec.success or spec is None or not rec.args:
            continue
        objects = [a for a, arg in zip(rec.args, spec.args)
                   if "enum" not in arg.schema and arg.name != "query"]
        if not objects:
            continue
        try:
            data = json.loads(rec.result)
        except (TypeError, ValueError):
            data = None
        named: list[str] = []
        for entry in data if isinstance(data, list) else [data]:
            if isinstance(entry, dict):
                named += [str(entry[k]) for k in _ID_KEYS if isinstance(entry.get(k), str)]
                if isinstance(entry.get("objects"), list):
                    named += [str(x) for x in entry["objects"]]
        for x in named or objects:
            add(x)
    return out


def _assistant_text(reply: LLMReply, native: list[ToolCall]) -> str:
    """The assistant message as kept in the conversation: native tool calls are written out in
    the text protocol, so every transcript reads the same whatever the backend."""
    lines = [reply.text.strip()] if reply.text and reply.text.strip() else []
    lines += [f'call_tool{json.dumps({"tool": c.tool, "args": c.args})}' for c in native]
    return "\n".join(lines)
