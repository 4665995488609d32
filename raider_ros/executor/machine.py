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


@dataclass
class ExecutionOutcome:
    status: str                                 # success | aborted | cancelled
    reason: str
    steps: list[StepRecord]
    calls: Counter
    warnings: list[str]
    steps_total: int

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
    try:
        return template.format(*args) if template else f"{skill} {' '.join(args)}"
    except IndexError:
        return f"{skill} {' '.join(args)}"


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
        records: list[StepRecord] = []
        status, reason = "success", f"all {len(steps)} steps done"
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
        return ExecutionOutcome(status, reason, records, self._calls, self._warnings, len(steps))

    def _run_step(self, step: ExecStep, rec: StepRecord) -> None:
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
        self._calls[f"skill:{name}"] += 1
        result = self._call_port("skill", self.ports.skill, name, list(args), self._cancel,
                                 timeout=self.config.skill_timeout_s, step=step)
        self._check_cancel(step, f"during {name}")
        if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], bool)):
            raise _Stop("aborted", f"step {step.index + 1} {step}: the skill port returned {result!r}, "
                                   "expected (success, message)")
        ok, msg = result[0], str(result[1] or "")
        if ok:
            if name == "move_to" and args:
                self._location = args[0]
            elif name == "pick" and args:
                self._holding = args[0]
            elif name in ("place", "handover"):
                self._holding = None
        return ok, msg

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
        if timeout is None:
            try:
                return fn(*args)
            except Exception as exc:  # noqa: BLE001 - a port's failure becomes a reason
                raise _PortFailed(port, f"the {port} port failed: {type(exc).__name__}: {exc}", exc) from None
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
                raise _Stop("cancelled", f"cancelled at step {step.index + 1} {step} (the {port} port did not "
                                         f"stop within {self.config.cancel_grace_s:g} s)")
            if now > deadline:
                reason = f"the {port} port did not answer within {timeout:g} s"
                if step is not None and port in ("detect", "skill", "ask", "holding", "plan_recovery"):
                    raise _Stop("aborted", f"step {step.index + 1} {step}: {reason}")
                raise _PortFailed(port, reason)
        if "error" in box:
            exc = box["error"]
            if port == "plan_recovery" and isinstance(exc, PlanError):
                raise _PortFailed(port, str(exc), exc)
            reason = f"the {port} port failed: {type(exc).__name__}: {exc}"
            if step is not None and port in ("detect", "skill", "ask", "holding", "plan_recovery"):
                raise _Stop("aborted", f"step {step.index + 1} {step}: {reason}")
            raise _PortFailed(port, reason, exc)
        return box.get("value")
