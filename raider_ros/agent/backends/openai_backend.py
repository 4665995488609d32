"""``openai``: any OpenAI-compatible chat-completions endpoint, through the openai SDK.

Deterministic settings by default (temperature 0, a fixed seed). Every request has its own
timeout, never past the caller's deadline; failures worth retrying (connection problems,
timeouts, HTTP 429 and 5xx, an unreadable body, no choices) are retried with exponential
backoff (a 429's Retry-After is honoured) while the deadline allows. Everything else, and the
last failure, becomes an :class:`LLMError` whose reason names the cause.

``tool_mode="text"`` (default) is the paper's protocol: tools are described in the prompt and
called as ``call_tool{...}`` in the reply text. ``tool_mode="native"`` sends the toolset's JSON
schemas as ``tools`` and turns the returned tool calls into ``{"tool", "args"}`` (arguments in
the order of the schema's properties).
"""
from __future__ import annotations

import os
import random
import time
from typing import Any, Sequence

from raider_ros.agent.backends import register_llm
from raider_ros.agent.llm import LLMError, LLMReply, Message
from raider_ros.agent.parsing import loads_lenient

DEFAULT_MODEL = "gpt-4o-2024-05-13"   # the model the RAIDER paper used
OFFICIAL_HOST = "api.openai.com"
PLACEHOLDER_KEY = "not-needed"        # local servers ignore the key, the SDK insists on one


class OpenAILLM:
    def __init__(self, model: str = "", base_url: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", temperature: float = 0.0, seed: int | None = 0,
                 request_timeout_s: float = 30.0, max_retries: int = 3, backoff_s: float = 0.5,
                 max_backoff_s: float = 8.0, tool_mode: str = "text", tools: Any = None,
                 max_tokens: int | None = None, name: str | None = None):
        import openai  # imported here: the rest of the agent works without the SDK

        if tool_mode not in ("text", "native"):
            raise ValueError(f"tool_mode must be 'text' or 'native', got {tool_mode!r}")
        if tool_mode == "native" and not tools:
            raise ValueError("tool_mode 'native' needs tools (a Toolset or its openai_tools() list)")
        if request_timeout_s <= 0 or max_retries < 0 or backoff_s < 0:
            raise ValueError("request_timeout_s must be positive; max_retries and backoff_s not negative")
        # the same settings everywhere (demo, make evaluate, every node): an explicit value,
        # else RAIDER_LLM_BASE_URL / RAIDER_LLM_MODEL, else the SDK's and the paper's defaults
        base_url = base_url or os.environ.get("RAIDER_LLM_BASE_URL") or os.environ.get("OPENAI_BASE_URL") or None
        model = model or os.environ.get("RAIDER_LLM_MODEL") or DEFAULT_MODEL
        key = os.environ.get(api_key_env, "") if api_key_env else ""
        if not key:
            if base_url is None or OFFICIAL_HOST in base_url:
                raise ValueError(f"the environment variable {api_key_env} holding the API key for "
                                 f"{base_url or 'https://' + OFFICIAL_HOST} is not set (set it, or set "
                                 "RAIDER_LLM_BASE_URL to a local OpenAI-compatible server)")
            key = PLACEHOLDER_KEY
        self._openai = openai
        self.client = openai.OpenAI(api_key=key, base_url=base_url, max_retries=0, timeout=request_timeout_s)
        self.base_url = str(self.client.base_url).rstrip("/")
        self.model = model
        self.temperature, self.seed, self.max_tokens = temperature, seed, max_tokens
        self.request_timeout_s, self.max_retries = float(request_timeout_s), int(max_retries)
        self.backoff_s, self.max_backoff_s = float(backoff_s), float(max_backoff_s)
        self.tool_mode = tool_mode
        self.tools = tools.openai_tools() if hasattr(tools, "openai_tools") else (list(tools) if tools else [])
        self._arg_order = {t["function"]["name"]: list((t["function"].get("parameters") or {}).get("properties") or {})
                           for t in self.tools}
        self.name = name or f"openai:{model}"
        self._rng = random.Random(seed)

    # ------------------------------------------------------------------ public
    def complete(self, messages: Sequence[Message], *, deadline: float) -> LLMReply:
        attempt = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0.05:
                raise LLMError(f"timeout: the deadline passed before a request to {self.base_url} could be sent")
            try:
                return self._once(messages, min(self.request_timeout_s, left))
            except LLMError as e:
                wait = self._backoff(attempt, e)
                if not e.retryable or attempt >= self.max_retries:
                    if e.retryable and self.max_retries:
                        raise LLMError(f"{e.reason} (gave up after {attempt + 1} attempts)") from None
                    raise
                if time.monotonic() + wait >= deadline - 0.05:
                    raise LLMError(f"{e.reason} (no time left to retry before the deadline)") from None
                time.sleep(wait)
                attempt += 1

    # ------------------------------------------------------------------ one request
    def _once(self, messages: Sequence[Message], timeout: float) -> LLMReply:
        oa = self._openai
        kwargs: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in messages],
                                  "temperature": self.temperature, "timeout": timeout}
        if self.seed is not None:
            kwargs["seed"] = self.seed
        if self.max_tokens:
            kwargs["max_tokens"] = self.max_tokens
        if self.tool_mode == "native":
            kwargs["tools"] = self.tools
        try:
            resp = self.client.chat.completions.create(**kwargs)
        except oa.APITimeoutError:
            raise LLMError(f"timeout: no answer from {self.base_url} within {timeout:.1f} s", retryable=True) from None
        except oa.APIConnectionError as e:
            raise LLMError(_connection_reason(self.base_url, e), retryable=True) from None
        except oa.APIStatusError as e:
            raise _status_error(e) from None
        except (ValueError, oa.APIResponseValidationError) as e:   # body is not JSON / not a completion
            raise LLMError(f"garbage answer: the response from {self.base_url} is not a valid chat completion "
                           f"({type(e).__name__}: {str(e)[:120]})", retryable=True) from None
        except oa.OpenAIError as e:
            raise LLMError(f"openai SDK error: {type(e).__name__}: {str(e)[:200]}") from None
        return self._reply(resp)

    def _reply(self, resp: Any) -> LLMReply:
        choices = getattr(resp, "choices", None)
        if not choices:
            raise LLMError(f"empty answer: the response from {self.base_url} has no choices", retryable=True)
        msg = choices[0].message
        text = msg.content or ""
        calls = [self._native_call(tc) for tc in (getattr(msg, "tool_calls", None) or [])]
        if not text.strip() and not calls:
            raise LLMError(f"empty answer: {self.base_url} returned no text and no tool call "
                           f"(finish_reason {choices[0].finish_reason!r})", retryable=True)
        usage = getattr(resp, "usage", None)
        return LLMReply(text=text,
                        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                        model=str(getattr(resp, "model", "") or self.model), tool_calls=calls)

    def _native_call(self, tc: Any) -> dict:
        fn = getattr(tc, "function", None)
        name = str(getattr(fn, "name", "") or "")
        raw = getattr(fn, "arguments", "") or "{}"
        try:
            args = loads_lenient(raw) if isinstance(raw, str) else raw
        except ValueError as e:
            return {"tool": name, "args": [], "error": f"arguments {raw[:80]!r} are not JSON: {e}"}
        if isinstance(args, dict):
            order = self._arg_order.get(name) or list(args)
            args = [args[k] for k in order if k in args] + [v for k, v in args.items() if k not in order]
        elif not isinstance(args, list):
            args = [args]
        return {"tool": name, "args": args}

    def _backoff(self, attempt: int, e: LLMError) -> float:
        if e.retry_after is not None:
            return max(0.0, e.retry_after)
        base = min(self.max_backoff_s, self.backoff_s * (2 ** attempt))
        return base * (0.75 + 0.5 * self._rng.random())


def _connection_reason(base_url: str, e: Exception) -> str:
    cause = e.__cause__ or e.__context__
    names = []
    while cause is not None and len(names) < 5:
        names.append(type(cause).__name__)
        cause = cause.__cause__ or cause.__context__
    detail = f"{type(e.__cause__).__name__}: {e.__cause__}" if e.__cause__ else str(e)
    if any(n in ("ConnectError", "ConnectionRefusedError", "gaierror", "ConnectTimeout") for n in names):
        return f"unreachable: cannot connect to {base_url} ({detail})"
    return f"connection to {base_url} broke off ({detail[:200]})"


def _status_error(e: Any) -> LLMError:
    status = getattr(e, "status_code", 0) or 0
    body = getattr(e, "body", None)
    msg = body.get("message") if isinstance(body, dict) else None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        msg = body["error"].get("message", msg)
    msg = str(msg or getattr(e, "message", "") or "")[:200]
    hint = {401: " (check the API key)", 403: " (access denied)", 404: " (unknown model or endpoint)",
            429: " (rate limited)"}.get(status, " (server error)" if status >= 500 else "")
    headers = getattr(getattr(e, "response", None), "headers", None) or {}
    ra = headers.get("retry-after") if hasattr(headers, "get") else None
    try:
        retry_after = float(ra) if ra is not None else None
    except ValueError:
        retry_after = None   # an HTTP date: use our own backoff
    return LLMError(f"HTTP {status}{hint}: {msg}", retryable=status == 429 or status >= 500 or status == 408,
                    retry_after=retry_after)


register_llm("openai", OpenAILLM)
