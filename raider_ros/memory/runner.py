"""A simple plan runner on the simulator (ROS-free), recording an :class:`Interaction`.

It carries out a plan of the recovery plan language step by step with the simulator's skills
(:meth:`raider_ros.sim.world.SimWorld.execute`). A skill checks its preconditions on the
simulated truth and leaves the world unchanged when one does not hold; the runner then takes
the skill's message as the issue's explanation (a stand-in for RAIDER's check before the
action), asks the recovery planner for a plan (rules writer, with the memory's lessons when
the planner has a memory), runs it, and tries the step again, as the executor does: at most
``max_recoveries`` times per step. A recovery plan's last skill action, when it is the step
itself, is not run inside the recovery; the step is tried again after it. Questions go to the
person (``ask(question) -> answer | None``); an answer bound to a variable is turned into an
id by ``resolve_name``.
"""
from __future__ import annotations

from typing import Any, Callable

from raider_ros.memory.interaction import Act, Interaction, Recovery
from raider_ros.memory.tasks import TaskRequest
from raider_ros.recovery.plan import Plan, PlanError, PlanStep, Var
from raider_ros.recovery.rules_writer import RecoveryHints, infer_category


class PlanRunner:
    def __init__(self, world: Any, *, ask: Callable[[str], str | None],
                 say: Callable[[str], None] | None = None, resolve_name: Callable[[str], str] | None = None,
                 recovery: Any = None, max_recoveries: int = 2, aliases: dict[str, str] | None = None):
        self.world = world
        self.ask = ask
        self.say = say or (lambda _t: None)
        self.resolve_name = resolve_name or (lambda t: t)
        self.recovery = recovery
        self.max_recoveries = max_recoveries
        self.aliases = dict(aliases or {})

    def run(self, request: TaskRequest, plan: Plan, *, plan_source: str = "") -> Interaction:
        it = Interaction(request.say, request.task, dict(request.roles), getattr(self.world.scene, "name", ""),
                         plan.to_code(), plan_source, utterances=[])
        self._location: str | None = None
        bindings: dict[str, str] = {}
        for n, step in enumerate(plan.steps, 1):
            if step.action == "ask":
                answer = self._ask(it, _text(step, bindings), "task", None, step.binds)
                if step.binds and answer:
                    bindings[step.binds] = self.resolve_name(answer)
                continue
            if step.action == "say":
                self._say(it, _text(step, bindings), "task", None)
                continue
            try:
                args = self._args(step, bindings, self._location)
            except PlanError as exc:
                it.reason = f"step {n} {step.to_code()}: {exc}"
                return it
            ok, why = self._step(it, step.action, args)
            if not ok:
                it.reason = f"step {n} {step.action}({', '.join(args)}): {why}"
                return it
        it.success, it.reason = True, f"all {len(plan.steps)} steps done"
        return it

    # ------------------------------------------------------------------ one step with recoveries
    def _step(self, it: Interaction, action: str, args: list[str]) -> tuple[bool, str]:
        start = self._location
        recoveries = 0
        while True:
            ok, msg = self._skill(it, action, args, "task", None)
            if ok:
                return True, ""
            if self.recovery is None or recoveries >= self.max_recoveries:
                return False, msg if self.recovery is None else f"not resolved after {recoveries} recoveries: {msg}"
            recoveries += 1
            holding = self.world.scene.robot.holding
            query = f"{action}({', '.join(args)})"
            try:
                plan = self.recovery.plan(query, "unfeasibility", msg, holding,
                                          hints=RecoveryHints(grounding=tuple(args)),
                                          instructions=tuple(it.instructions))
            except PlanError as exc:
                it.recoveries.append(Recovery(action, tuple(args), "unfeasibility",
                                              infer_category("unfeasibility", msg, action), msg, holding,
                                              "", f"rejected: {exc}"))
                continue
            last = getattr(self.recovery, "last", None)
            source = getattr(last, "source", "") or getattr(self.recovery, "name", "")
            it.recoveries.append(Recovery(action, tuple(args), "unfeasibility",
                                          infer_category("unfeasibility", msg, action), msg, holding,
                                          plan.to_code(), source))
            self._recover(it, len(it.recoveries) - 1, plan, action, args, start)

    def _recover(self, it: Interaction, index: int, plan: Plan, action: str, args: list[str],
                 start: str | None) -> None:
        bindings: dict[str, str] = {}
        skills = [i for i, s in enumerate(plan.steps) if s.action not in ("ask", "say")]
        last = skills[-1] if skills else None
        for i, rs in enumerate(plan.steps):
            if rs.action == "ask":
                answer = self._ask(it, _text(rs, bindings), "recovery", index, rs.binds)
                if not answer:
                    return
                if rs.binds:
                    bindings[rs.binds] = self.resolve_name(answer)
                continue
            if rs.action == "say":
                self._say(it, _text(rs, bindings), "recovery", index)
                continue
            try:
                rargs = self._args(rs, bindings, start)
            except PlanError:
                return
            if i == last and rs.action == action and rargs == args:
                return                      # the step itself: tried again by the caller
            ok, _ = self._skill(it, rs.action, rargs, "recovery", index)
            if not ok:
                return

    # ------------------------------------------------------------------ ports
    def _skill(self, it: Interaction, action: str, args: list[str], origin: str, rec: int | None) -> tuple[bool, str]:
        r = self.world.execute(action, list(args))
        it.acts.append(Act(action, tuple(args), bool(r.success), r.message, origin, rec))
        if r.success and action == "move_to" and args:
            self._location = args[0]
        return bool(r.success), r.message

    def _ask(self, it: Interaction, question: str, origin: str, rec: int | None, binds: str | None) -> str | None:
        answer = self.ask(question)
        answer = answer.strip() if isinstance(answer, str) and answer.strip() else None
        it.acts.append(Act("ask", (question,), answer is not None, answer or "", origin, rec, binds))
        return answer

    def _say(self, it: Interaction, text: str, origin: str, rec: int | None) -> None:
        self.say(text)
        it.acts.append(Act("say", (text,), True, "", origin, rec))

    def _args(self, step: PlanStep, bindings: dict[str, str], start: str | None) -> list[str]:
        out = []
        for a in step.args:
            if isinstance(a, Var):
                if a.name not in bindings:
                    raise PlanError(f"variable {a.name!r} has no value (its question got no answer)")
                out.append(bindings[a.name])
            elif a.value.lower() == "current_loc":
                if not start:
                    raise PlanError("current_loc: the robot has not moved to any place yet")
                out.append(start)
            else:
                out.append(self.aliases.get(a.value, a.value))
        return out


def _text(step: PlanStep, bindings: dict[str, str]) -> str:
    a = step.args[0]
    return bindings.get(a.name, a.name) if isinstance(a, Var) else a.value
