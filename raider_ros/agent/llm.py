"""The one-method interface every language-model backend implements.

A conversation is a list of ``{"role": "system" | "user" | "assistant", "content": str}``
messages (OpenAI chat format). Tool responses and flow-manager warnings are appended as
``user`` messages, as in the paper's Appendix D.

Backends: ``openai`` (any OpenAI-compatible endpoint), ``rules`` (offline reasoner, no LLM),
``scripted`` (replays recorded responses). Tests use deterministic fakes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence, runtime_checkable

Message = dict  # {"role": str, "content": str}


class LLMError(RuntimeError):
    """The backend could not produce a reply. ``reason`` names the cause for the user
    (unreachable endpoint, HTTP 429 after retries, timeout, malformed answer, ...).
    ``retry_after``: seconds the server asked to wait before retrying (HTTP Retry-After)."""

    def __init__(self, reason: str, *, retryable: bool = False, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after


@dataclass
class LLMReply:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""
    # Native tool calling (optional): [{"tool": name, "args": [...]}]; empty for the text protocol.
    tool_calls: list[dict] = field(default_factory=list)


@runtime_checkable
class LLM(Protocol):
    """``complete`` returns the assistant's next message or raises :class:`LLMError`.

    ``deadline`` is an absolute ``time.monotonic()`` value; a backend must return or raise
    before it. ``name`` labels outputs (e.g. "openai:gpt-4o", "rules (no LLM)").
    """

    name: str

    def complete(self, messages: Sequence[Message], *, deadline: float) -> LLMReply: ...
