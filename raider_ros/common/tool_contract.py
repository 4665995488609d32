"""What the agent needs from its tools, and the toolset files that describe them.

``ToolResult`` is the single definition shared with ``perception/tools.py``: a tool's
result as the LLM sees it (``text`` = ``json.dumps(data)``), the parsed value (``data``)
and, when the call failed, a one-line ``error``.

A ``ToolExecutor`` runs tools by name: ``call(name, args, *, deadline)`` for one call,
``call_many(calls, *, deadline, on_start, on_done)`` for the calls of one LLM turn, run
concurrently on a thread pool. :class:`ToolExecutorBase` gives ``call_many`` to any class
that implements ``call``; :class:`FunctionTools` wraps plain Python functions.

Toolsets (``data/toolsets/<name>.yaml``) list each tool's name, arguments (each with a JSON
schema fragment), the description shown in the prompt and what it returns. A toolset may
``include`` others; its own tools come after the included ones and replace same-named ones.
"""
from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence, runtime_checkable


from raider_ros.common.paths import data_dir
from raider_ros.common.yamlfile import read_yaml_mapping


# --------------------------------------------------------------------------- results
@dataclass
class ToolResult:
    success: bool
    text: str                      # what the LLM reads: json.dumps(data) for a successful call
    data: Any = None               # the parsed result (None when there is none)
    error: str | None = None       # why the call failed (success = False)
    duration_s: float = 0.0        # filled in by call_many
    fatal: bool = False            # the tool backend itself is down: the run cannot go on

    @classmethod
    def ok(cls, data: Any) -> "ToolResult":
        return cls(True, json.dumps(data), data)

    @classmethod
    def fail(cls, error: str, data: Any = None) -> "ToolResult":
        return cls(False, json.dumps(data) if data is not None else error, data, error)

    @classmethod
    def unavailable(cls, error: str) -> "ToolResult":
        """The service behind the tools is down (a dead perception node): the flow manager
        ends the run with status error and this reason instead of asking the LLM again."""
        return cls(False, error, None, error, fatal=True)


ToolCallSpec = tuple[str, Sequence[Any]]          # (name, args)
StartHook = Callable[[int, str, list], None]      # (index, name, args)
DoneHook = Callable[[int, str, list, ToolResult], None]


@runtime_checkable
class ToolExecutor(Protocol):
    def call(self, name: str, args: Sequence[Any], *, deadline: float) -> ToolResult: ...

    def call_many(self, calls: Sequence[ToolCallSpec], *, deadline: float,
                  on_start: StartHook | None = None,
                  on_done: DoneHook | None = None) -> list[ToolResult]: ...


def run_concurrently(call: Callable[..., ToolResult], calls: Sequence[ToolCallSpec], *,
                     deadline: float, on_start: StartHook | None = None,
                     on_done: DoneHook | None = None, max_workers: int = 8) -> list[ToolResult]:
    """Run ``call(name, args, deadline=...)`` for every call on a thread pool; results in
    call order. A call still running at ``deadline`` is reported as failed (its thread is
    left to finish on its own); a call that raises is reported with the exception."""
    calls = [(str(n), list(a)) for n, a in calls]
    if not calls:
        return []

    def one(i: int, name: str, args: list) -> ToolResult:
        if on_start:
            on_start(i, name, args)
        t0 = time.monotonic()
        try:
            res = call(name, args, deadline=deadline)
            if not isinstance(res, ToolResult):
                res = ToolResult.fail(f"tool {name} returned {type(res).__name__}, not a ToolResult")
        except Exception as e:  # noqa: BLE001 - a broken tool is a failed call, not a crash
            res = ToolResult.fail(f"{type(e).__name__}: {e}")
        res.duration_s = time.monotonic() - t0
        if on_done:
            on_done(i, name, args, res)
        return res

    pool = ThreadPoolExecutor(max_workers=min(max_workers, len(calls)), thread_name_prefix="tool")
    try:
        futures = [pool.submit(one, i, n, a) for i, (n, a) in enumerate(calls)]
        wait(futures, timeout=max(0.0, deadline - time.monotonic()))
        out = []
        for (name, _), f in zip(calls, futures):
            if f.done():
                out.append(f.result())
            else:
                f.cancel()
                out.append(ToolResult.fail(f"time limit reached before {name} returned"))
        return out
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


class ToolExecutorBase:
    """Gives ``call_many`` to a class that implements ``call``."""
    max_workers = 8

    def call(self, name: str, args: Sequence[Any], *, deadline: float) -> ToolResult:
        raise NotImplementedError

    def call_many(self, calls: Sequence[ToolCallSpec], *, deadline: float,
                  on_start: StartHook | None = None,
                  on_done: DoneHook | None = None) -> list[ToolResult]:
        return run_concurrently(self.call, calls, deadline=deadline, on_start=on_start,
                                on_done=on_done, max_workers=self.max_workers)


class ToolFailure(Exception):
    """Raised by a function behind :class:`FunctionTools` to fail a call with ``data``."""

    def __init__(self, error: str, data: Any = None):
        super().__init__(error)
        self.error = error
        self.data = data


class FunctionTools(ToolExecutorBase):
    """Tools backed by Python functions ``fn(*args) -> JSON-able result``. A function that
    raises :class:`ToolFailure` (or any exception) fails the call with that message."""

    def __init__(self, functions: Mapping[str, Callable[..., Any]]):
        self.functions = dict(functions)

    def call(self, name: str, args: Sequence[Any], *, deadline: float) -> ToolResult:
        fn = self.functions.get(name)
        if fn is None:
            return ToolResult.fail(f"unknown tool {name!r}")
        if time.monotonic() >= deadline:
            return ToolResult.fail("time limit reached before the call started")
        try:
            return ToolResult.ok(fn(*args))
        except ToolFailure as e:
            return ToolResult.fail(e.error, e.data)
        except TypeError as e:
            return ToolResult.fail(f"bad arguments for {name}: {e}")
        except Exception as e:  # noqa: BLE001 - a broken tool fails its call
            return ToolResult.fail(f"{name} failed: {type(e).__name__}: {e}")


class NoTools(ToolExecutorBase):
    """An executor with no tools (the LLMVisualObs baseline)."""

    def call(self, name: str, args: Sequence[Any], *, deadline: float) -> ToolResult:
        return ToolResult.fail(f"no tools are available (asked for {name!r})")


# --------------------------------------------------------------------------- toolsets
class ToolsetError(ValueError):
    """A toolset file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class ToolArg:
    name: str
    schema: Mapping[str, Any]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    args: tuple[ToolArg, ...]
    description: str
    returns: str = ""

    @property
    def arg_names(self) -> list[str]:
        return [a.name for a in self.args]

    def signature(self) -> str:
        return f"{self.name}({', '.join(self.arg_names)})"

    def json_schema(self) -> dict:
        return {
            "type": "object",
            "properties": {a.name: dict(a.schema) for a in self.args},
            "required": self.arg_names,
            "additionalProperties": False,
        }


@dataclass(frozen=True)
class Toolset:
    name: str
    tools: tuple[ToolSpec, ...]
    source: str = "<memory>"
    description: str = ""

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tools]

    def get(self, name: str) -> ToolSpec | None:
        for t in self.tools:
            if t.name == name:
                return t
        return None

    def openai_tools(self) -> list[dict]:
        """The ``tools`` parameter of an OpenAI chat completion (native tool calling)."""
        return [{"type": "function",
                 "function": {"name": t.name,
                              "description": (t.description + (f" Returns: {t.returns}" if t.returns else "")).strip(),
                              "parameters": t.json_schema()}}
                for t in self.tools]


def toolsets_dir() -> Path:
    return data_dir() / "toolsets"


def resolve_toolset(name_or_path: str | Path) -> Path:
    p = Path(name_or_path).expanduser()
    if p.suffix in (".yaml", ".yml") and p.is_file():
        return p
    cand = toolsets_dir() / f"{name_or_path}.yaml"
    if cand.is_file():
        return cand
    known = sorted(f.stem for f in toolsets_dir().glob("*.yaml"))
    raise ToolsetError(f"toolset {str(name_or_path)!r} not found (known: {', '.join(known) or 'none'})")


def load_toolset(name_or_path: str | Path, _seen: tuple[str, ...] = ()) -> Toolset:
    path = resolve_toolset(name_or_path)
    key = str(path.resolve())
    if key in _seen:
        raise ToolsetError(f"{path.name}: include cycle ({' -> '.join(Path(s).name for s in (*_seen, key))})")
    doc, _ = read_yaml_mapping(path, what="toolset file", error=ToolsetError)
    tools: dict[str, ToolSpec] = {}
    includes = doc.get("include") or []
    for inc in [includes] if isinstance(includes, str) else includes:
        for t in load_toolset(inc, (*_seen, key)).tools:
            tools[t.name] = t
    for i, raw in enumerate(doc.get("tools") or []):
        spec = _parse_tool(raw, f"{path.name}: tools[{i}]")
        tools[spec.name] = spec
    for name in doc.get("exclude") or []:
        tools.pop(name, None)
    if not tools:
        raise ToolsetError(f"{path.name}: no tools")
    return Toolset(name=str(doc.get("name") or path.stem), tools=tuple(tools.values()),
                   source=str(path), description=str(doc.get("description") or ""))


def _parse_tool(raw: Any, where: str) -> ToolSpec:
    if not isinstance(raw, dict):
        raise ToolsetError(f"{where}: expected a mapping, got {raw!r}")
    name = raw.get("name")
    if not isinstance(name, str) or not name.isidentifier():
        raise ToolsetError(f"{where}.name: expected an identifier, got {name!r}")
    desc = raw.get("description")
    if not isinstance(desc, str) or not desc.strip():
        raise ToolsetError(f"{where} ({name}).description: missing")
    args = []
    for j, a in enumerate(raw.get("args") or []):
        if isinstance(a, str):
            a = {"name": a}
        if not isinstance(a, dict) or not isinstance(a.get("name"), str):
            raise ToolsetError(f"{where} ({name}).args[{j}]: expected {{name, schema}}, got {a!r}")
        schema = a.get("schema") or {"type": "string"}
        if not isinstance(schema, dict) or "type" not in schema:
            raise ToolsetError(f"{where} ({name}).args[{j}].schema: expected a JSON schema with a type")
        args.append(ToolArg(a["name"], schema))
    return ToolSpec(name=name, args=tuple(args), description=" ".join(desc.split()),
                    returns=" ".join(str(raw.get("returns") or "").split()))


# --------------------------------------------------------------------------- the catalogue
def tool_catalogue(folder: Path | None = None) -> dict[str, ToolSpec]:
    """Every tool of every toolset file (``data/toolsets/*.yaml``), by name: the one source of
    truth for tool names and arguments. The implementations (``perception.toolbox.ToolBox``)
    and the rules backend are checked against it. A tool described with different arguments
    in two files is a :class:`ToolsetError`."""
    folder = folder or toolsets_dir()
    key = str(folder)
    if key not in _CATALOGUES:
        out: dict[str, ToolSpec] = {}
        where: dict[str, str] = {}
        for f in sorted(folder.glob("*.yaml")):
            for spec in load_toolset(f).tools:
                prev = out.get(spec.name)
                if prev is not None and prev.arg_names != spec.arg_names:
                    raise ToolsetError(f"tool {spec.name} has arguments {prev.arg_names} in {where[spec.name]} "
                                       f"but {spec.arg_names} in {f.name}")
                out.setdefault(spec.name, spec)
                where.setdefault(spec.name, f.name)
        _CATALOGUES[key] = out
    return dict(_CATALOGUES[key])


_CATALOGUES: dict[str, dict[str, ToolSpec]] = {}


def check_implementations(catalogue: Mapping[str, ToolSpec], implemented: Mapping[str, Sequence[str]],
                          what: str = "implementation") -> None:
    """Raise :class:`ToolsetError` naming every disagreement between the catalogue (tool ->
    argument names) and the implemented tools (tool -> parameter names)."""
    problems = []
    for name, spec in sorted(catalogue.items()):
        if name not in implemented:
            problems.append(f"{name}: described in data/toolsets but has no {what}")
        elif list(implemented[name]) != spec.arg_names:
            problems.append(f"{name}: data/toolsets says {spec.signature()}, the {what} takes "
                            f"{name}({', '.join(implemented[name])})")
    for name in sorted(set(implemented) - set(catalogue)):
        problems.append(f"{name}: has an {what} but no toolset file describes it")
    if problems:
        raise ToolsetError("toolsets and tools disagree: " + "; ".join(problems))
