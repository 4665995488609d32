"""The issue-detection system prompt, put together from the section files in
``data/prompts/issue_detection/`` (paper Fig. 4): task objective, procedure, tools,
constraints, tool-call format — and the conversation messages around it.

Templates use ``{name}`` placeholders, filled by :func:`fill`: a plain regular-expression
substitution of known names (nothing is evaluated, JSON braces are left alone).

What the world says reaches the LLM as quoted, delimited data: the query, the context (a
person's words), the objects in sight, the held object, a scene observation, and every tool
result and failure reason are written as one-line JSON values (``common.text.quote_data``),
so no line break or label inside them can start a line of its own or pose as another field.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from raider_ros.common.paths import data_dir
from raider_ros.common.text import quote_data, quote_json_data
from raider_ros.common.tool_contract import Toolset, load_toolset

PROCEDURES = ("QGEN_GRND", "GRND", "QGEN", "BASIC")
DEFAULT_FACTS = {"reach_m": 1.1, "arms": "a single arm", "handover_distance_m": 0.5}
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class PromptError(ValueError):
    """A prompt file or setting that cannot be used; the message names which."""


def prompts_dir() -> Path:
    return data_dir() / "prompts" / "issue_detection"


def fill(template: str, values: Mapping[str, Any]) -> str:
    """Replace ``{name}`` for every ``name`` in ``values``; leave anything else as written."""
    def sub(m: re.Match) -> str:
        key = m.group(1)
        return _fmt(values[key]) if key in values else m.group(0)
    return _PLACEHOLDER.sub(sub, template)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


@lru_cache(maxsize=64)
def _read(rel: str) -> str:
    path = prompts_dir() / rel
    if not path.is_file():
        raise PromptError(f"prompt file {path} is missing")
    return path.read_text(encoding="utf-8")


def _read_yaml(rel: str) -> dict:
    try:
        doc = yaml.safe_load(_read(rel))
    except yaml.YAMLError as e:
        raise PromptError(f"{prompts_dir() / rel}: not valid YAML: {e}") from None
    if not isinstance(doc, dict):
        raise PromptError(f"{prompts_dir() / rel}: expected a mapping")
    return doc


def _text(rel: str) -> str:
    return _read(rel).strip()


@dataclass(frozen=True)
class PromptConfig:
    """What varies between prompts. ``profile`` picks ``issues/<profile>.yaml`` and
    ``constraints/<profile>.yaml`` (default: the toolset's name when such files exist, else
    ``household``). ``facts`` fill the constraint placeholders (reach, arms, handover distance)."""
    profile: str | None = None
    procedure: str = "QGEN_GRND"
    tool_protocol: str = "text"               # text | native
    facts: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULT_FACTS))
    include_objects_in_sight: bool = False    # first user message lists the detected objects

    def with_facts(self, **facts: Any) -> "PromptConfig":
        return replace(self, facts={**self.facts, **facts})


class IssuePrompt:
    """System prompt and conversation messages for one toolset and configuration.

    ``toolset=None`` builds the tool-free prompt of the LLMVisualObs baseline (procedure
    ``VISUAL_OBS``: no tool list, no tool-call format)."""

    def __init__(self, toolset: Toolset | str | None = "household", config: PromptConfig | None = None):
        self.config = config or PromptConfig()
        self.toolset = load_toolset(toolset) if isinstance(toolset, str) else toolset
        cfg = self.config
        if cfg.tool_protocol not in ("text", "native"):
            raise PromptError(f"tool_protocol must be 'text' or 'native', got {cfg.tool_protocol!r}")
        profile = cfg.profile or self._default_profile()
        self.profile = profile
        self.messages = _read_yaml("messages.yaml")
        issues = _read_yaml(f"issues/{profile}.yaml").get("issues") or []
        if not issues or not all(isinstance(i, dict) and i.get("id") and i.get("description") for i in issues):
            raise PromptError(f"issues/{profile}.yaml: expected a list of {{id, description}}")
        self.issue_ids = [str(i["id"]) for i in issues]
        issue_list = "\n".join(f"- {i['id']}: {' '.join(str(i['description']).split())}" for i in issues)

        sections = {"objective": fill(_text("objective.txt"), {"issue_list": issue_list}),
                    "procedure": self._procedure()}
        if self.toolset is not None:
            tool_list = "\n".join(
                f"- {t.signature()}: {t.description}" + (f" Returns: {t.returns}" if t.returns else "")
                for t in self.toolset.tools)
            sections["tools"] = fill(_text("tools.txt"), {"tool_list": tool_list})
        sections["constraints"] = self._constraints(profile)
        if self.toolset is not None:
            fmt = "tool_call_format.txt" if cfg.tool_protocol == "text" else "tool_call_format_native.txt"
            sections["tool_call_format"] = _text(fmt)
        self.sections = sections
        self.system = "\n\n".join(sections.values())

    # ------------------------------------------------------------------ building blocks
    def _default_profile(self) -> str:
        name = self.toolset.name if self.toolset is not None else ""
        if name and (prompts_dir() / "issues" / f"{name}.yaml").is_file() \
                and (prompts_dir() / "constraints" / f"{name}.yaml").is_file():
            return name
        return "household"

    def _procedure(self) -> str:
        doc = _read_yaml("procedure.yaml")
        variant = self.config.procedure if self.toolset is not None else "VISUAL_OBS"
        if self.toolset is not None and variant == "VISUAL_OBS":
            raise PromptError("procedure VISUAL_OBS is for the tool-free prompt (toolset=None)")
        spec = (doc.get("variants") or {}).get(variant)
        if not spec:
            known = ", ".join(v for v in (doc.get("variants") or {}) if v != "VISUAL_OBS")
            raise PromptError(f"unknown procedure {variant!r} (known: {known})")
        steps = doc.get("steps") or {}
        evidence = (doc.get("evidence") or {}).get(spec.get("evidence"), "")
        parts = [doc.get("heading", "# Procedure").strip(), " ".join(str(doc.get("intro", "")).split())]
        for n, step in enumerate(spec["steps"], 1):
            if step not in steps:
                raise PromptError(f"procedure.yaml: variant {variant} names unknown step {step!r}")
            parts.append(fill(str(steps[step]).strip(), {"n": n, "evidence": evidence}))
        return "\n".join(p for p in parts if p)

    def _constraints(self, profile: str) -> str:
        doc = _read_yaml(f"constraints/{profile}.yaml")
        lines = [fill(str(line), self.config.facts) for line in doc.get("lines") or []]
        body = "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1))
        return f"{str(doc.get('heading', '# Constraints')).strip()}\n{body}"

    # ------------------------------------------------------------------ messages
    def user_message(self, query: str, context: str | None = None,
                     objects: Sequence[str] | None = None, holding: str | None = None,
                     observation: str | None = None) -> str:
        """The first user message: one labelled line per field, each value quoted data."""
        u = self.messages["user"]
        lines = [fill(u["query"], {"query": quote_data(query.strip())})]
        if context:
            lines.append(fill(u["context"], {"context": quote_data(context.strip())}))
        if objects is not None:
            lines.append(fill(u["objects"], {"objects": quote_json_data(json.dumps([str(o) for o in objects]))}))
        if holding is not None:
            lines.append(fill(u["holding"], {"holding": quote_data(holding)}))
        if observation is not None:
            lines.append(fill(u["observation"], {"observation": quote_data(observation)}))
        return "\n".join(lines)

    def tool_message(self, name: str, args: Sequence[Any], text: str, *, failed: bool = False) -> str:
        """One tool's answer: its JSON result, or the failure reason as a quoted string."""
        key = "tool_failed" if failed else "tool_result"
        data = quote_data(text) if failed else quote_json_data(text)
        return fill(self.messages[key], {"tool": quote_data(name)[1:-1], "args": quote_json_data(json.dumps(list(args))),
                                         "result": data, "error": data})

    def warning(self, number: int, **values: Any) -> tuple[str, str]:
        """(title, full message) of warning ``number``; the message starts ``WARNING <n> (<title>):``."""
        w = self.messages["warnings"][number]
        body = " ".join(fill(str(w["text"]), values).split())
        return w["title"], f"WARNING {number} ({w['title']}): {body}"
