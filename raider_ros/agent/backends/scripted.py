"""``scripted``: replays recorded LLM replies from a fixture file (YAML or JSON).

Fixture format (``raider-llm-script/1``)::

    format: raider-llm-script/1
    name: household-basics          # optional; the backend is named "scripted:<name>"
    delay_s: 0.0                    # optional default delay before every reply
    scripts:                        # replies per query ...
      - query: "pick(Apple)"        # matched inside the first user message (case and spacing ignored)
        turns:
          - "plain reply text"
          - text: "reply text"
            delay_s: 1.0            # simulated thinking time (never past the caller's deadline)
            usage: {prompt_tokens: 900, completion_tokens: 60}
          - tool_calls: [{tool: object_detection, args: []}]   # native tool calls
          - error: "HTTP 500"       # the backend fails with this reason
    responses: [...]                # ... and/or replies in order, for any query

With ``scripts`` the reply is chosen by query (longest matching query wins) and by the
number of assistant messages already in the conversation; ``responses`` are handed out in
order across calls. A conversation that runs past its script is an :class:`LLMError`.
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Sequence

import yaml

from raider_ros.agent.backends import register_llm
from raider_ros.agent.llm import LLMError, LLMReply, Message

FORMAT = "raider-llm-script/1"


def _norm(s: str) -> str:
    """Case, spacing and double quotes ignored (the prompt writes values as quoted data)."""
    return " ".join(s.replace('\\"', '"').replace('"', " ").lower().split())


def _turn(raw: Any, where: str) -> dict:
    if isinstance(raw, str):
        return {"text": raw}
    if not isinstance(raw, dict) or not ({"text", "tool_calls", "error"} & set(raw)):
        raise ValueError(f"{where}: a turn is a string or a mapping with text, tool_calls or error; got {raw!r}")
    return raw


class ScriptedLLM:
    def __init__(self, fixture: str | Path | dict | None = None, *, responses: Sequence[Any] | None = None,
                 delay_s: float | None = None, name: str | None = None):
        doc: dict = {}
        source = "<memory>"
        if isinstance(fixture, (str, Path)):
            path = Path(fixture)
            source = path.name
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as e:
                raise ValueError(f"scripted backend: cannot read fixture {path}: {e.strerror}") from None
            try:
                doc = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
            except (ValueError, yaml.YAMLError) as e:
                raise ValueError(f"scripted backend: {path.name} is not valid YAML/JSON: {e}") from None
        elif isinstance(fixture, dict):
            doc = fixture
        if not isinstance(doc, dict):
            raise ValueError(f"scripted backend: {source}: expected a mapping at the top level")
        if doc.get("format", FORMAT) != FORMAT:
            raise ValueError(f"scripted backend: {source}: format must be {FORMAT}, got {doc.get('format')!r}")
        self.delay_s = float(delay_s if delay_s is not None else doc.get("delay_s", 0.0))
        self.scripts: list[tuple[str, list[dict]]] = []
        for i, s in enumerate(doc.get("scripts") or []):
            if not isinstance(s, dict) or not isinstance(s.get("query"), str) or not isinstance(s.get("turns"), list):
                raise ValueError(f"scripted backend: {source}: scripts[{i}] needs a query and a list of turns")
            self.scripts.append((_norm(s["query"]),
                                 [_turn(t, f"{source}: scripts[{i}].turns[{j}]") for j, t in enumerate(s["turns"])]))
        self.scripts.sort(key=lambda qs: -len(qs[0]))
        seq = list(responses if responses is not None else doc.get("responses") or [])
        self.responses = [_turn(t, f"{source}: responses[{j}]") for j, t in enumerate(seq)]
        if not self.scripts and not self.responses:
            raise ValueError(f"scripted backend: {source}: no scripts and no responses")
        label = name or doc.get("name")
        self.name = f"scripted:{label}" if label else "scripted"
        self._cursor = 0
        self._lock = threading.Lock()
        self.calls = 0

    def _pick(self, messages: Sequence[Message]) -> dict:
        first_user = next((str(m.get("content", "")) for m in messages if m.get("role") == "user"), "")
        key = _norm(first_user)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        for query, turns in self.scripts:
            if query and query in key:
                if turn >= len(turns):
                    raise LLMError(f"scripted backend: the script for {query!r} has {len(turns)} turn(s), "
                                   f"asked for turn {turn + 1}")
                return turns[turn]
        with self._lock:
            if self._cursor >= len(self.responses):
                raise LLMError(f"scripted backend: no recorded reply for {first_user[:80]!r} "
                               f"(turn {turn + 1}; {len(self.responses)} in-order replies used up)")
            t = self.responses[self._cursor]
            self._cursor += 1
            return t

    def reset(self) -> None:
        with self._lock:
            self._cursor = 0

    def complete(self, messages: Sequence[Message], *, deadline: float) -> LLMReply:
        self.calls += 1
        t = self._pick(messages)
        delay = float(t.get("delay_s", self.delay_s))
        left = deadline - time.monotonic()
        if delay > left:
            time.sleep(max(0.0, left))
            raise LLMError(f"timeout: the scripted reply takes {delay:g} s, past the deadline", retryable=True)
        if delay > 0:
            time.sleep(delay)
        if "error" in t:
            raise LLMError(str(t["error"]))
        usage = t.get("usage") or {}
        calls = [{"tool": c.get("tool"), "args": list(c.get("args") or [])} for c in t.get("tool_calls") or []]
        return LLMReply(text=str(t.get("text") or ""), prompt_tokens=int(usage.get("prompt_tokens", 0)),
                        completion_tokens=int(usage.get("completion_tokens", 0)), model=self.name,
                        tool_calls=calls)


register_llm("scripted", ScriptedLLM)
