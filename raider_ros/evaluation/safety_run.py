"""Running the safety benchmark through the executor (in process): the pieces of
``make safety-eval`` (raider_ros/cli/safety_eval.py; docs/safety.md, "Evaluation").

* :class:`LocalSafetyPorts` - the executor's safety ports on an in-process
  :class:`~raider_ros.safety.service.SafetyService`, observing the simulated world;
* :class:`SimCheck` - the issue check of these runs: the simulator's own precondition check
  (names grounded as the simulator reads them, a name with several candidates is an ambiguity,
  the skill dry-run on a copy of the world). This evaluation measures the safety layer;
  RAIDER's checks are measured by ``make evaluate``;
* :func:`run_task` - one task case (a PDDL goal): plan, execute in the simulator, and judge the
  executed trace with the gold formulas, in one of three modes: ``off`` (no chip: plain plan,
  no checks), ``chip`` (plain plan; every action checked before dispatch, unsafe ones pruned
  and answered by corrective re-prompts, as in the paper) and ``chip+planner`` (the
  constraint-aware planner, raider_ros/executor/safe_plan.py, and the same checks);
* :func:`evaluate` - every case: monitor accuracy (plan cases), translation accuracy by
  automata equivalence split by batch, and the task runs with and without the chip.
"""
from __future__ import annotations

import math
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from raider_ros.executor.machine import DetectionOutcome, Executor, ExecutorConfig, Ports, SafetyVerdict
from raider_ros.executor.mapping import ActionMapping, MappingError
from raider_ros.executor.pddl_plan import PddlError, load_task, pddl_dir, plan
from raider_ros.executor.safe_plan import plan_safely
from raider_ros.human.people import ScriptedHuman
from raider_ros.recovery.planner import RecoveryPlanner
from raider_ros.safety.benchmark import SafetyBenchmark, SafetyCase, run_benchmark, score_translations
from raider_ros.safety.ltl import LTLError
from raider_ros.safety.monitor import SafetyMonitor
from raider_ros.safety.planning import MonitorLooker
from raider_ros.safety.predicates import SymbolicState
from raider_ros.safety.service import SafetyService, Verdict
from raider_ros.safety.translate import RulesTranslator
from raider_ros.sim.scene import Person
from raider_ros.sim.skills import SkillFailure, resolve
from raider_ros.sim.world import SimWorld

MODES = ("off", "chip", "chip+planner")


def to_verdict(v: Verdict) -> SafetyVerdict:
    return SafetyVerdict(v.verdict, v.action, v.explanation or v.reason, list(v.violated_text), v.corrective_prompt,
                         v.first_unsafe_step if v.first_unsafe_step >= 0 else None, v.reason, v.session)


class LocalSafetyPorts:
    """``check_action`` / ``check_plan`` / ``follow`` / ``safety_reset`` for :class:`Ports`,
    on an in-process service that sees the world through ``observe()`` before each answer."""

    def __init__(self, service: SafetyService, observe: Callable[[], SymbolicState] | None = None):
        self.service = service
        self.observe = observe
        self.calls: list[tuple[str, Any, str]] = []      # (port, argument, verdict)

    def _see(self) -> SymbolicState | None:
        if self.observe is None:
            return None
        st = self.observe()
        self.service.observe(st)
        return st

    def check_action(self, action: str) -> SafetyVerdict:
        self._see()
        v = self.service.check_action(action)
        self.calls.append(("check_action", action, v.verdict))
        return to_verdict(v)

    def check_plan(self, actions: list[str]) -> SafetyVerdict:
        self._see()
        v = self.service.check_plan(actions)
        self.calls.append(("check_plan", list(actions), v.verdict))
        return to_verdict(v)

    def follow(self, action: str) -> SafetyVerdict:
        st = self.observe() if self.observe is not None else None
        v = self.service.follow(action, st)
        self.calls.append(("follow", action, v.verdict))
        return to_verdict(v)

    def reset(self) -> SafetyVerdict:
        v = self.service.reset(self._see())
        self.calls.append(("reset", None, v.verdict))
        return to_verdict(v)

    def ports(self) -> dict[str, Any]:
        return {"check_action": self.check_action, "check_plan": self.check_plan, "follow": self.follow,
                "safety_reset": self.reset}


# --------------------------------------------------------------------------- the issue check
_QUERY = re.compile(r"^\s*(\w+)\s*\((.*)\)\s*$")


class SimCheck:
    """The simulator as the issue check (see the module docstring)."""

    def __init__(self, world: SimWorld):
        self.world = world
        self.calls: list[tuple[str, str]] = []

    def __call__(self, query: str, context: str) -> DetectionOutcome:
        self.calls.append((query, context))
        m = _QUERY.match(query)
        if not m:
            return DetectionOutcome("unfeasibility", f"cannot read the request {query!r}")
        action = {"approach": "move_to"}.get(m.group(1), m.group(1))
        names = [a.strip() for a in m.group(2).split(",") if a.strip()]
        scene = self.world.scene
        grounding: list[str] = []
        for name in names:
            if action == "move_to" and scene.room(name) is not None and not self._entity(name):
                grounding.append(name)
                continue
            try:
                e = resolve(scene, name, prefer=lambda x: x.id == scene.robot.holding)
            except SkillFailure as exc:
                cands = [x for x in scene.entities if x.type.lower().replace("_", "") == name.lower().replace("_", "")]
                if len(cands) > 1:
                    ref = re.search(r"closest to the (\w+)", context or "")
                    anchor = next((x for x in scene.entities if ref and x.type.lower() == ref.group(1).lower()), None)
                    if anchor is None:
                        ids = [x.id for x in cands]
                        return DetectionOutcome("ambiguity", f"{name} could be {' or '.join(ids)}", ids)
                    e = min(cands, key=lambda x: math.dist(x.center, anchor.center))
                else:
                    unknown = [p.id for p in scene.people if p.name is None]
                    if unknown and name[:1].isupper() is False and name.isalpha():
                        return DetectionOutcome("unfeasibility", f"{name} is not recognised: {', '.join(unknown)} "
                                                                 "is present but not recognised")
                    return DetectionOutcome("unfeasibility", str(exc))
            grounding.append(e.id)
        args = grounding[1:] if action == "place" else grounding
        trial = SimWorld(scene, renderer=self.world.renderer).execute(action, args)
        if not trial.success:
            return DetectionOutcome("unfeasibility", trial.message, grounding)
        return DetectionOutcome("none", "", grounding)

    def _entity(self, name: str) -> bool:
        try:
            resolve(self.world.scene, name)
            return True
        except SkillFailure:
            return False


# --------------------------------------------------------------------------- tasks
def task_of(case: SafetyCase) -> tuple[Any, ActionMapping]:
    """The PDDL task of a task case: ``domain`` (a name under data/pddl), ``problem`` (a file
    name in that folder, without .pddl; default, or the domain's own name: problem.pddl), and
    ``goal`` replacing the problem's goal."""
    t = case.task or {}
    domain = str(t.get("domain", "")).strip()
    folder = pddl_dir() / domain
    if not domain or not (folder / "domain.pddl").is_file():
        raise PddlError(f"case {case.id}: task.domain: no PDDL domain named {domain!r} under {pddl_dir()}")
    name = str(t.get("problem") or "problem").strip()
    prob = folder / f"{name}.pddl"
    if not prob.is_file():
        if name in (domain, "problem"):
            prob = folder / "problem.pddl"
        else:
            raise PddlError(f"case {case.id}: task.problem: no {prob}")
    text = prob.read_text(encoding="utf-8")
    goal = str(t["goal"]).strip()
    start = text.find("(:goal")
    if start < 0:
        raise PddlError(f"{prob}: no (:goal ...) section to replace")
    depth, end = 0, start
    for i in range(start, len(text)):
        depth += text[i] == "("
        depth -= text[i] == ")"
        if depth == 0:
            end = i + 1
            break
    task = load_task(folder / "domain.pddl", text[:start] + f"(:goal {goal})" + text[end:])
    try:
        mapping = ActionMapping.load(str(t.get("mapping", "")), domain)
    except MappingError as exc:
        raise PddlError(str(exc)) from None
    return task, mapping


@dataclass
class TaskRun:
    id: str
    mode: str
    constraints: str                        # gold | rules (the formulas the chip enforced)
    success: bool
    safe: bool                              # no constraint violated by the executed trace (gold formulas)
    unsafe_steps_dispatched: int            # dispatched steps after which a gold constraint was violated
    violated: list[int] = field(default_factory=list)
    open_obligations: list[int] = field(default_factory=list)   # gold constraints still pending at the end
    dispatched: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    corrective_replans: int = 0
    planned: list[str] = field(default_factory=list)
    reason: str = ""
    untranslated: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _translated(case: SafetyCase, state: SymbolicState, translator: Any) -> tuple[list[dict], list[str]]:
    items, failed = [], []
    for s in case.constraints:
        try:
            tr = translator.translate(s, state)
            items.append({"ltl": tr.formula, "text": s, "english": tr.english, "source": translator.name})
        except LTLError as exc:
            failed.append(f"{s}: {str(exc).splitlines()[0]}")
    return items, failed


def run_task(bench: SafetyBenchmark, case: SafetyCase, mode: str, *, constraints: str = "gold",
             translator: Any = None, planner_time_limit_s: float = 120.0, planner_max_states: int = 1500,
             max_safety_replans: int = 3) -> TaskRun:
    """One task run (see the module docstring). The constraint-aware planner is bounded by a
    number of states (deterministic, whatever the machine's load) and a generous time limit."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    t0 = time.monotonic()
    scene = bench.world(case)
    world = SimWorld(scene)
    state0 = SymbolicState.from_scene(scene)

    def observe() -> SymbolicState:
        return SymbolicState.from_truth(world.truth())

    judge = SafetyMonitor(state0)
    judge.add_many([{"ltl": g, "text": s} for g, s in zip(case.ltl or (), case.constraints)])
    run = TaskRun(case.id, mode, constraints if mode != "off" else "-", False, True, 0)
    service = None
    if mode != "off":
        monitor = SafetyMonitor(state0, translator=translator)
        if constraints == "gold":
            items = [{"ltl": g, "text": s} for g, s in zip(case.ltl or (), case.constraints)]
        else:
            items, run.untranslated = _translated(case, state0, translator or RulesTranslator())
        for it in items:           # one by one: a constraint the monitor refuses is left out, and said so
            try:
                monitor.add_many([it])
            except LTLError as exc:
                run.untranslated.append(f"{it.get('text')}: {str(exc).splitlines()[0]}")
        service = SafetyService(monitor)
    try:
        task, mapping = task_of(case)
        if mode == "chip+planner":
            res = plan_safely(task, mapping, MonitorLooker(service.monitor), time_limit_s=planner_time_limit_s,  # type: ignore[union-attr]
                              max_states=planner_max_states)
            actions = res.actions
        else:
            actions = plan(task, time_limit_s=planner_time_limit_s).actions
        steps = mapping.bind(actions, task)
    except PddlError as exc:
        run.reason = f"no plan: {exc}"
        run.seconds = time.monotonic() - t0
        return run
    run.planned = [f"{s.skill}({', '.join(s.skill_args())})" for s in steps]
    scenario = (case.task or {}).get("scenario")
    human = ScriptedHuman(scenario, apply_world_change=lambda s: world.apply_setup(s, reset=False)) if scenario else None
    dead: set[int] = set()

    def skill(name: str, args: list[str], cancel) -> tuple[bool, str]:
        r = world.execute(name, args, cancel=cancel.is_set)
        if r.success:
            action = f"{name}({', '.join(args)})"
            try:
                judge.follow(action, observe())
            except Exception as exc:  # noqa: BLE001 - the judge cannot read it: leave the trace
                run.reason = run.reason or f"judge: {exc}"
            now = {cid for cid, st in judge.status().items() if st == "unsafe"}
            if now - dead:
                run.unsafe_steps_dispatched += 1
                dead.update(now)
        return r.success, r.message

    recovery = RecoveryPlanner()
    ports = Ports(detect=SimCheck(world), plan_recovery=lambda q, i, e, h: recovery.plan(q, i, e, h), skill=skill,
                  ask=(human.ask if human else (lambda q, t: None)), say=(human.say if human else (lambda t: None)),
                  holding=lambda: world.scene.robot.holding,
                  resolve_name=human.resolve_name if human else None,
                  **(LocalSafetyPorts(service, observe).ports() if service is not None else {}))
    out = Executor(ports, ExecutorConfig(max_recovery_attempts=2, max_safety_replans=max_safety_replans,
                                         say_on_abort=False)).run(steps)
    run.success = out.success
    run.reason = out.reason if not run.reason else f"{out.reason} ({run.reason})"
    run.dispatched = list(out.dispatched)
    run.pruned = out.pruned
    run.corrective_replans = sum(s.safety_replans for s in out.steps)
    status = judge.status()
    run.violated = sorted(i for i, st in status.items() if st == "unsafe")
    run.open_obligations = sorted(i for i, st in status.items() if st == "pending")
    run.safe = not run.violated
    run.seconds = time.monotonic() - t0
    return run


# --------------------------------------------------------------------------- the whole benchmark
def _rate(xs: Sequence[bool]) -> float | None:
    return round(sum(xs) / len(xs), 3) if xs else None


def evaluate(bench: SafetyBenchmark, *, modes: Sequence[str] = MODES, constraints: Sequence[str] = ("rules", "gold"),
             planner_time_limit_s: float = 120.0, planner_max_states: int = 1500,
             progress: Callable[[str], None] | None = None,
             case_filter: Callable[[SafetyCase], bool] | None = None) -> dict[str, Any]:
    """Everything ``report.json`` holds (see raider_ros/cli/safety_eval.py)."""
    cases = [c for c in bench.cases if case_filter is None or case_filter(c)]
    sub = SafetyBenchmark(bench.directory, cases, bench.scenes)
    t0 = time.monotonic()
    mon = run_benchmark(sub)
    translator = RulesTranslator()
    tr = score_translations(sub, translator)
    last_change = 2          # batches 1-2 were written before the rules translator's last change
    before = [r for r in tr if (r.batch or 0) <= last_change]
    after = [r for r in tr if (r.batch or 0) > last_change]
    results: list[dict[str, Any]] = []
    for r in mon["results"]:
        results.append({"id": r.id, "kind": "plan", "ok": r.ok, "first_unsafe_step": r.first_unsafe_step,
                        "violated": list(r.violated), "expected": dict(r.expected), "error": r.error})
    runs: list[TaskRun] = []
    tasks = [c for c in cases if c.task is not None]
    for case in tasks:
        entry: dict[str, Any] = {"id": case.id, "kind": "task", "goal": case.task.get("goal"),  # type: ignore[union-attr]
                                 "safe_plan_exists": case.expected.get("safe_plan_exists"), "runs": {}}
        for mode in modes:
            for src in (constraints if mode != "off" else ("-",)):
                run = run_task(bench, case, mode, constraints=src if src != "-" else "gold", translator=translator,
                               planner_time_limit_s=planner_time_limit_s, planner_max_states=planner_max_states)
                run.constraints = src
                runs.append(run)
                entry["runs"][f"{mode}/{src}"] = asdict(run)
                if progress:
                    progress(f"{case.id} {mode:<12} {src:<5} success={run.success!s:<5} safe={run.safe!s:<5} "
                             f"unsafe dispatched={run.unsafe_steps_dispatched} pruned={len(run.pruned)} "
                             f"({run.seconds:.1f} s)")
        results.append(entry)

    def rates(mode: str, src: str) -> dict[str, Any]:
        rs = [r for r in runs if r.mode == mode and r.constraints == src]
        return {"success_rate": _rate([r.success for r in rs]), "safety_rate": _rate([r.safe for r in rs]),
                "unsafe_steps_dispatched": sum(r.unsafe_steps_dispatched for r in rs), "runs": len(rs)}

    table = {f"{m}/{s}": rates(m, s) for m in modes for s in (constraints if m != "off" else ("-",))}
    main_chip = "chip+planner/rules" if "chip+planner/rules" in table else next((k for k in table if k != "off/-"), None)
    off = table.get("off/-", {})
    chip = table.get(main_chip or "", {})
    translation = {
        "sentences": len(tr), "accuracy": _rate([r.equivalent for r in tr]),
        "before_last_change": {"batches": "1-2 (dev)", "sentences": len(before), "accuracy": _rate([r.equivalent for r in before])},
        "after_last_change": {"batches": "3+ (held out)", "sentences": len(after), "accuracy": _rate([r.equivalent for r in after])},
        "by_batch": {str(b): {"sentences": len([r for r in tr if r.batch == b]),
                              "accuracy": _rate([r.equivalent for r in tr if r.batch == b])}
                     for b in sorted({r.batch for r in tr if r.batch is not None})},
        "failures": [{"sentence": r.sentence, "gold": r.gold, "produced": r.produced, "error": r.error,
                      "counterexample": r.counterexample, "batch": r.batch} for r in tr if not r.equivalent],
    }
    return {
        "cases": len(cases),
        "plan_cases": mon["cases"], "task_cases": len(tasks),
        "translation_accuracy": translation["accuracy"],
        "translation": translation,
        "monitor_accuracy": round(mon["accuracy"], 3) if mon["accuracy"] is not None else None,
        "success_rate_with_chip": chip.get("success_rate"), "safety_rate_with_chip": chip.get("safety_rate"),
        "success_rate_without_chip": off.get("success_rate"), "safety_rate_without_chip": off.get("safety_rate"),
        "unsafe_steps_dispatched_with_chip": sum(v["unsafe_steps_dispatched"] for k, v in table.items() if k != "off/-"),
        "unsafe_steps_dispatched_without_chip": off.get("unsafe_steps_dispatched"),
        "with_chip_means": main_chip,
        "table": table,
        "translator": translator.name,
        "planner_max_states": planner_max_states,
        "seconds": round(time.monotonic() - t0, 1),
        "results": results,
    }


MODE_TEXT = {
    "off/-": "Without the chip (plain plan, no checks)",
    "chip/rules": "Safety Chip: pruning + corrective re-prompts (rules translator)",
    "chip/gold": "Safety Chip: pruning + corrective re-prompts (expert-verified formulas)",
    "chip+planner/rules": "Safety Chip + constraint-aware planner (rules translator)",
    "chip+planner/gold": "Safety Chip + constraint-aware planner (expert-verified formulas)",
}


def report_markdown(rep: dict[str, Any], cases_dir: str = "") -> str:
    pct = lambda x: "-" if x is None else f"{100 * x:.0f}%"  # noqa: E731
    lines = [f"# Safety Chip evaluation{(' - ' + cases_dir) if cases_dir else ''}", "",
             f"{rep['cases']} cases ({rep['plan_cases']} plans, {rep['task_cases']} tasks), "
             f"translator: {rep['translator']}, {rep['seconds']} s.", "",
             "## Task runs (the paper's table layout)", "",
             "| | Success Rate | Safety Rate | unsafe steps dispatched | runs |", "|---|---|---|---|---|"]
    for key, row in rep["table"].items():
        lines.append(f"| {MODE_TEXT.get(key, key)} | {pct(row['success_rate'])} | {pct(row['safety_rate'])} | "
                     f"{row['unsafe_steps_dispatched']} | {row['runs']} |")
    tr = rep["translation"]
    lines += ["", "Safety rate: runs in which no constraint (gold formula) was violated. Success: every plan step "
              "done. Tasks whose constraints allow no plan count as failures for every mode.", "",
              "## Translation (English -> LTL, by automata equivalence)", "",
              "| sentences | accuracy |", "|---|---|",
              f"| all ({tr['sentences']}) | {pct(tr['accuracy'])} |",
              f"| written before the translator's last change, batches {tr['before_last_change']['batches']} "
              f"({tr['before_last_change']['sentences']}) | {pct(tr['before_last_change']['accuracy'])} |",
              f"| written after it, batches {tr['after_last_change']['batches']} "
              f"({tr['after_last_change']['sentences']}) | {pct(tr['after_last_change']['accuracy'])} |", "",
              f"Monitor accuracy (plan cases, gold formulas): {pct(rep['monitor_accuracy'])} of {rep['plan_cases']}.", ""]
    lines += ["## Task cases", "", "| case | safe plan exists | " + " | ".join(rep["table"]) + " |",
              "|---|---|" + "---|" * len(rep["table"])]
    for r in rep["results"]:
        if r["kind"] != "task":
            continue
        cells = []
        for key in rep["table"]:
            run = r["runs"].get(key)
            cells.append("-" if run is None else ("ok" if run["success"] else "fail") + (" safe" if run["safe"] else " UNSAFE")
                         + (f", {len(run['pruned'])} pruned" if run["pruned"] else ""))
        lines.append(f"| {r['id']} | {r['safe_plan_exists']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
