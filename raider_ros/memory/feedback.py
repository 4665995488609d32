"""Is the person correcting the robot, complaining, or asking it to learn?

:func:`classify_feedback` (rules, no LLM) looks for the cue phrases of
``data/memory/learning.yaml`` ("next time", "you should have", "no, ...", "learn that",
"remember to", ...). :class:`LLMFeedbackClassifier` asks an LLM with the prompt
``data/prompts/memory/feedback.yaml`` and reads its one-word label as untrusted text.
Learning is triggered by ``learn``, ``correction`` and ``complaint``; ``none`` leaves it.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Sequence

from raider_ros.common.paths import data_dir
from raider_ros.common.yamlfile import read_yaml_mapping
from raider_ros.memory.config import LearningConfig

LABELS = ("learn", "correction", "complaint", "none")
TRIGGERS = frozenset({"learn", "correction", "complaint"})


class FeedbackError(ValueError):
    """The feedback prompt is unusable, or the LLM's answer is not one of the labels."""


@dataclass(frozen=True)
class Feedback:
    kind: str            # learn | correction | complaint | none
    cue: str = ""        # the phrase (rules) or the raw label (LLM) that decided it
    backend: str = "rules (no LLM)"

    @property
    def triggers_learning(self) -> bool:
        return self.kind in TRIGGERS


def normalise(text: str) -> str:
    t = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    return " ".join(re.findall(r"[a-z0-9']+|[,.;:!?-]", t))


def _has(text: str, phrase: str) -> bool:
    return re.search(rf"(?<![a-z0-9']){re.escape(phrase)}(?![a-z0-9'])", text) is not None


def classify_feedback(text: str, config: LearningConfig | None = None) -> Feedback:
    """Rules: the first matching group, in the order learn, correction, complaint; a text that
    starts with a negative ("no, ...", "wrong") is a correction."""
    cfg = config or LearningConfig.load()
    t = normalise(text or "")
    if not t:
        return Feedback("none")
    for kind, key in (("learn", "learn_request"), ("correction", "correction"), ("complaint", "complaint")):
        for phrase in cfg.feedback[key]:
            if _has(t, phrase):
                return Feedback(kind, phrase)
    first = t.split(" ", 2)
    for neg in cfg.feedback["negative_start"]:
        words = neg.split()
        if first[: len(words)] == words and (len(first) > len(words) or len(t.split()) == len(words)):
            return Feedback("correction", neg)
    return Feedback("none")


class LLMFeedbackClassifier:
    """``classify(text, context="") -> Feedback`` with an LLM (``complete(messages, *, deadline)``)."""

    def __init__(self, llm: Any, *, prompt_file: str | None = None, timeout_s: float = 20.0):
        doc, p = read_yaml_mapping(prompt_file or (data_dir() / "prompts" / "memory" / "feedback.yaml"),
                                   what="feedback prompt", error=FeedbackError)
        for key in ("system", "user"):
            if not isinstance(doc.get(key), str) or not doc[key].strip():
                raise FeedbackError(f"{p}: {key}: expected the prompt text")
        if "{utterance}" not in doc["user"]:
            raise FeedbackError(f"{p}: user: the template lacks {{utterance}}")
        self.llm, self.timeout_s = llm, timeout_s
        self.system, self.user = doc["system"].strip(), doc["user"].strip()
        self.name = str(getattr(llm, "name", type(llm).__name__))

    def messages(self, text: str, context: str = "") -> list[dict]:
        return [{"role": "system", "content": self.system},
                {"role": "user", "content": self.user.replace("{context}", context.strip() or "none")
                                                     .replace("{utterance}", text.strip())}]

    def classify(self, text: str, context: str = "") -> Feedback:
        reply = self.llm.complete(self.messages(text, context), deadline=time.monotonic() + self.timeout_s)
        return Feedback(parse_label(str(getattr(reply, "text", "") or "")), backend=self.name,
                        cue=str(getattr(reply, "text", ""))[:80])


def parse_label(reply: str, labels: Sequence[str] = LABELS) -> str:
    """The label an LLM answered: the first word of the reply (quotes, markup and a trailing
    period allowed). Anything else is an error, never guessed."""
    words = re.findall(r"[a-z]+", reply.lower()[:200])
    if words and words[0] in labels:
        return words[0]
    if len(words) > 1 and words[0] == "label" and words[1] in labels:     # "Label: learn"
        return words[1]
    raise FeedbackError(f"the classifier's answer is not one of {', '.join(labels)}: {reply[:80]!r}")
