"""learn_from_interaction (paper §III-E): turn a person's correction into a lesson.

Two improvers write the improved behaviour:

* :class:`LLMImprover` asks an LLM the paper's three chain-of-thought questions (what went
  wrong; what to do next time; the improved interaction, here as a plan in the recovery plan
  language), with the prompt ``data/prompts/memory/improve.yaml``. The replies are untrusted
  text: the first is read only for "no problem", the third only through the plan
  interpreter.
* :class:`RulesImprover` (no LLM) reads the changes the person dictated from their words with
  the vocabulary of ``data/memory/learning.yaml``: bring another object too ("next time bring
  a glass of water with it"), do something to a thing before or after the task ("close the
  fridge after ..."), or move closer instead of asking the person to bring something ("don't
  ask me, just move closer"). The first two change the plan of the task (a *task* lesson),
  the last the plan of the recovery in which the robot asked (a *recovery* lesson).

:func:`learn_from_interaction` applies the paper's two discard rules (no problem found; the
improved behaviour equals what the robot did), checks the plan with
:func:`~raider_ros.recovery.plan.parse_plan` against the names of the scene (a plan the
interpreter rejects is not stored, and the reason is returned to tell the person), and stores
each lesson in one transaction.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from raider_ros.common.paths import data_dir
from raider_ros.common.text import singular, split_words
from raider_ros.common.yamlfile import read_yaml_mapping
from raider_ros.memory.adapt import SceneIndex, plan_ids
from raider_ros.memory.config import LearningConfig
from raider_ros.memory.episode import Episode, query_line
from raider_ros.memory.feedback import normalise
from raider_ros.memory.interaction import Interaction, Recovery
from raider_ros.memory.store import EpisodicMemory, EpisodicMemoryError
from raider_ros.recovery.plan import PLACEHOLDER_NAMES, Literal, Plan, PlanError, PlanStep, parse_plan

RULES_NAME = "rules (no LLM)"
MAX_ANSWER = 400
NEEDS_FOR_EDIT = {"deliver": "pickupable", "close": "openable", "open": "openable",
                  "turn_on": "toggleable", "turn_off": "toggleable"}
VERB_TEXT = {"close": "close", "open": "open", "turn_on": "switch on", "turn_off": "switch off"}

Similar = Callable[[str, Sequence[str]], np.ndarray]   # phrase, candidate phrases -> cosine similarities


class ImproveError(RuntimeError):
    """The improver could not answer (an LLM failure, an unusable prompt file)."""


@dataclass
class Improvement:
    """An improver's answers. ``plan``: the improved task plan text (None: the task is
    unchanged); ``recovery_plan`` with ``recovery_index``: an improved recovery plan."""
    problem: str = ""
    improvement: str = ""
    plan: str | None = None
    recovery_plan: str | None = None
    recovery_index: int | None = None
    no_problem: bool = False
    failure: str = ""                     # why the improver could not write the change
    backend: str = RULES_NAME


@dataclass
class LearnOutcome:
    stored: list[Episode] = field(default_factory=list)
    reason: str = ""                      # what to tell the person when nothing was stored
    problem: str = ""
    improvement: str = ""
    backend: str = RULES_NAME

    @property
    def learned(self) -> bool:
        return bool(self.stored)


# --------------------------------------------------------------------------- rules improver
@dataclass
class _Edit:
    kind: str                 # deliver | action | move_closer
    thing: str | None = None
    action: str | None = None
    before: bool = False


class RulesImprover:
    """Reads the change a person dictated (no LLM). ``similar``: optional sentence-embedding
    similarity, used when a phrase names no object of the scene by its words."""

    name = RULES_NAME

    def __init__(self, config: LearningConfig | None = None, *, similar: Similar | None = None):
        self.cfg = config or LearningConfig.load()
        self.similar = similar
        c = self.cfg.corrections
        self._fillers = sorted(c["fillers"], key=len, reverse=True)
        self._breaks = c["clause_breaks"]
        self._situation = set(c["situation_words"])

    # ------------------------------------------------------------------ reading words
    def clauses(self, text: str) -> list[str]:
        """The instruction clauses of a correction, fillers removed; clauses that describe the
        situation ("after you take it out", "if you can't reach it") and clauses that do not
        start with a verb ("you left the fridge open") are dropped by :meth:`edits`."""
        out = []
        for sentence in re.split(r"[.!?]+", normalise(text)):
            for part in re.split(r"\s[,;:()]\s?|\s-\s|^[,;:-]\s", f" {sentence} "):
                pieces = [part]
                for b in self._breaks:
                    pieces = [p for piece in pieces for p in re.split(rf"\s(?={re.escape(b)}\s)", f" {piece} ")]
                out.extend(" ".join(p.split()) for p in pieces if p.strip())
        return out

    def _strip(self, clause: str) -> str:
        changed = True
        c = clause.strip(" ,")
        while changed and c:
            changed = False
            for f in self._fillers:
                if c == f:
                    return ""
                if c.startswith(f + " "):
                    c, changed = c[len(f) + 1:].strip(" ,"), True
                    break
                if c.endswith(" " + f):
                    c, changed = c[: -len(f) - 1].strip(" ,"), True
                    break
        return c

    def edits(self, text: str, it: Interaction, scene: SceneIndex) -> tuple[list[_Edit], list[str]]:
        """The changes asked for, and reasons for clauses that asked for something that
        cannot be done (an unknown object, ...)."""
        c = self.cfg.corrections
        edits: list[_Edit] = []
        problems: list[str] = []
        for raw in self.clauses(text):
            words = raw.split()
            if not words or words[0] in self._situation:
                continue
            clause = self._strip(raw)
            w = clause.split()
            if not w:
                continue
            before = any(re.search(rf"\b{re.escape(b)}\b", clause) for b in c["before_words"])
            if w[0] in c["move_verbs"] and any(re.search(rf"\b{re.escape(m)}\b", clause) for m in c["move_closer_words"]):
                edits.append(_Edit("move_closer"))
                continue
            action, rest = self._action_verb(w)
            if action is not None:
                thing = self._ground(self._object_words(rest), NEEDS_FOR_EDIT[action], scene, exclude=(),
                                     anchor=it.roles)
                if thing is None:
                    problems.append(f"I do not know which thing to {VERB_TEXT[action]} in {clause!r}")
                else:
                    edits.append(_Edit("action", thing, action, before))
                continue
            if w[0] in c["deliver_verbs"]:
                exclude = set(it.roles.values()) | {x for x, _ in it.handed_over()}
                thing = self._ground(self._object_words(w[1:]), "pickupable", scene, exclude=exclude,
                                     anchor=it.roles)
                if thing is None:
                    problems.append(f"I do not know what to bring in {clause!r}")
                else:
                    edits.append(_Edit("deliver", thing))
        return edits, problems

    def _object_words(self, words: Sequence[str]) -> list[str]:
        """The verb's object: the words up to the first of ``object_ends``."""
        ends = set(self.cfg.corrections["object_ends"])
        out = []
        for i, x in enumerate(words):
            if x in ends and out:
                break
            out.append(x)
        return out

    def _action_verb(self, w: list[str]) -> tuple[str | None, list[str]]:
        for action, phrases in self.cfg.corrections["action_verbs"].items():
            for ph in phrases:
                p = ph.split()
                if w[: len(p)] == p:
                    return action, w[len(p):]
                # separable particle: "switch the lamp on"
                if len(p) == 2 and w[0] == p[0] and p[1] in w[1:]:
                    return action, [x for x in w[1:] if x != p[1]]
        return None, w

    def _ground(self, words: Sequence[str], need: str, scene: SceneIndex, *, exclude, anchor) -> str | None:
        stop = set(self.cfg.corrections["stop_words"])
        ws = {singular(x) for x in words if x not in stop and not x.isdigit()}
        if not ws:
            return None
        cands = [t for t in scene.things.values() if not t.person and need in t.properties and t.id not in exclude]
        scored = []
        for t in cands:
            tw = [singular(x) for x in split_words(t.type) if not x.isdigit()]
            hit = sum(1 for x in tw if x in ws)
            if hit:
                scored.append((hit / len(tw), hit, t.id))
        if not scored and self.similar is not None and cands:
            phrase = " ".join(x for x in words if x not in stop)
            sims = np.asarray(self.similar(phrase, [" ".join(split_words(t.type)) for t in cands]), dtype=float)
            i = int(np.argmax(sims))
            if sims[i] >= self.cfg.corrections["object_similarity"]:
                return cands[i].id
            return None
        if not scored:
            return None
        best = max(s[:2] for s in scored)
        ids = [s[2] for s in scored if s[:2] == best]
        if len(ids) > 1:   # several of a kind: the one nearest the request's object
            ref = next((scene.things[i].center for i in anchor.values() if i in scene.things), None)
            if ref is not None:
                ids.sort(key=lambda i: sum((a - b) ** 2 for a, b in zip(scene.things[i].center, ref)))
        return ids[0]

    # ------------------------------------------------------------------ the change
    def improve(self, it: Interaction, feedback: str, scene: SceneIndex) -> Improvement:
        s = self.cfg.sentences
        edits, problems = self.edits(feedback, it, scene)
        if not edits:
            if problems:
                return Improvement(failure="; ".join(problems))
            return Improvement(no_problem=True, problem=s["no_problem"])
        steps = list(it.executed_plan().steps)
        task_changed = already = False
        rec_plan, rec_index = None, None
        probs, imps = [], []
        person = it.roles.get("person") or next((p for _, p in it.handed_over()), None)
        item = it.roles.get("item") or next(iter(it.roles.values()), "")
        for e in edits:
            if e.kind == "move_closer":
                found = self._move_closer(it)
                if isinstance(found, str):
                    problems.append(found)
                    continue
                rec_index, rec_plan, target = found
                probs.append(s["problem"]["move_closer"].format(target=_word(target)))
                imps.append(s["improvement"]["move_closer"])
                continue
            thing = e.thing
            if e.kind == "deliver":
                if person is None:
                    problems.append(f"I can carry one thing at a time and there is nobody to hand the "
                                    f"{_word(thing)} to")
                    continue
                carrier = scene.carrier(thing)
                steps += [_step("move_to", carrier or thing), _step("pick", thing), _step("move_to", person),
                          _step("handover", thing, person)]
                probs.append(s["problem"]["deliver"].format(thing=_word(thing), item=_word(item)))
                imps.append(s["improvement"]["deliver"].format(thing=_word(thing), person=person))
                task_changed = True
                continue
            touching = [st.action for st in steps if st.action in VERB_TEXT and st.args == (Literal(thing),)]
            if touching and touching[0 if e.before else -1] == e.action:
                already = True          # the robot did just that: nothing to change
                continue
            new = [_step(e.action, thing)]
            if e.before:
                steps = [_step("move_to", thing), *new, *steps]
            else:
                if _last_target(steps) not in (thing, scene.carrier(thing)) and \
                        scene.carrier(_last_target(steps) or "") != thing:
                    new.insert(0, _step("move_to", thing))
                steps += new
            verb = VERB_TEXT[e.action]
            probs.append(s["problem"]["action"].format(verb=verb, thing=_word(thing)))
            imps.append(s["improvement"]["action_before" if e.before else "action_after"].format(
                verb=verb, thing=_word(thing)))
            task_changed = True
        if not task_changed and rec_plan is None:
            if already and not problems:       # the same plan again: discarded by rule 2
                return Improvement(problem=" ".join(probs), plan=Plan(tuple(steps)).to_code())
            return Improvement(failure="; ".join(problems) or s["no_problem"])
        return Improvement(problem=" ".join(probs), improvement=" ".join(imps),
                           plan=Plan(tuple(steps)).to_code() if task_changed else None,
                           recovery_plan=rec_plan, recovery_index=rec_index,
                           failure="; ".join(problems))

    def _move_closer(self, it: Interaction):
        """The last recovery in which the robot asked the person for help: its plan with each
        question replaced by moving to the step's object."""
        for i in range(len(it.recoveries) - 1, -1, -1):
            rec = it.recoveries[i]
            try:
                plan = parse_plan(rec.plan)
            except PlanError:
                continue
            asks = [s for s in plan.steps if s.action == "ask"]
            if not asks or not rec.args:
                continue
            if any(s.binds for s in asks):
                return "the robot's question there asked for information, which moving closer does not give"
            target = rec.args[0]
            steps = []
            for s in plan.steps:
                if s.action == "ask":
                    if not (steps and steps[-1].action == "move_to"):
                        steps.append(_step("move_to", target))
                else:
                    steps.append(s)
            return i, Plan(tuple(steps)).to_code(), target
        return "I did not ask you to bring anything closer this time"


def _step(action: str, *args: str) -> PlanStep:
    return PlanStep(action, tuple(Literal(a) for a in args))


def _last_target(steps: Sequence[PlanStep]) -> str | None:
    for s in reversed(steps):
        if s.action == "move_to" and s.args and isinstance(s.args[0], Literal):
            return s.args[0].value
    return None


def _word(thing_id: str | None) -> str:
    return " ".join(w for w in split_words(thing_id or "") if not w.isdigit()) or "object"


# --------------------------------------------------------------------------- LLM improver
@dataclass(frozen=True)
class ImprovePrompt:
    """``data/prompts/memory/improve.yaml``: system text, the three questions, the patterns of
    a "no problem" answer and worked examples."""
    system: str
    intro: str
    questions: tuple[str, str, str]
    no_problem: tuple[re.Pattern, ...]
    examples: tuple[dict, ...]

    @classmethod
    def load(cls, path: str | Path | None = None) -> "ImprovePrompt":
        doc, p = read_yaml_mapping(path or (data_dir() / "prompts" / "memory" / "improve.yaml"),
                                   what="improvement prompt", error=ImproveError)

        def text(key: str, m=doc, where="") -> str:
            v = m.get(key)
            if not isinstance(v, str) or not v.strip():
                raise ImproveError(f"{p}: {where}{key}: expected text")
            return v.strip()

        system = text("system")
        actions_file = doc.get("actions_file")
        if actions_file:
            f = (p.parent / str(actions_file)).resolve()
            try:
                system += "\n\n" + f.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ImproveError(f"{p}: actions_file: cannot read {f}: {exc.strerror or exc}") from None
        q = doc.get("questions")
        if not isinstance(q, dict):
            raise ImproveError(f"{p}: questions: expected problem, improvement and plan")
        questions = (text("problem", q, "questions."), text("improvement", q, "questions."), text("plan", q, "questions."))
        pats = doc.get("no_problem")
        if not isinstance(pats, list) or not pats:
            raise ImproveError(f"{p}: no_problem: expected a list of regular expressions")
        try:
            no_problem = tuple(re.compile(x, re.I) for x in pats)
        except (re.error, TypeError) as exc:
            raise ImproveError(f"{p}: no_problem: not a regular expression: {exc}") from None
        examples = []
        for i, ex in enumerate(doc.get("examples") or []):
            if not isinstance(ex, dict):
                raise ImproveError(f"{p}: examples[{i}]: expected a mapping")
            examples.append({k: text(k, ex, f"examples[{i}].") for k in ("interaction", "problem", "improvement", "plan")})
        return cls(system, text("intro"), questions, no_problem, tuple(examples))

    def is_no_problem(self, answer: str) -> bool:
        a = " ".join(answer.strip().strip("\"'`*").split())
        return any(p.search(a) for p in self.no_problem)

    def opening(self, transcript: str) -> str:
        return f"{self.intro}\n\n{transcript}\n\n{self.questions[0]}"

    def base_messages(self) -> list[dict]:
        msgs = [{"role": "system", "content": self.system}]
        for ex in self.examples:
            msgs += [{"role": "user", "content": self.opening(ex["interaction"])},
                     {"role": "assistant", "content": ex["problem"]},
                     {"role": "user", "content": self.questions[1]},
                     {"role": "assistant", "content": ex["improvement"]},
                     {"role": "user", "content": self.questions[2]},
                     {"role": "assistant", "content": ex["plan"]}]
        return msgs


class LLMImprover:
    """The paper's L_improve: three chain-of-thought questions to an LLM
    (``complete(messages, *, deadline) -> reply with .text``)."""

    def __init__(self, llm: Any, *, prompt: ImprovePrompt | None = None, timeout_s: float = 60.0):
        if not callable(getattr(llm, "complete", None)):
            raise ValueError(f"{llm!r} has no complete(messages, *, deadline) method")
        self.llm, self.timeout_s = llm, timeout_s
        self.prompt = prompt or ImprovePrompt.load()
        self.name = str(getattr(llm, "name", type(llm).__name__))
        self.last_messages: list[dict] = []

    def _ask(self, messages: list[dict], deadline: float) -> str:
        try:
            reply = self.llm.complete(messages, deadline=deadline)
        except Exception as exc:  # noqa: BLE001 - an LLM failure is a reason, not a crash
            raise ImproveError(f"the improvement LLM failed: {type(exc).__name__}: {exc}") from None
        text = getattr(reply, "text", None)
        if not isinstance(text, str) or not text.strip():
            raise ImproveError("the improvement LLM gave an empty answer")
        return text.strip()

    def improve(self, it: Interaction, feedback: str, scene: SceneIndex) -> Improvement:
        deadline = time.monotonic() + self.timeout_s
        transcript = it.transcript() + (f"\nperson: {feedback.strip()}" if feedback and feedback.strip() else "")
        msgs = self.prompt.base_messages() + [{"role": "user", "content": self.prompt.opening(transcript)}]
        self.last_messages = msgs
        problem = self._ask(msgs, deadline)
        if self.prompt.is_no_problem(problem):
            return Improvement(no_problem=True, problem=_one_line(problem), backend=self.name)
        msgs += [{"role": "assistant", "content": problem}, {"role": "user", "content": self.prompt.questions[1]}]
        improvement = self._ask(msgs, deadline)
        msgs += [{"role": "assistant", "content": improvement}, {"role": "user", "content": self.prompt.questions[2]}]
        plan = self._ask(msgs, deadline)
        msgs.append({"role": "assistant", "content": plan})
        return Improvement(problem=_one_line(problem), improvement=_one_line(improvement), plan=plan,
                           backend=self.name)


def _one_line(text: str) -> str:
    t = " ".join(str(text).split())
    return t if len(t) <= MAX_ANSWER else t[: MAX_ANSWER - 3] + "..."


# --------------------------------------------------------------------------- learning
def learn_from_interaction(memory: EpisodicMemory, it: Interaction, feedback: str, scene: SceneIndex, *,
                           improver: RulesImprover | LLMImprover | None = None,
                           known_names: Sequence[str] | None = None) -> LearnOutcome:
    """Improve the interaction from the person's ``feedback`` and store the lesson(s).

    ``scene``: the world as it was when the interaction started (types and carriers of the
    ids the lesson uses). ``known_names``: names a plan may use (default: the scene's ids).
    Never raises for a bad improvement or a memory failure: the outcome's ``reason`` says why
    nothing was stored.
    """
    improver = improver or RulesImprover()
    backend = getattr(improver, "name", RULES_NAME)
    try:
        imp = improver.improve(it, feedback, scene)
    except ImproveError as exc:
        return LearnOutcome(reason=str(exc), backend=backend)
    out = LearnOutcome(problem=imp.problem, improvement=imp.improvement, backend=backend)
    if imp.no_problem:                                   # discard rule 1
        out.reason = f"nothing to learn: {imp.problem or 'no problem found'}"
        return out
    if imp.plan is None and imp.recovery_plan is None:
        out.reason = f"nothing learned: {imp.failure or 'no change found'}"
        return out
    names = list(known_names) if known_names is not None else list(scene.things)
    drafts: list[Episode] = []
    reasons: list[str] = []
    if imp.plan is not None:
        try:
            plan = parse_plan(imp.plan, known_names=names)
        except PlanError as exc:
            reasons.append(f"the improved plan was rejected: {exc}")
        else:
            if _same(plan, it.executed_plan()) or _same(plan, _parse_or_none(it.plan)):   # discard rule 2
                reasons.append(memory_sentence(improver, "same_plan"))
            else:
                drafts.append(_task_episode(it, feedback, plan, imp, scene, backend))
    if imp.recovery_plan is not None and imp.recovery_index is not None:
        rec = it.recoveries[imp.recovery_index]
        try:
            plan = parse_plan(imp.recovery_plan, known_names=names)
        except PlanError as exc:
            reasons.append(f"the improved recovery plan was rejected: {exc}")
        else:
            if _same(plan, _parse_or_none(rec.plan)):
                reasons.append(memory_sentence(improver, "same_plan"))
            else:
                drafts.append(_recovery_episode(it, rec, feedback, plan, imp, scene, backend))
    if imp.failure:
        reasons.append(imp.failure)
    for d in drafts:
        try:
            out.stored.append(memory.add(d))
        except EpisodicMemoryError as exc:
            reasons.append(f"the lesson could not be stored: {exc}")
            break
    out.reason = "; ".join(reasons)
    return out


def memory_sentence(improver: Any, key: str) -> str:
    cfg = getattr(improver, "cfg", None) or LearningConfig.load()
    return str(cfg.sentences[key])


def _parse_or_none(text: str) -> Plan | None:
    try:
        return parse_plan(text) if text and text.strip() else None
    except PlanError:
        return None


def _same(a: Plan | None, b: Plan | None) -> bool:
    return a is not None and b is not None and a.to_code() == b.to_code()


def _record(it: Interaction) -> dict:
    dialogue = [("person", it.request)]
    for a in it.acts:
        if a.action == "ask":
            dialogue.append(("robot", a.args[0] if a.args else ""))
            if a.message:
                dialogue.append(("person", a.message))
        elif a.action == "say":
            dialogue.append(("robot", a.args[0] if a.args else ""))
    dialogue += [("person", u) for u in it.utterances]
    issues = [{"action": r.action, "args": list(r.args), "issue": r.issue, "category": r.category,
               "explanation": r.explanation} for r in it.recoveries]
    runs = [{"plan": it.plan, "source": it.plan_source, "result": "success" if it.success else it.reason}]
    runs += [{"plan": r.plan, "source": r.source, "result": f"recovery for {r.query}"} for r in it.recoveries]
    return {"dialogue": dialogue, "issues": issues, "runs": runs, "scene": it.scene}


def _carriers(ids: Sequence[str], scene: SceneIndex) -> dict[str, str]:
    out = {}
    for i in ids:
        c = scene.carrier(i)
        if c is not None and c in ids:
            out[i] = c
    return out


def _task_episode(it, feedback, plan: Plan, imp: Improvement, scene: SceneIndex, backend: str) -> Episode:
    ids = [x for x in dict.fromkeys([*plan_ids(plan), *it.roles.values()]) if x not in PLACEHOLDER_NAMES]
    return Episode(scope="task", kind="lesson", task=it.task or "task", instructions=(*it.instructions, feedback.strip()),
                   plan=plan.to_code(), roles=dict(it.roles), types=scene.types(ids), carriers=_carriers(ids, scene),
                   feedback=feedback.strip(), problem=imp.problem, improvement=imp.improvement,
                   source=backend, **_record(it))


def _recovery_episode(it, rec: Recovery, feedback, plan: Plan, imp: Improvement, scene: SceneIndex,
                      backend: str) -> Episode:
    roles = {f"arg{i + 1}": a for i, a in enumerate(rec.args)}
    ids = [x for x in dict.fromkeys([*plan_ids(plan), *rec.args]) if x not in PLACEHOLDER_NAMES]
    return Episode(scope="recovery", kind="lesson", category=rec.category, action=rec.action, query=rec.query,
                   issue=rec.issue, explanation=rec.explanation, holding=rec.holding,
                   instructions=(*it.instructions, feedback.strip(),
                                 query_line(rec.query, rec.issue, rec.explanation, rec.holding)),
                   plan=plan.to_code(), roles=roles,
                   types=scene.types(ids), carriers=_carriers(ids, scene), feedback=feedback.strip(),
                   problem=imp.problem, improvement=imp.improvement, source=backend, **_record(it))
