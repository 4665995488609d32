"""The executor state machine (paper §5.2): check every plan step with RAIDER before acting,
recover from issues, and stop cleanly when it cannot.

ROS-free; the outside world comes in through :class:`Ports` (plain callables):

* ``detect(query, context) -> DetectionOutcome`` - the issue check;
* ``plan_recovery(query, issue, explanation, holding) -> Plan`` - may raise ``PlanError``;
* ``skill(name, args, cancel) -> (success, message)`` - one robot skill;
* ``ask(question, timeout_s) -> answer | None``, ``say(text)``;
* ``publish_explanation(step_index, query, issue, explanation, grounding)``;
* ``feedback(step_index, step, stage, message)`` with stage checking | issue | recovering |
  executing | done;
* optional ``holding() -> id | None`` (else tracked from the skills) and ``resolve_name(text)
  -> id`` (turns a person's answer such as "on the counter" into an id for a skill).

Safety Chip (optional ports ``check_action(action) -> SafetyVerdict``, ``check_plan(actions) ->
SafetyVerdict``, ``follow(action)``, ``safety_reset() -> SafetyVerdict``; docs/safety.md): with
``check_action`` given, every skill call - plan steps and recovery actions alike - is checked
right before it is dispatched and is never dispatched unless the monitor answers safe or
pending; a step is also checked before its issue check (with its own arguments, when the
monitor can read them), so a forbidden step is pruned without one. An unsafe step is pruned:
the executor publishes why, asks ``plan_recovery`` with issue ``unsafe`` and the corrective
re-prompt (constraints, invalid action, state change, reason), checks the new plan with
``check_plan`` and, when a step of it is unsafe, prunes that step and re-prompts with the
rejected plan - at most ``max_safety_replans`` re-prompts per step, then it stops with the
reason. A monitor that fails, does not answer within ``safety_timeout_s``, answers ``error``,
or restarted during the task (another ``session``) stops the task: no step is dispatched that
the monitor did not check. Each dispatched skill that succeeds is reported with ``follow``.

In recovery plans ``free_table`` and other names in ``config.aliases`` are replaced by their
ids, and ``current_loc`` by where the robot was when the step started (the last ``move_to``
target, else ``config.start_location``, else the step's own target).

For each step: detect; on an issue publish the explanation, plan a recovery, run it, detect
again - at most ``max_recovery_attempts`` recoveries per step. The person's answers to
an ``x = ask(...)`` (a clarification the plan binds) are passed as context to the next check
("It's the medicine closest to the plant").
The last skill action of a recovery plan, when it is the step's own skill, is the step itself:
it is not run inside the recovery, the executor re-checks and then runs the step. A skill that
fails is treated like an issue whose explanation is the skill's message. A port that raises or
does not answer in time aborts with a reason naming it (``say``, ``feedback`` and
``publish_explanation`` failures are only warnings). ``cancel`` (anything with ``is_set()``)
is checked before and after every port call and passed to skills; a port still running when
cancel is set gets ``cancel_grace_s`` to return.
"""
from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Mapping, Protocol, Sequence

from raider_ros.common.paths import data_dir
from raider_ros.common.yamlfile import read_yaml_mapping
from raider_ros.executor.mapping import ExecStep
from raider_ros.recovery.plan import Plan, PlanError, PlanStep, Var

ISSUES = ("none", "ambiguity", "unfeasibility")


class Cancel(Protocol):
    def is_set(self) -> bool: ...


@dataclass
class DetectionOutcome:
    issue: str                                  # none | ambiguity | unfeasibility
    explanation: str = ""
    grounding: list[str] = field(default_factory=list)
    status: str = "ok"                          # ok | error
    reason: str = ""                            # why, when status is error


@dataclass
class SafetyVerdict:
    """The Safety Chip's answer on one action (``check_action``) or a plan (``check_plan``)."""
    verdict: str                                # safe | pending | unsafe | error
    action: str = ""                            # the action judged (for a plan: the first unsafe one)
    explanation: str = ""
    violated: list[str] = field(default_factory=list)   # the violated constraints, as sentences
    corrective_prompt: str = ""                 # unsafe: constraints, invalid action, state change, reason
    first_unsafe_step: int | None = None        # check_plan
    reason: str = ""                            # error: why
    session: str = ""                           # the monitor's run; another one means it restarted


SAFETY_VERDICTS = ("safe", "pending", "unsafe", "error")


def _noop(*_args: Any, **_kw: Any) -> None:
    return None


@dataclass
class Ports:
    detect: Callable[[str, str], DetectionOutcome]
    plan_recovery: Callable[[str, str, str, str | None], Plan]
    skill: Callable[[str, list[str], Cancel], tuple[bool, str]]
    ask: Callable[[str, float], str | None]
    say: Callable[[str], None] = _noop
    publish_explanation: Callable[[int, str, str, str, list[str]], None] = _noop
    feedback: Callable[[int, ExecStep, str, str], None] = _noop
    holding: Callable[[], str | None] | None = None
    resolve_name: Callable[[str], str] | None = None
    # the Safety Chip (all optional; with check_action given, nothing unchecked is dispatched)
    check_action: Callable[[str], SafetyVerdict] | None = None
    check_plan: Callable[[list[str]], SafetyVerdict] | None = None
    follow: Callable[[str], Any] | None = None
    safety_reset: Callable[[], SafetyVerdict] | None = None


@dataclass
class ExecutorConfig:
    max_recovery_attempts: int = 3
    detect_timeout_s: float = 120.0
    plan_timeout_s: float = 60.0
    skill_timeout_s: float = 120.0
    ask_timeout_s: float = 60.0
    cancel_grace_s: float = 2.0
    aliases: Mapping[str, str] = field(default_factory=dict)   # e.g. {"free_table": "Table_2"}
    start_location: str | None = None
    initial_holding: str | None = None
    say_on_abort: bool = True
    safety_timeout_s: float = 5.0               # longest wait for one answer of the safety monitor
    max_safety_replans: int = 3                 # corrective re-prompts per step before stopping
    # what serves each port (e.g. {"skill": "the execute_skill action server"}): a port that does
    # not answer in time is named by it in the abort reason
    port_names: Mapping[str, str] = field(default_factory=dict)


@dataclass
class StepRecord:
    index: int
    step: str
    query: str
    status: str = "pending"                     # pending | done | aborted | cancelled
    recoveries: int = 0
    detections: list[DetectionOutcome] = field(default_factory=list)
    plans: list[str] = field(default_factory=list)
    answers: list[tuple[str, str | None]] = field(default_factory=list)
    skill_args: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    safety_replans: int = 0                     # corrective re-prompts after unsafe actions
    pruned: list[str] = field(default_factory=list)     # unsafe actions that were not dispatched


@dataclass
class ExecutionOutcome:
    status: str                                 # success | aborted | cancelled
    reason: str
    steps: list[StepRecord]
    calls: Counter
    warnings: list[str]
    steps_total: int
    dispatched: list[str] = field(default_factory=list)    # every skill call sent to the robot, in order

    @property
    def pruned(self) -> list[str]:
        return [p for s in self.steps for p in s.pruned]

    @property
    def success(self) -> bool:
        return self.status == "success"

    @property
    def steps_done(self) -> int:
        return sum(1 for s in self.steps if s.status == "done")

    def log_lines(self) -> list[str]:
        return [line for s in self.steps for line in s.log]


class _Stop(Exception):
    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status, self.reason = status, reason


class _Unsafe(Exception):
    def __init__(self, verdict: SafetyVerdict):
        super().__init__(verdict.explanation)
        self.verdict = verdict


class _PortFailed(Exception):
    def __init__(self, port: str, reason: str, exc: BaseException | None = None):
        super().__init__(reason)
        self.port, self.reason, self.exc = port, reason, exc


@lru_cache(maxsize=1)
def _narration() -> dict:
    doc, _ = read_yaml_mapping(data_dir() / "executor" / "narration.yaml", what="narration file")
    return {str(k): str(v) for k, v in doc.items()}


def narrate_skill(skill: str, args: Sequence[str]) -> str:
    """"picking up Medicine_1", "handing Medicine_1 to Person_1" (data/executor/narration.yaml)."""
    template = _narration().get(skill)
    # a room or place written in lower case ("living_room") is said with words; ids are left
    # to whoever shows the line (raider_ros/human/naming.py names them for people)
    args = [f"the {a.replace('_', ' ')}" if a.islower() and a.isidentifier() else a for a in args]
    try:
        return template.format(*args) if template else f"{skill} {' '.join(args)}"
    except IndexError:
        return f"{skill} {' '.join(args)}"


def _action_text(name: str, args: Sequence[str]) -> str:
    return f"{name}({', '.join(args)})"


def _split_action(text: str) -> tuple[str, list[str]]:
    name, _, rest = text.partition("(")
    return name.strip(), [a.strip() for a in rest.rstrip(")").split(",") if a.strip()]


class _Never:
    def is_set(self) -> bool:
        return False


class Executor:
    """Runs :class:`ExecStep` lists; one ``run`` at a time per instance."""

    def __init__(self, ports: Ports, config: ExecutorConfig | None = None):
        self.ports = ports
        self.config = config or ExecutorConfig()

    # ------------------------------------------------------------------ main loop
    def run(self, steps: Sequence[ExecStep], cancel: Cancel | None = None) -> ExecutionOutcome:
        self._cancel: Cancel = cancel if cancel is not None else _Never()
        self._calls: Counter = Counter()
        self._warnings: list[str] = []
        self._location = self.config.start_location
        self._holding = self.config.initial_holding
        self._dispatched: list[str] = []
        self._session: str | None = None
        records: list[StepRecord] = []
        status, reason = "success", f"all {len(steps)} steps done"
        if self.safety_on and self.ports.safety_reset is not None and steps:
            try:
                v = self._safety_call("safety_reset", self.ports.safety_reset, steps[0], what="start a new trace")
                if v.verdict in ("unsafe", "error"):
                    raise _Stop("aborted", f"the safety monitor cannot start the task: {v.explanation or v.reason}; "
                                           "no step is dispatched")
            except _Stop as stop:
                return ExecutionOutcome(stop.status, stop.reason, [], self._calls, self._warnings, len(steps), [])
        for step in steps:
            rec = StepRecord(step.index, str(step), step.query)
            records.append(rec)
            try:
                self._run_step(step, rec)
                rec.status = "done"
                self._feedback(step, "done", "done")
            except _Stop as stop:
                rec.status = "cancelled" if stop.status == "cancelled" else "aborted"
                rec.log.append(f"{stop.status}: {stop.reason}")
                status, reason = stop.status, stop.reason
                break
        return ExecutionOutcome(status, reason, records, self._calls, self._warnings, len(steps),
                                list(self._dispatched))

    @property
    def safety_on(self) -> bool:
        return self.ports.check_action is not None

    def _run_step(self, step: ExecStep, rec: StepRecord) -> None:
        """One step; an unsafe action (the step or a recovery action) is pruned and answered by a
        corrective re-plan, then the step is tried again."""
        pending: _Unsafe | None = None
        while True:
            try:
                if pending is not None:
                    unsafe, pending = pending, None
                    self._after_unsafe(step, rec, unsafe.verdict)
                if self.safety_on:              # prune before the issue check when the step is readable
                    self._gate(step.skill, [self._alias(a, self._location) for a in step.skill_args()], step,
                               strict=False)
                self._run_checked_step(step, rec)
                return
            except _Unsafe as u:
                pending = u

    def _run_checked_step(self, step: ExecStep, rec: StepRecord) -> None:
        cfg = self.config
        n = step.index + 1
        # current_loc: where the robot is when the step starts; when no move told us, the
        # place of the step's target ("the robot starts at the query location")
        target = step.skill_args()[0] if step.skill_args() else None
        start_location = self._location or target
        answers: list[str] = []
        while True:
            self._check_cancel(step, "before the issue check")
            self._feedback(step, "checking", f"checking {step.query}")
            context = " ".join(answers)
            det = self._call_port("detect", self.ports.detect, step.query, context, timeout=cfg.detect_timeout_s,
                                  step=step)
            self._check_cancel(step, "after the issue check")
            det = self._validate_detection(det, step)
            rec.detections.append(det)
            rec.log.append(f"step {n} {step}: check{' (with: ' + context + ')' if context else ''} -> "
                           f"{det.issue}{': ' + det.explanation if det.explanation else ''}")
            if det.issue == "none":
                args = self._skill_args(step, det.grounding)
                rec.skill_args = args
                self._feedback(step, "executing", narrate_skill(step.skill, args))
                ok, msg = self._run_skill(step.skill, args, step)
                rec.log.append(f"step {n}: {step.skill}({', '.join(args)}) -> {'ok' if ok else 'failed'}"
                               f"{': ' + msg if msg else ''}")
                if ok:
                    return
                issue, explanation = "unfeasibility", f"the {step.skill} skill failed: {msg or 'no reason given'}"
            else:
                issue, explanation = det.issue, det.explanation or "no explanation given"
            self._publish(step, issue, explanation, det.grounding)
            if rec.recoveries >= cfg.max_recovery_attempts:
                if cfg.say_on_abort:
                    self._say(f"I cannot carry out {step.query}: {explanation}", step)
                raise _Stop("aborted", f"step {n} {step}: {issue} not resolved after {rec.recoveries} recovery "
                                       f"attempt(s): {explanation}")
            rec.recoveries += 1
            self._feedback(step, "issue", f"{issue}: {explanation}")
            holding = self._current_holding(step)
            try:
                plan = self._call_port("plan_recovery", self.ports.plan_recovery, step.query, issue, explanation,
                                       holding, timeout=cfg.plan_timeout_s, step=step)
            except _PortFailed as exc:
                if isinstance(exc.exc, PlanError):
                    self._warn(f"step {n}: the recovery plan was rejected: {exc.exc}")
                    rec.log.append(f"step {n}: recovery plan rejected: {exc.exc}")
                    continue
                raise _Stop("aborted", f"step {n} {step}: {exc.reason}") from None
            self._check_cancel(step, "after recovery planning")
            if not isinstance(plan, Plan):
                raise _Stop("aborted", f"step {n} {step}: plan_recovery returned {type(plan).__name__}, not a Plan")
            rec.plans.append(plan.to_code())
            self._feedback(step, "recovering", f"recovery {rec.recoveries}/{cfg.max_recovery_attempts}: "
                                               + "; ".join(s.to_code(plan.variables) for s in plan.steps))
            rec.log.append(f"step {n}: recovery {rec.recoveries}: {plan.to_code().replace(chr(10), '; ')}")
            answers.extend(self._run_recovery(step, plan, rec, start_location))

    # ------------------------------------------------------------------ recovery
    def _run_recovery(self, step: ExecStep, plan: Plan, rec: StepRecord, start_location: str | None) -> list[str]:
        """Run a recovery plan; returns the person's answers. Ends early when a question goes
        unanswered or a skill fails (the next check shows what is left)."""
        n = step.index + 1
        answers: list[str] = []
        bindings: dict[str, str] = {}
        skill_positions = [i for i, s in enumerate(plan.steps) if s.action not in ("ask", "say")]
        last_skill = skill_positions[-1] if skill_positions else None
        for i, rs in enumerate(plan.steps):
            self._check_cancel(step, f"before recovery action {i + 1} ({rs.action})")
            if rs.action == "ask":
                question = self._text_arg(rs, bindings)
                ans = self._call_port("ask", self.ports.ask, question, self.config.ask_timeout_s,
                                      timeout=self.config.ask_timeout_s + self.config.cancel_grace_s, step=step)
                self._check_cancel(step, "after asking")
                if not isinstance(ans, str) or not ans.strip():
                    rec.answers.append((question, None))
                    rec.log.append(f"step {n}: asked {question!r} -> no answer")
                    self._warn(f"step {n}: no answer to {question!r}")
                    return answers
                ans = ans.strip()
                rec.answers.append((question, ans))
                rec.log.append(f"step {n}: asked {question!r} -> {ans!r}")
                if rs.binds:
                    # a bound answer is information the plan uses (a clarification such as
                    # "the one closest to the plant"): it goes with the next check. An unbound
                    # ask is a request ("could you move the chair?"); its answer is not context.
                    bindings[rs.binds] = ans
                    answers.append(ans)
            elif rs.action == "say":
                self._say(self._text_arg(rs, bindings), step)
                self._check_cancel(step, "after speaking")
            elif i == last_skill and rs.action == step.skill:
                rec.log.append(f"step {n}: the plan ends with the step itself; checking it again")
                return answers
            else:
                try:
                    args = self._resolve_args(rs, bindings, start_location)
                except (PlanError, _PortFailed) as exc:
                    rec.log.append(f"step {n}: recovery action {rs.to_code()} skipped: {exc}")
                    return answers
                ok, msg = self._run_skill(rs.action, args, step)
                rec.log.append(f"step {n}: recovery {rs.action}({', '.join(args)}) -> "
                               f"{'ok' if ok else 'failed'}{': ' + msg if msg else ''}")
                if not ok:
                    self._warn(f"step {n}: recovery action {rs.action}({', '.join(args)}) failed: {msg}")
                    return answers
        return answers

    def _text_arg(self, rs: PlanStep, bindings: Mapping[str, str]) -> str:
        a = rs.args[0]
        return bindings.get(a.name, a.name) if isinstance(a, Var) else a.value

    def _resolve_args(self, rs: PlanStep, bindings: Mapping[str, str], start_location: str | None) -> list[str]:
        out = []
        for a in rs.args:
            if isinstance(a, Var):
                if a.name not in bindings:
                    raise PlanError(f"variable {a.name!r} has no value")
                value = bindings[a.name]
                if self.ports.resolve_name is not None:
                    value = self._call_port("resolve_name", self.ports.resolve_name, value, timeout=None,
                                            step=None) or value
                out.append(value)
            else:
                out.append(self._alias(a.value, start_location))
        return out

    def _alias(self, value: str, start_location: str | None) -> str:
        if value.lower() == "current_loc" and start_location:
            return start_location
        return self.config.aliases.get(value, self.config.aliases.get(value.lower(), value))

    def _skill_args(self, step: ExecStep, grounding: Sequence[str]) -> list[str]:
        return [self._alias(a, self._location) for a in step.skill_args(grounding)]

    # ------------------------------------------------------------------ ports
    def _run_skill(self, name: str, args: list[str], step: ExecStep) -> tuple[bool, str]:
        if self.safety_on:
            self._gate(name, args, step, strict=True)
        self._calls[f"skill:{name}"] += 1
        self._dispatched.append(_action_text(name, args))
        result = self._call_port("skill", self.ports.skill, name, list(args), self._cancel,
                                 timeout=self.config.skill_timeout_s, step=step)
        self._check_cancel(step, f"during {name}")
        if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], bool)):
            raise _Stop("aborted", f"step {step.index + 1} {step}: the skill port returned {result!r}, "
                                   "expected (success, message)")
        ok, msg = result[0], str(result[1] or "")
        if ok and self.safety_on and self.ports.follow is not None:
            self._safety_call("follow", self.ports.follow, step, _action_text(name, args),
                              what=f"record {_action_text(name, args)}")
        if ok:
            if name == "move_to" and args:
                self._location = args[0]
            elif name == "pick" and args:
                self._holding = args[0]
            elif name in ("place", "handover"):
                self._holding = None
        return ok, msg

    # ------------------------------------------------------------------ safety
    def _safety_call(self, port: str, fn: Callable[..., Any], step: ExecStep, *args: Any, what: str) -> Any:
        """A safety port call; a failure, a timeout, an ``error`` verdict or a restarted monitor
        stops the task (nothing unchecked is dispatched)."""
        n = step.index + 1
        try:
            v = self._call_port(port, fn, *args, timeout=self.config.safety_timeout_s, step=None)
        except _PortFailed as exc:
            raise _Stop("aborted", f"step {n} {step}: not dispatched: the safety monitor could not {what} "
                                   f"({exc.reason}); while safety checking is on, no step is dispatched "
                                   "without its answer") from None
        self._check_cancel(step, f"after the safety monitor ({port})")
        if port == "follow" and not isinstance(v, SafetyVerdict):
            return v
        if not isinstance(v, SafetyVerdict) or v.verdict not in SAFETY_VERDICTS:
            raise _Stop("aborted", f"step {n} {step}: not dispatched: the safety monitor's answer to {what} "
                                   f"is not a verdict ({v!r})")
        if v.session:
            if self._session is None:
                self._session = v.session
            elif v.session != self._session:
                raise _Stop("aborted", f"step {n} {step}: not dispatched: the safety monitor restarted during "
                                       "the task and lost the trace of the steps done so far; no further step "
                                       "is dispatched")
        if port == "follow" and v.verdict in ("unsafe", "error"):
            self._warn(f"step {n}: the safety monitor on the executed {args[0]}: {v.verdict}: "
                       f"{v.explanation or v.reason}")
        return v

    def _gate(self, name: str, args: Sequence[str], step: ExecStep, *, strict: bool) -> None:
        """Ask the monitor about one action. strict (right before dispatch): only safe or
        pending passes, and an error stops the task; not strict (before the issue check, the
        step's own, possibly ungrounded, arguments): only an unsafe verdict counts."""
        action = _action_text(name, args)
        if not strict:
            self._feedback(step, "checking", f"checking {action} against the safety rules")
        v = self._safety_call("check_action", self.ports.check_action, step, action, what=f"check {action}")
        if v.verdict == "unsafe":
            raise _Unsafe(v if v.action else SafetyVerdict(**{**vars(v), "action": action}))
        if v.verdict == "error" and strict:
            raise _Stop("aborted", f"step {step.index + 1} {step}: not dispatched: the safety monitor cannot "
                                   f"check {action}: {v.reason or v.explanation or 'no reason given'}")

    def _after_unsafe(self, step: ExecStep, rec: StepRecord, v: SafetyVerdict) -> None:
        """Prune the unsafe action and re-plan with corrective re-prompts until the monitor
        accepts the new plan (then run it), within ``max_safety_replans``."""
        cfg = self.config
        n = step.index + 1
        prompt = v.corrective_prompt
        announce = True
        while True:
            rule = "; ".join(f'"{x}"' for x in v.violated) or v.explanation
            if announce:
                rec.pruned.append(v.action)
                rec.log.append(f"step {n}: pruned {v.action} (unsafe): {v.explanation}")
                self._publish(step, "unsafe", v.explanation, [])
                self._feedback(step, "issue", f"unsafe, not done: {narrate_skill(*_split_action(v.action))} "
                                              f"would break the rule {rule}")
            announce = True
            if rec.safety_replans >= cfg.max_safety_replans:
                if cfg.say_on_abort:
                    self._say(f"I will not do {step.query}: I found no way that keeps the rule {rule}.", step)
                raise _Stop("aborted", f"step {n} {step}: unsafe: {v.explanation} No safe plan after "
                                       f"{rec.safety_replans} corrective re-prompt(s).")
            rec.safety_replans += 1
            holding = self._current_holding(step)
            try:
                plan = self._call_port("plan_recovery", self.ports.plan_recovery, step.query, "unsafe",
                                       prompt or v.explanation, holding, timeout=cfg.plan_timeout_s, step=step)
            except _PortFailed as exc:
                if isinstance(exc.exc, PlanError):
                    self._warn(f"step {n}: the corrective plan was rejected: {exc.exc}")
                    rec.log.append(f"step {n}: corrective plan rejected: {exc.exc}")
                    announce = False
                    continue
                raise _Stop("aborted", f"step {n} {step}: {exc.reason}") from None
            self._check_cancel(step, "after corrective planning")
            if not isinstance(plan, Plan):
                raise _Stop("aborted", f"step {n} {step}: plan_recovery returned {type(plan).__name__}, not a Plan")
            code = "; ".join(s.to_code(plan.variables) for s in plan.steps)
            rec.plans.append(plan.to_code())
            rec.log.append(f"step {n}: corrective re-plan {rec.safety_replans}: {code}")
            if not any(s.action not in ("ask", "say") for s in plan.steps):
                # the planner found no way that keeps the rule: say so, then stop
                self._run_recovery(step, plan, rec, self._location)
                raise _Stop("aborted", f"step {n} {step}: unsafe: {v.explanation} The corrective re-plan has no "
                                       f"action that keeps the rule ({code}).")
            actions = self._plan_actions(step, plan)
            if actions and self.ports.check_plan is not None:
                pv = self._safety_call("check_plan", self.ports.check_plan, step, actions,
                                       what="check the corrective plan")
                if pv.verdict == "unsafe":
                    k = pv.first_unsafe_step if pv.first_unsafe_step is not None else 0
                    action = pv.action or (actions[k] if k < len(actions) else "")
                    v = SafetyVerdict(**{**vars(pv), "action": action})
                    prompt = pv.corrective_prompt
                    rec.log.append(f"step {n}: the corrective plan is unsafe at its step {k + 1} ({action})")
                    continue
            self._feedback(step, "recovering", f"safe re-plan {rec.safety_replans}/{cfg.max_safety_replans}: {code}")
            self._run_recovery(step, plan, rec, self._location or (step.skill_args() or [None])[0])
            return

    def _plan_actions(self, step: ExecStep, plan: Plan) -> list[str]:
        """The skill calls of a plan as the monitor reads them, up to the first whose arguments
        are only known at run time (an ask() answer; those are checked before dispatch), with
        the step itself at the end when the plan does not end with it."""
        out: list[str] = []
        start = self._location or (step.skill_args() or [None])[0]
        skills = [s for s in plan.steps if s.action not in ("ask", "say")]
        for rs in skills:
            if any(isinstance(a, Var) for a in rs.args):
                return out
            out.append(_action_text(rs.action, [self._alias(a.value, start) for a in rs.args]))
        if not skills or skills[-1].action != step.skill:
            out.append(_action_text(step.skill, [self._alias(a, self._location) for a in step.skill_args()]))
        return out

    def _current_holding(self, step: ExecStep) -> str | None:
        if self.ports.holding is None:
            return self._holding
        return self._call_port("holding", self.ports.holding, timeout=self.config.skill_timeout_s, step=step)

    def _validate_detection(self, det: Any, step: ExecStep) -> DetectionOutcome:
        n = step.index + 1
        if not isinstance(det, DetectionOutcome):
            raise _Stop("aborted", f"step {n} {step}: the issue check returned {type(det).__name__}, "
                                   "not a DetectionOutcome")
        if det.status != "ok":
            raise _Stop("aborted", f"step {n} {step}: the issue check failed: {det.reason or det.status}")
        issue = (det.issue or "").strip().lower()
        if issue not in ISSUES:
            raise _Stop("aborted", f"step {n} {step}: the issue check answered {det.issue!r}; "
                                   f"expected {', '.join(ISSUES)}")
        det.issue = issue
        det.grounding = [str(g) for g in (det.grounding or [])]
        return det

    def _say(self, text: str, step: ExecStep) -> None:
        try:
            self._call_port("say", self.ports.say, text, timeout=self.config.ask_timeout_s, step=step)
        except _PortFailed as exc:
            self._warn(exc.reason)

    def _publish(self, step: ExecStep, issue: str, explanation: str, grounding: list[str]) -> None:
        try:
            self._call_port("publish_explanation", self.ports.publish_explanation, step.index, step.query, issue,
                            explanation, list(grounding), timeout=None, step=step)
        except _PortFailed as exc:
            self._warn(exc.reason)

    def _feedback(self, step: ExecStep, stage: str, message: str) -> None:
        try:
            self._call_port("feedback", self.ports.feedback, step.index, step, stage, message, timeout=None,
                            step=step)
        except _PortFailed as exc:
            self._warn(exc.reason)

    def _warn(self, text: str) -> None:
        self._warnings.append(text)

    def _check_cancel(self, step: ExecStep, where: str) -> None:
        if self._cancel.is_set():
            raise _Stop("cancelled", f"cancelled at step {step.index + 1} {step} ({where})")

    def _call_port(self, port: str, fn: Callable[..., Any], *args: Any, timeout: float | None,
                   step: ExecStep | None) -> Any:
        """Call a port, counting it. ``timeout`` None: call inline (fast ports). Otherwise in
        a worker thread, so a port that hangs or ignores cancel cannot hang the executor."""
        self._calls[port] += 1
        served_by = self.config.port_names.get(port)
        label = f"the {port} port ({served_by})" if served_by else f"the {port} port"
        if timeout is None:
            try:
                return fn(*args)
            except Exception as exc:  # noqa: BLE001 - a port's failure becomes a reason
                raise _PortFailed(port, f"{label} failed: {type(exc).__name__}: {exc}", exc) from None
        box: dict[str, Any] = {}
        done = threading.Event()

        def work() -> None:
            try:
                box["value"] = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=work, name=f"executor-{port}", daemon=True).start()
        deadline = time.monotonic() + timeout
        cancel_deadline = None
        while not done.wait(0.01):
            now = time.monotonic()
            if cancel_deadline is None and self._cancel.is_set():
                cancel_deadline = now + self.config.cancel_grace_s
            if cancel_deadline is not None and now > cancel_deadline and step is not None:
                raise _Stop("cancelled", f"cancelled at step {step.index + 1} {step} ({label} did not "
                                         f"stop within {self.config.cancel_grace_s:g} s)")
            if now > deadline:
                reason = f"{label} did not answer within {timeout:g} s"
                if step is not None and port in ("detect", "skill", "ask", "holding", "plan_recovery"):
                    raise _Stop("aborted", f"step {step.index + 1} {step}: {reason}")
                raise _PortFailed(port, reason)
        if "error" in box:
            exc = box["error"]
            if port == "plan_recovery" and isinstance(exc, PlanError):
                raise _PortFailed(port, str(exc), exc)
            reason = f"{label} failed: {type(exc).__name__}: {exc}"
            if step is not None and port in ("detect", "skill", "ask", "holding", "plan_recovery"):
                raise _Stop("aborted", f"step {step.index + 1} {step}: {reason}")
            raise _PortFailed(port, reason, exc)
        return box.get("value")
