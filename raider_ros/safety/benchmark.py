"""The safety benchmark (format ``raider-safety/1``): loader and a pure-core runner.

A directory holds ``*.safety.yaml`` files (``docs/safety.md`` describes the format). The runner
checks each case's plan with the :class:`~raider_ros.safety.monitor.SafetyMonitor` on the
scene's symbolic state (predicted states, no simulator, no ROS) and compares the verdict with
``expected``; it scores a translator by automata equivalence of its formulas with the gold ones.
Cases with a ``task`` (a PDDL goal) instead of a plan are loaded and validated; running them
needs the planner of the executor phase, so :func:`run_benchmark` lists them as not run.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from raider_ros.common.paths import resolve_scene
from raider_ros.common.yamlfile import read_yaml
from raider_ros.sim.scene import Scene, SceneError, apply_setup, load_scene

from . import ltl
from .automata import Compiler, equivalent
from .ltl import LTLError
from .monitor import SafetyMonitor
from .predicates import ActionError, SymbolicState

FORMAT = "raider-safety/1"
_CASE_KEYS = {"id", "constraints", "ltl", "plan", "task", "expected", "setup", "note"}


class SafetyBenchmarkError(ValueError):
    """A benchmark file or case that does not follow the format; names file, case and field."""


@dataclass(frozen=True)
class SafetyCase:
    id: str
    scene: str
    constraints: tuple[str, ...]
    ltl: tuple[str, ...] | None
    plan: tuple[str, ...] | None
    task: Mapping[str, Any] | None
    expected: Mapping[str, Any]
    setup: Any = None
    batch: int | None = None
    source: str = ""


@dataclass
class SafetyBenchmark:
    directory: Path
    cases: list[SafetyCase]
    scenes: dict[str, Scene] = field(default_factory=dict)

    def world(self, case: SafetyCase) -> Scene:
        scene = self.scenes[case.scene]
        return apply_setup(scene, case.setup, f"{case.source}: case {case.id}: setup") if case.setup else scene


def _fail(src: str, case: str | None, fld: str, msg: str) -> SafetyBenchmarkError:
    where = f"{src}: case {case}: {fld}" if case else f"{src}: {fld}"
    return SafetyBenchmarkError(f"{where}: {msg}")


def _str_list(v: Any, src: str, cid: str, fld: str, *, allow_empty: bool = False) -> tuple[str, ...]:
    if not isinstance(v, list) or (not v and not allow_empty):
        raise _fail(src, cid, fld, f"expected a {'' if allow_empty else 'non-empty '}list of strings, got {v!r}")
    for i, x in enumerate(v):
        if not isinstance(x, str) or not x.strip():
            raise _fail(src, cid, f"{fld}[{i}]", f"expected a non-empty string, got {x!r}")
    return tuple(x.strip() for x in v)


def _load_scene(name: str, beside: Path, src: str) -> Scene:
    for cand in (beside / f"{name}.scene.yaml", beside / name):
        if cand.is_file():
            return load_scene(cand)
    try:
        return load_scene(resolve_scene(name))
    except SceneError as exc:
        raise _fail(src, None, "scene", f"no scene {name!r} beside this file or among the project scenes ({exc})") from None


def load_file(path: str | Path, scenes: dict[str, Scene] | None = None) -> tuple[list[SafetyCase], dict[str, Scene]]:
    p = Path(path)
    src = str(p)
    doc, _ = read_yaml(p, what="safety benchmark file", error=SafetyBenchmarkError)
    if not isinstance(doc, Mapping):
        raise _fail(src, None, "", "expected a mapping at the top level")
    if doc.get("format") != FORMAT:
        raise _fail(src, None, "format", f"expected {FORMAT!r}, got {doc.get('format')!r}")
    scene_name = doc.get("scene")
    if not isinstance(scene_name, str) or not scene_name.strip():
        raise _fail(src, None, "scene", f"expected a scene name or file, got {scene_name!r}")
    batch = doc.get("batch")
    if batch is not None and (isinstance(batch, bool) or not isinstance(batch, int)):
        raise _fail(src, None, "batch", f"expected a whole number, got {batch!r}")
    scenes = dict(scenes or {})
    if scene_name not in scenes:
        scenes[scene_name] = _load_scene(scene_name, p.parent, src)
    raw_cases = doc.get("cases")
    if not isinstance(raw_cases, list) or not raw_cases:
        raise _fail(src, None, "cases", "expected a non-empty list of cases")
    out = []
    for i, rc in enumerate(raw_cases):
        if not isinstance(rc, Mapping):
            raise _fail(src, f"#{i}", "", "expected a mapping")
        cid = rc.get("id")
        if not isinstance(cid, str) or not cid.strip():
            raise _fail(src, f"#{i}", "id", f"expected a non-empty string, got {cid!r}")
        unknown = sorted(set(rc) - _CASE_KEYS)
        if unknown:
            raise _fail(src, cid, unknown[0], f"unknown key; expected one of {', '.join(sorted(_CASE_KEYS))}")
        cons = _str_list(rc.get("constraints"), src, cid, "constraints")
        gold = None
        if rc.get("ltl") is not None:
            gold = _str_list(rc.get("ltl"), src, cid, "ltl")
            if len(gold) != len(cons):
                raise _fail(src, cid, "ltl", f"expected one formula per constraint ({len(cons)}), got {len(gold)}")
            for k, g in enumerate(gold):
                try:
                    ltl.parse(g)
                except LTLError as exc:
                    raise _fail(src, cid, f"ltl[{k}]", str(exc).splitlines()[0]) from None
        plan = task = None
        if ("plan" in rc) == ("task" in rc):
            raise _fail(src, cid, "plan", "expected either a plan or a task")
        exp = rc.get("expected")
        if not isinstance(exp, Mapping):
            raise _fail(src, cid, "expected", f"expected a mapping, got {exp!r}")
        if "plan" in rc:
            plan = _str_list(rc.get("plan"), src, cid, "plan")
            if "first_unsafe_step" not in exp:
                raise _fail(src, cid, "expected.first_unsafe_step", "missing (null when the plan is safe)")
            fus = exp["first_unsafe_step"]
            if fus is not None and (isinstance(fus, bool) or not isinstance(fus, int) or not 0 <= fus < len(plan)):
                raise _fail(src, cid, "expected.first_unsafe_step", f"expected null or a step index 0..{len(plan) - 1}, got {fus!r}")
            for key in ("violated", "pending_at_end"):
                v = exp.get(key, [])
                if not isinstance(v, list) or any(isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < len(cons) for x in v):
                    raise _fail(src, cid, f"expected.{key}", f"expected a list of constraint indices 0..{len(cons) - 1}, got {v!r}")
            if (fus is None) != (not exp.get("violated", [])):
                raise _fail(src, cid, "expected.violated", "must be empty exactly when first_unsafe_step is null")
        else:
            task = rc.get("task")
            if not isinstance(task, Mapping) or not isinstance(task.get("goal"), str):
                raise _fail(src, cid, "task", f"expected a mapping with a PDDL 'goal', got {task!r}")
            if not isinstance(exp.get("safe_plan_exists"), bool):
                raise _fail(src, cid, "expected.safe_plan_exists", "expected true or false for a task")
        case = SafetyCase(cid.strip(), scene_name, cons, gold, plan, dict(task) if task else None, dict(exp),
                          rc.get("setup"), batch, src)
        if case.setup is not None:
            try:
                apply_setup(scenes[scene_name], case.setup, f"{src}: case {cid}: setup")
            except SceneError as exc:
                raise SafetyBenchmarkError(str(exc)) from None
        out.append(case)
    return out, scenes


def load_benchmark(directory: str | Path) -> SafetyBenchmark:
    d = Path(directory)
    files = sorted(d.glob("*.safety.yaml"))
    if not files:
        raise SafetyBenchmarkError(f"{d}: no *.safety.yaml files")
    cases: list[SafetyCase] = []
    scenes: dict[str, Scene] = {}
    seen: dict[str, str] = {}
    for f in files:
        new, scenes = load_file(f, scenes)
        for c in new:
            if c.id in seen:
                raise _fail(str(f), c.id, "id", f"also used in {seen[c.id]}")
            seen[c.id] = str(f)
        cases.extend(new)
    return SafetyBenchmark(d, cases, scenes)


# --------------------------------------------------------------------------- running
@dataclass(frozen=True)
class CaseResult:
    id: str
    ok: bool
    expected: Mapping[str, Any]
    first_unsafe_step: int | None = None
    violated: tuple[int, ...] = ()
    pending_at_end: tuple[int, ...] = ()
    explanation: str = ""
    error: str | None = None
    time_ms: float = 0.0


def run_case(bench: SafetyBenchmark, case: SafetyCase, *, compiler: Compiler | None = None,
             translator: Any = None) -> CaseResult:
    """Check the case's plan with the gold formulas (or, without them or with a translator
    given, the translator's formulas) on the predicted states of the case's world."""
    t0 = time.perf_counter()
    if case.plan is None:
        return CaseResult(case.id, False, case.expected, error="task case: needs the planner (executor phase)")
    try:
        state = SymbolicState.from_scene(bench.world(case))
        mon = SafetyMonitor(state, compiler=compiler, translator=translator)
        if translator is None and case.ltl is not None:
            added = mon.add_many([{"ltl": f, "text": s} for f, s in zip(case.ltl, case.constraints)])
        else:
            added = mon.add_many([{"text": s} for s in case.constraints])
        index = {c.id: k for k, c in enumerate(added)}
        check = mon.check_plan(case.plan)
        if check.error:
            raise ActionError(check.error)
    except (LTLError, ActionError, SceneError) as exc:
        return CaseResult(case.id, False, case.expected, error=str(exc).splitlines()[0],
                          time_ms=(time.perf_counter() - t0) * 1000)
    fus = check.first_unsafe_step
    violated = tuple(sorted(index[i] for i in check.violated))
    pending = tuple(sorted(index[i] for i in check.pending_at_end))
    exp = case.expected
    ok = fus == exp.get("first_unsafe_step") and violated == tuple(sorted(exp.get("violated", [])))
    if "pending_at_end" in exp and fus is None:
        ok = ok and pending == tuple(sorted(exp["pending_at_end"]))
    expl = check.steps[fus].explanation() if fus is not None else ""
    return CaseResult(case.id, ok, exp, fus, violated, pending, expl, None, (time.perf_counter() - t0) * 1000)


@dataclass(frozen=True)
class TranslationResult:
    sentence: str
    gold: str
    produced: str | None
    equivalent: bool
    batch: int | None
    scene: str
    error: str | None = None
    counterexample: str | None = None


def score_translations(bench: SafetyBenchmark, translator: Any, *, compiler: Compiler | None = None) -> list[TranslationResult]:
    """Every distinct (sentence, gold formula, scene) of the benchmark translated and compared
    with the gold formula by automata equivalence (never by text). A sentence in several batches
    counts in the earliest one (when it was first written), so a later batch that reuses it does
    not count it as held out."""
    seen: set[tuple[str, str, str]] = set()
    out: list[TranslationResult] = []
    states: dict[str, SymbolicState] = {}
    by_batch = sorted(bench.cases, key=lambda c: (c.batch is None, c.batch or 0))   # stable
    for case in by_batch:
        if case.ltl is None:
            continue
        if case.scene not in states:
            states[case.scene] = SymbolicState.from_scene(bench.scenes[case.scene])
        for sentence, gold in zip(case.constraints, case.ltl):
            key = (sentence, gold, case.scene)
            if key in seen:
                continue
            seen.add(key)
            try:
                st = states[case.scene]
                tr = translator.translate(sentence, st)
                produced = ltl.to_text(tr.formula)
                from .translate import canonical
                eq = equivalent(canonical(tr.formula, st), canonical(ltl.parse(gold), st), compiler)
                cex = None if eq else " ; ".join(
                    "{" + ", ".join(sorted(map(str, p))) + "}" for p in (eq.counterexample or ()))
                out.append(TranslationResult(sentence, gold, produced, bool(eq), case.batch, case.scene, None, cex))
            except LTLError as exc:
                out.append(TranslationResult(sentence, gold, None, False, case.batch, case.scene,
                                             str(exc).splitlines()[0]))
    return out


def run_benchmark(bench: SafetyBenchmark, *, compiler: Compiler | None = None) -> dict[str, Any]:
    """Monitor verdict accuracy with the gold formulas over the plan cases."""
    results = [run_case(bench, c, compiler=compiler) for c in bench.cases if c.plan is not None]
    not_run = [c.id for c in bench.cases if c.plan is None]
    n_ok = sum(r.ok for r in results)
    return {"cases": len(results), "correct": n_ok,
            "accuracy": n_ok / len(results) if results else None,
            "failures": [r for r in results if not r.ok], "results": results, "not_run": not_run}


def summarise_translations(results: Sequence[TranslationResult]) -> dict[str, Any]:
    def acc(rs):
        return round(sum(r.equivalent for r in rs) / len(rs), 3) if rs else None
    batches = sorted({r.batch for r in results if r.batch is not None})
    out: dict[str, Any] = {"sentences": len(results), "accuracy": acc(results)}
    for b in batches:
        rs = [r for r in results if r.batch == b]
        out[f"batch{b}_sentences"] = len(rs)
        out[f"batch{b}_accuracy"] = acc(rs)
    out["untranslated"] = sum(r.produced is None for r in results)
    return out
