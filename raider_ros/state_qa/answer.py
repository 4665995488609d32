"""Answering a question about the robot's state (RACCOON §III): select the modules, take their
latest state summaries (or, for "in the last N minutes", what they reported in that window),
and answer with an LLM (the prompt is data: ``data/prompts/state_qa/``) or with the rules
answerer (no LLM, facts only).

:meth:`StateQA.ask` never raises: an empty, non-text or oversized question, a toxic request,
a question the robot's state cannot answer, a module that has reported nothing yet, a failing
LLM (then the rules answer, with the reason in ``note``) - each gets an answer that says so.
"""
from __future__ import annotations

import dataclasses
import logging
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from raider_ros.common.paths import data_dir
from raider_ros.common.token_count import count_message_tokens

from .modules import ModuleCatalog, StateQAError, load_catalog
from .rules import (NAME as RULES_NAME, FactUse, RulesAnswerer, age_text, asks_latest, fill, find_mentions, is_past_question,
                    known_things, load_answer_texts, object_timeline, time_window_s)
from .summary import StateSummary, SummaryHistory

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 2000
MAX_REPLY_CHARS = 50_000         # of an LLM reply, read before parsing
MAX_ANSWER_CHARS = 1200
MAX_WINDOW_ITEMS = 6
MAX_HISTORY_CONTEXTS = 6    # earlier summaries put into an LLM prompt for a question about the past
PROMPT_PARTS = ("preamble.md", "context.md", "no_context.md", "instructions.md", "question.md")
EXTRA_PARTS = ("history_context.md", "object_facts.md")   # optional: earlier summaries, one object's facts
_FINAL = re.compile(r"final\s+answer\s*[:\-]\s*", re.I)
_THOUGHT = re.compile(r"\bthought\s*:", re.I)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


# --------------------------------------------------------------------------- prompt
def prompt_dir() -> Path:
    return data_dir() / "prompts" / "state_qa"


def _age(stamp: float, now: float) -> str:
    """The prompts' age: "just now" only for a stamp in the future (clock skew)."""
    return age_text(stamp, now, just_now_s=0.0)


@dataclass(frozen=True)
class QAPrompt:
    """The prompt of Listing 1: preamble, the contexts, "Thought:" then "Final answer:", the question."""
    preamble: str
    context: str
    no_context: str
    instructions: str
    question: str
    history_context: str = "Earlier ({age}), my {title} reported:\n{summary}"
    object_facts: str = "What my modules report about {object}, most recent first:\n{facts}"

    @classmethod
    def load(cls, directory: str | Path | None = None) -> "QAPrompt":
        d = Path(directory) if directory is not None else prompt_dir()
        parts = []
        for name in PROMPT_PARTS:
            f = d / name
            try:
                parts.append(f.read_text(encoding="utf-8").strip())
            except OSError as exc:
                raise StateQAError(f"{f}: cannot read the state-QA prompt part: {exc.strerror or exc}") from None
        for name, text, keys in ((PROMPT_PARTS[1], parts[1], ("{index}", "{title}", "{summary}")),
                                 (PROMPT_PARTS[2], parts[2], ("{index}", "{title}")),
                                 (PROMPT_PARTS[4], parts[4], ("{question}",))):
            missing = [k for k in keys if k not in text]
            if missing:
                raise StateQAError(f"{d / name}: the template lacks {', '.join(missing)}")
        extra = {}
        for name, keys in zip(EXTRA_PARTS, (("{age}", "{title}", "{summary}"), ("{object}", "{facts}"))):
            f = d / name
            if f.is_file():
                text = f.read_text(encoding="utf-8").strip()
                missing = [k for k in keys if k not in text]
                if missing:
                    raise StateQAError(f"{f}: the template lacks {', '.join(missing)}")
                extra[name.removesuffix(".md")] = text
        return cls(*parts, **extra)

    def contexts(self, contexts: Sequence[StateSummary], missing: Sequence[str], catalog: ModuleCatalog,
                 now: float) -> str:
        blocks, i = [], 0
        for s in contexts:
            i += 1
            info = catalog.get(s.module)
            blocks.append(fill(self.context, index=i, title=catalog.title(s.module),
                               about=info.about if info else s.module, age=_age(s.stamp, now), summary=s.render()))
        for m in missing:
            i += 1
            blocks.append(fill(self.no_context, index=i, title=catalog.title(m)))
        return "\n\n".join(blocks) if blocks else "(no contexts)"

    def messages(self, question: str, contexts: Sequence[StateSummary], missing: Sequence[str] = (),
                 catalog: ModuleCatalog | None = None, now: float | None = None, *,
                 earlier: Sequence[StateSummary] = (), objects: Mapping[str, Sequence[str]] | None = None
                 ) -> list[dict]:
        """``earlier``: history summaries (questions about the past); ``objects``: per named
        object, the lines of what every module reports about it, most recent first."""
        catalog = catalog or load_catalog()
        now = time.time() if now is None else now
        parts = ["Given contexts:", self.contexts(contexts, missing, catalog, now)]
        for s in earlier:
            parts.append(fill(self.history_context, age=_age(s.stamp, now), title=catalog.title(s.module),
                              summary=s.render()))
        for obj, lines in (objects or {}).items():
            parts.append(fill(self.object_facts, object=obj, facts="\n".join(f"- {x}" for x in lines)))
        user = "\n\n".join([*parts, self.instructions, fill(self.question, question=question)])
        return [{"role": "system", "content": self.preamble}, {"role": "user", "content": user}]


def parse_final_answer(text: Any) -> str | None:
    """The answer after the last "Final answer:" of an LLM reply (untrusted text: only read,
    cleaned and cut). A reply without that marker counts as the answer itself unless it is a
    bare "Thought:" (then None: no answer was given)."""
    if not isinstance(text, str):
        return None
    text = text[:MAX_REPLY_CHARS]
    marks = list(_FINAL.finditer(text))
    if marks:
        ans = text[marks[-1].end():]
    elif _THOUGHT.search(text):
        return None
    else:
        ans = text
    ans = " ".join(_CONTROL.sub(" ", ans).split()).strip().strip("*`\"' ").strip()
    if len(ans) > MAX_ANSWER_CHARS:
        ans = ans[: MAX_ANSWER_CHARS - 3].rstrip() + "..."
    return ans or None


# --------------------------------------------------------------------------- result
@dataclass(frozen=True)
class QAAnswer:
    question: str
    answer: str
    modules: tuple[str, ...] = ()                 # the modules whose summaries were used
    evidence: tuple[StateSummary, ...] = ()       # the summaries quoted (the prompt's contexts)
    backend: str = RULES_NAME
    labels: tuple[str, ...] = ()                  # what the selector chose (with convenience classes)
    status: str = "ok"   # ok | partial | refused | unknown | invalid | no_state | fallback | error
    facts: tuple[FactUse, ...] = ()               # rules: the facts said
    missing: tuple[str, ...] = ()                 # selected modules that have reported nothing
    prompt_tokens_selected: int = 0               # prompt with the selected contexts
    prompt_tokens_all: int = 0                    # the same prompt with every module's context
    llm_prompt_tokens: int = 0
    llm_completion_tokens: int = 0
    elapsed_s: float = 0.0
    note: str = ""

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["evidence"] = [s.to_dict() for s in self.evidence]
        return d


Summaries = SummaryHistory | Mapping[str, StateSummary] | Iterable[StateSummary] | None


def _latest(summaries: Summaries) -> dict[str, StateSummary]:
    if summaries is None:
        return {}
    if isinstance(summaries, SummaryHistory):
        return summaries.latest_all()
    if isinstance(summaries, Mapping):
        return {str(k): v for k, v in summaries.items() if isinstance(v, StateSummary)}
    out: dict[str, StateSummary] = {}
    for s in summaries:
        if isinstance(s, StateSummary) and (s.module not in out or s.stamp >= out[s.module].stamp):
            out[s.module] = s
    return out


# --------------------------------------------------------------------------- the answerer
class StateQA:
    """``ask(question, summaries) -> QAAnswer``.

    ``llm``: None for the rules answerer, or any object with ``complete(messages, *, deadline)
    -> LLMReply``. ``selector``: a :class:`~raider_ros.state_qa.selector.ModuleSelector`
    (default: the shared one trained on data/state_qa/train.yaml). ``history``: the summaries
    used when ``ask`` gets none.
    """

    def __init__(self, *, llm: Any = None, selector: Any = None, history: SummaryHistory | None = None,
                 catalog: ModuleCatalog | None = None, prompt: QAPrompt | None = None,
                 rules: RulesAnswerer | None = None, max_question_chars: int = MAX_QUESTION_CHARS,
                 llm_timeout_s: float = 30.0):
        if llm is not None and not callable(getattr(llm, "complete", None)):
            raise StateQAError(f"state QA: the LLM {llm!r} has no complete(messages, *, deadline) method")
        if max_question_chars < 1 or llm_timeout_s <= 0:
            raise StateQAError("state QA: max_question_chars and llm_timeout_s must be positive")
        self.llm = llm
        self._selector = selector
        self.history = history
        self.catalog = catalog or load_catalog()
        self.prompt = prompt or QAPrompt.load()
        self._rules = rules
        self.texts = load_answer_texts()
        self.max_question_chars = int(max_question_chars)
        self.llm_timeout_s = float(llm_timeout_s)

    @property
    def backend(self) -> str:
        if self.llm is None:
            return RULES_NAME
        return str(getattr(self.llm, "name", type(self.llm).__name__))

    @property
    def selector(self):
        if self._selector is None:
            from .selector import default_selector
            self._selector = default_selector()
        return self._selector

    @property
    def rules(self) -> RulesAnswerer:
        if self._rules is None:
            self._rules = RulesAnswerer()
        return self._rules

    # ------------------------------------------------------------------ public
    def index(self, summaries: Summaries, *, background: bool = False) -> int:
        """Prepare for questions about these summaries (the rules answerer embeds their facts);
        a node calls it when a summary arrives (``background=True``: questions asked meanwhile
        get the embedding model first), so that answering does not wait for it. With a
        :class:`SummaryHistory` the earlier summaries a question about the past reads
        (``what_happened``) are embedded too - each summary once, when it enters the history."""
        latest = _latest(summaries)
        todo = list(latest.values())
        if isinstance(summaries, SummaryHistory):
            todo += summaries.what_happened()
        return self.rules.index(todo, background=background) if todo else 0

    def ask(self, question: Any, summaries: Summaries = None, *, deadline: float | None = None,
            now: float | None = None) -> QAAnswer:
        t0 = time.monotonic()
        try:
            ans = self._ask(question, summaries, deadline, time.time() if now is None else float(now))
        except Exception as exc:  # noqa: BLE001 - a bug must give an answer, not an exception
            log.exception("state QA failed")
            ans = QAAnswer(str(question)[:200] if isinstance(question, str) else "",
                           f"I cannot answer right now: internal error ({type(exc).__name__}: {exc}).",
                           backend=self.backend, status="error", note=f"{type(exc).__name__}: {exc}")
        return dataclasses.replace(ans, elapsed_s=time.monotonic() - t0)

    def _ask(self, question: Any, summaries: Summaries, deadline: float | None, now: float) -> QAAnswer:
        if not isinstance(question, str):
            return QAAnswer("", self.texts["not_text"], status="invalid",
                            note=f"the question is a {type(question).__name__}, not text")
        if len(question) > self.max_question_chars:
            return QAAnswer(question[:200] + "...", fill(self.texts["too_long"], question_chars=len(question),
                                                         max_chars=self.max_question_chars),
                            status="invalid", note=f"question of {len(question)} characters")
        q = " ".join(_CONTROL.sub(" ", question).split())
        if not q:
            return QAAnswer(q, self.texts["empty"], status="invalid", note="empty question")
        try:
            sel = self.selector.select(q)
        except StateQAError as exc:
            return QAAnswer(q, f"I cannot answer right now: {exc}.", backend=self.backend, status="error",
                            note=str(exc))
        if sel.refused:
            return QAAnswer(q, self.texts["refused"], labels=sel.labels, status="refused")
        source = self.history if summaries is None else summaries
        latest = _latest(source)
        if sel.unknown and not (sel.modules and self._names_known_thing(q, latest)):
            return QAAnswer(q, self.texts["unknown"], labels=sel.labels, status="unknown")
        modules = [m for m in sel.modules if self.catalog.is_module(m) or m in latest]
        history = source if isinstance(source, SummaryHistory) else None
        mentions = find_mentions(q, known_things(latest.values()), self.rules.lang)
        linked = list(dict.fromkeys(i for m in mentions for i in m.ids))
        added = self._evidence_modules(linked, modules, latest)
        modules += added
        missing = tuple(m for m in modules if m not in latest)
        contexts = [latest[m] for m in modules if m in latest]
        window = time_window_s(q)
        windowed: list[StateSummary] = []
        if window is not None and isinstance(source, SummaryHistory):
            windowed = source.what_happened(now - window, now, modules)[-MAX_WINDOW_ITEMS:]
        evidence = windowed or contexts
        past = (is_past_question(q, self.rules.lang) and not asks_latest(q, self.rules.lang)
                and history is not None and not windowed)
        earlier = self._earlier(history, modules, linked, mentions, latest) if past else []
        timeline = object_timeline(linked, latest.values(), history) if linked else []
        objects: dict[str, list[str]] = {}
        for obj in dict.fromkeys(r.obj for r in timeline):
            rows = [r for r in timeline if r.obj == obj]
            if len({r.module for r in rows}) > 1:      # only where modules could disagree
                objects[obj] = [f"{_age(r.time, now)}, my {self.catalog.title(r.module)}: {r.key}: {r.value}"
                                + (" (last sighting, may be out of date)" if r.stale else
                                   " (most recent)" if r.newest else "") for r in rows]
        base = dict(labels=sel.labels, missing=missing, modules=tuple(dict.fromkeys(s.module for s in evidence)),
                    evidence=tuple(evidence),
                    note=f"modules added for the things named: {', '.join(added)}" if added else "")
        tok_sel = count_message_tokens(self.prompt.messages(q, evidence, missing, self.catalog, now,
                                                            earlier=earlier, objects=objects))
        all_ctx = [latest[m] for m in self.catalog.names if m in latest]
        all_missing = [m for m in self.catalog.names if m not in latest]
        tok_all = count_message_tokens(self.prompt.messages(q, all_ctx, all_missing, self.catalog, now))
        base.update(prompt_tokens_selected=tok_sel, prompt_tokens_all=tok_all)

        primary = modules[0] if modules else None
        if not evidence:
            first = missing[0] if missing else (sel.modules[0] if sel.modules else sel.primary)
            text = fill(self.texts["nothing_published"], module_title=self.catalog.title(first))
            return QAAnswer(q, text, status="no_state", **{**base, "modules": (), "evidence": ()})

        if self.llm is not None:
            return self._ask_llm(q, evidence, known=list(latest.values()), deadline=deadline, now=now, base=base,
                                 history=history, earlier=earlier, objects=objects)
        ans = self._ask_rules(q, evidence, list(latest.values()), windowed, now, base, history=history)
        if primary is not None and primary in missing and not windowed:
            # the module the question is mostly about has said nothing: say so first when
            # nothing else answers, else after what the other modules report
            title = self.catalog.title(primary)
            if ans.facts:
                after = fill(self.texts.get("nothing_published_after", self.texts["nothing_published"]),
                             module_title=title)
                ans = dataclasses.replace(ans, answer=f"{ans.answer} {after}", status="partial")
            else:
                note = fill(self.texts["nothing_published"], module_title=title)
                ans = dataclasses.replace(ans, answer=f"{note} {ans.answer}", status="partial")
        return ans

    def _evidence_modules(self, ids: Sequence[str], modules: Sequence[str],
                          latest: Mapping[str, StateSummary]) -> list[str]:
        """Modules the selector left out whose latest summary reports on an object the question
        names (a fact with the object as its subject first, then by how many facts name it,
        then the most recent), up to the selector's limit of labels (three, as in the paper)."""
        if not ids:
            return []
        limit = int(getattr(getattr(self.selector, "config", None), "max_labels", 3) or 3)
        room = limit - len(modules)
        if room <= 0:
            return []
        ranked = []
        for m, s in latest.items():
            if m in modules or not self.catalog.is_module(m):
                continue
            keyed = sum(1 for k, _ in s.facts if k.partition(":")[2] in ids)
            named = sum(1 for k, v in s.facts if any(re.search(rf"\b{re.escape(i)}\b", f"{k} {v}") for i in ids))
            if keyed or named:
                ranked.append((keyed, named, s.stamp, m))
        ranked.sort(reverse=True)
        return [m for *_, m in ranked[:room]]

    def _earlier(self, history: SummaryHistory | None, modules: Sequence[str], ids: Sequence[str],
                 mentions: Sequence[Any], latest: Mapping[str, StateSummary]) -> list[StateSummary]:
        """The earlier summaries (what changed) of the answering modules - and of any module
        whose earlier summaries name the question's objects - for a question about the past;
        those naming the question's things first, then the most recent; at most
        MAX_HISTORY_CONTEXTS, oldest first."""
        if history is None:
            return []
        names = [m.surface.lower() for m in mentions if getattr(m, "present", False)] + [i.lower() for i in ids]
        rows = [s for s in history.what_happened() if s.stamp < latest.get(s.module, s).stamp]

        def names_it(s: StateSummary) -> bool:
            blob = s.render().lower()
            return any(n in blob for n in names)
        rows = [s for s in rows if s.module in modules or (names and names_it(s))]
        rows.sort(key=lambda s: (not (names and names_it(s)), -s.stamp))
        return sorted(rows[:MAX_HISTORY_CONTEXTS], key=lambda s: s.stamp)

    def _names_known_thing(self, q: str, latest: Mapping[str, StateSummary]) -> bool:
        """Whether the question names an object, person or id some summary reports (then a
        question the selector took for "unknown" is about the robot's state after all)."""
        from .rules import find_mentions, known_things
        mentions = find_mentions(q, known_things(latest.values()), self.rules.lang)
        return any(m.present for m in mentions)

    # ------------------------------------------------------------------ backends
    def _ask_rules(self, q: str, evidence: Sequence[StateSummary], known: Sequence[StateSummary],
                   windowed: Sequence[StateSummary], now: float, base: dict, note: str = "",
                   status: str = "ok", history: SummaryHistory | None = None) -> QAAnswer:
        note = "; ".join(filter(None, [base.get("note", ""), note]))
        base = {k: v for k, v in base.items() if k != "note"}
        if windowed:
            lines = [f"{_age(s.stamp, now)}, my {self.catalog.title(s.module)}: {s.text}" for s in windowed]
            return QAAnswer(q, " ".join(lines), backend=RULES_NAME, status=status, note=note, **base)
        reply = self.rules.answer(q, evidence, known, history=history, now=now)
        used = tuple(dict.fromkeys(f.module for f in reply.facts)) or base["modules"]
        pool = list(evidence) + [s for s in known if s not in evidence]
        ev = tuple(s for s in pool if s.module in used) or base["evidence"]
        return QAAnswer(q, reply.text, backend=RULES_NAME, status=status, facts=reply.facts, note=note,
                        **{**base, "modules": used, "evidence": ev})

    def _ask_llm(self, q: str, evidence: Sequence[StateSummary], *, known: Sequence[StateSummary],
                 deadline: float | None, now: float, base: dict, history: SummaryHistory | None = None,
                 earlier: Sequence[StateSummary] = (), objects: Mapping[str, Sequence[str]] | None = None
                 ) -> QAAnswer:
        messages = self.prompt.messages(q, evidence, base["missing"], self.catalog, now, earlier=earlier,
                                        objects=objects)
        if earlier:
            base = {**base, "evidence": tuple(base["evidence"]) + tuple(earlier)}
        deadline = time.monotonic() + self.llm_timeout_s if deadline is None else deadline
        try:
            reply = self.llm.complete(messages, deadline=deadline)
        except Exception as exc:  # noqa: BLE001 - LLMError or anything else: fall back to the rules
            reason = getattr(exc, "reason", None) or f"{type(exc).__name__}: {exc}"
            return self._ask_rules(q, evidence, known, (), now, base, note=f"the LLM failed: {reason}",
                                   status="fallback", history=history)
        answer = parse_final_answer(getattr(reply, "text", None))
        usage = dict(llm_prompt_tokens=int(getattr(reply, "prompt_tokens", 0) or 0),
                     llm_completion_tokens=int(getattr(reply, "completion_tokens", 0) or 0))
        if answer is None:
            return dataclasses.replace(
                self._ask_rules(q, evidence, known, (), now, base, status="fallback",
                                note="the LLM reply held no final answer", history=history), **usage)
        return QAAnswer(q, answer, backend=self.backend, **base, **usage)
