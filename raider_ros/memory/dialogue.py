"""What the robot says about learning: ``data/memory/dialogue.yaml`` (format
``raider-memory-dialogue/1``), the executor's closing question and the memory node's answers."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from raider_ros.common.paths import data_dir
from raider_ros.common.yamlfile import read_yaml_mapping

DIALOGUE_FORMAT = "raider-memory-dialogue/1"
KEYS = ("learned", "learned_no_text", "not_learned", "not_feedback", "unavailable")


class DialogueError(ValueError):
    """dialogue.yaml does not follow the format; names the file and the field."""


@dataclass(frozen=True)
class Dialogue:
    question_success: str
    question_failure: str
    lines: dict

    def question(self, success: bool) -> str:
        return self.question_success if success else self.question_failure

    def say(self, key: str, **values: str) -> str:
        text = self.lines[key]
        for k, v in values.items():
            text = text.replace("{" + k + "}", str(v).strip())
        text = " ".join(text.split())
        return text if text[-1:] in ".!?" else text + "."


@lru_cache(maxsize=4)
def load_dialogue(path: str | None = None) -> Dialogue:
    doc, p = read_yaml_mapping(Path(path) if path else data_dir() / "memory" / "dialogue.yaml",
                               what="memory dialogue file", error=DialogueError)
    if doc.get("format") != DIALOGUE_FORMAT:
        raise DialogueError(f"{p}: format: expected {DIALOGUE_FORMAT!r}, got {doc.get('format')!r}")
    q = doc.get("feedback_question")
    if not isinstance(q, dict) or not all(isinstance(q.get(k), str) and q[k].strip() for k in ("success", "failure")):
        raise DialogueError(f"{p}: feedback_question: expected success and failure sentences")
    lines = {}
    for key in KEYS:
        if not isinstance(doc.get(key), str) or not doc[key].strip():
            raise DialogueError(f"{p}: {key}: expected a sentence")
        lines[key] = doc[key].strip()
    return Dialogue(q["success"].strip(), q["failure"].strip(), lines)
