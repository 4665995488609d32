"""The recovery prompt (paper §3.5, Fig. 7): objective, actions, notes and examples from
``data/prompts/recovery/*.md``, then the query built from RAIDER's output.

``build_messages(query, issue, explanation, holding)`` returns the chat messages for an
:class:`~raider_ros.agent.llm.LLM`: one system message (the prompt parts) and one user
message (the query, ending with "corrective actions:").

Dynamic examples: ``messages(..., examples=text)`` puts ``text`` (a "## Examples" section, e.g.
built from the episodic memory by :mod:`raider_ros.memory.prompts`) in place of the fixed
examples of ``examples.md``; without it the prompt is exactly the fixed one.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from raider_ros.common.paths import data_dir
from raider_ros.common.text import quote_data

PARTS = ("objective.md", "actions.md", "notes.md", "examples.md")
QUERY_TEMPLATE = "query.md"


class PromptError(ValueError):
    """A prompt file is missing or its query template is unusable."""


def prompt_dir() -> Path:
    return data_dir() / "prompts" / "recovery"


@dataclass(frozen=True)
class RecoveryPrompt:
    system: str                  # objective, actions, notes and the fixed examples
    query_template: str
    head: str = ""               # the same without the examples

    def system_with(self, examples: str | None = None) -> str:
        if examples is None or not self.head:
            return self.system
        return f"{self.head}\n\n{examples.strip()}"

    @classmethod
    def load(cls, directory: str | Path | None = None) -> "RecoveryPrompt":
        d = Path(directory) if directory is not None else prompt_dir()
        texts = []
        for name in (*PARTS, QUERY_TEMPLATE):
            f = d / name
            try:
                texts.append(f.read_text(encoding="utf-8").strip())
            except OSError as exc:
                raise PromptError(f"{f}: cannot read the recovery prompt part: {exc.strerror or exc}") from None
        template = texts[-1]
        for key in ("{action}", "{issue}", "{explanation}", "{holding}"):
            if key not in template:
                raise PromptError(f"{d / QUERY_TEMPLATE}: the query template lacks {key}")
        return cls(system="\n\n".join(texts[:-1]), query_template=template,
                   head="\n\n".join(texts[: PARTS.index("examples.md")]))

    def query(self, action: str, issue: str, explanation: str, holding: str | None,
              context: str = "") -> str:
        # a person's words are quoted data; the explanation (which may quote labels) and the
        # holding id stay on their line: no text inside them can start a line of the prompt
        ctx = f"what the person said: {quote_data(context.strip())}\n" if context and context.strip() else ""
        explanation = " ".join((explanation or "").split()).rstrip(".") or "none given"
        holding = " ".join(holding.split()) if holding else holding
        action = " ".join(action.split())
        return self.query_template.format_map({
            "action": action.strip(), "issue": issue.strip(), "explanation": explanation,
            "holding": holding or "none", "context": ctx,
        })

    def messages(self, action: str, issue: str, explanation: str, holding: str | None,
                 context: str = "", examples: str | None = None) -> list[dict]:
        return [
            {"role": "system", "content": self.system_with(examples)},
            {"role": "user", "content": self.query(action, issue, explanation, holding, context)},
        ]


def build_messages(action: str, issue: str, explanation: str, holding: str | None,
                   context: str = "", prompt: RecoveryPrompt | None = None) -> list[dict]:
    return (prompt or RecoveryPrompt.load()).messages(action, issue, explanation, holding, context)
