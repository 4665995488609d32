"""The learning benchmark: teach -> similar -> dissimilar triples (``data/memory/benchmark``,
format ``raider-memory-benchmark/1``, see docs/memory.md), run on the simulator core with the
offline backends (rules task planner, rules recovery writer, rules improver; the sentence
embeddings of the packaged MiniLM model).

For each triple, in a fresh memory (seed examples only): the teach, similar and dissimilar
requests are run; the person's correction of the teach run is classified and learned from;
then the three requests are run again, nobody correcting anything. Reported per set and for
all triples:

* ``learning_teach_success_before`` / ``learning_similar_success_before``: the goal (which
  includes what the person asked for in the correction) reached before the lesson;
* ``learning_feedback_recognised``: the correction recognised as one (rules cues);
* ``learning_lessons_stored``: a lesson was stored;
* ``learning_teach_success_after``: the taught request again;
* ``learning_similar_success``: the similar request after the lesson reaches its goal;
* ``learning_dissimilar_unchanged``: the dissimilar request does exactly what it did before
  the lesson (same actions, questions and results).

Run: ``python -m raider_ros.memory.benchmark [--set dev|heldout|all] [--json out.json] [-v]``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from raider_ros.common.paths import data_dir, resolve_scene
from raider_ros.common.yamlfile import read_yaml_mapping
from raider_ros.human.people import ScriptedHuman
from raider_ros.memory.adapt import SceneIndex
from raider_ros.memory.advisor import MemoryAdvisor
from raider_ros.memory.config import LearningConfig
from raider_ros.memory.feedback import classify_feedback
from raider_ros.memory.interaction import Interaction
from raider_ros.memory.learning import LearnOutcome, RulesImprover, learn_from_interaction
from raider_ros.memory.runner import PlanRunner
from raider_ros.memory.store import EpisodicMemory
from raider_ros.memory.tasks import TaskPlanError, TaskPlanner, TaskRequest
from raider_ros.recovery.plan import PlanError, parse_plan
from raider_ros.recovery.planner import RecoveryPlanner
from raider_ros.sim.scene import SceneError, load_scene
from raider_ros.sim.world import SimWorld

BENCH_FORMAT = "raider-memory-benchmark/1"
GOAL_KEYS = ("handed_over", "holding", "state", "max_questions")
REQUEST_KEYS = ("say", "task", "roles", "goal", "setup", "reference", "correction")


class BenchmarkError(ValueError):
    """A triple file that does not follow the format; names the file, the triple and the field."""


@dataclass(frozen=True)
class BenchRequest:
    say: str
    task: str
    roles: Mapping[str, str]
    goal: Mapping[str, Any]
    setup: Mapping[str, Any] | None = None
    reference: str | None = None
    correction: str | None = None

    def task_request(self) -> TaskRequest:
        return TaskRequest(self.say, self.task, dict(self.roles))


@dataclass(frozen=True)
class Triple:
    id: str
    scene: str
    teach: BenchRequest
    similar: BenchRequest
    dissimilar: BenchRequest
    setup: Mapping[str, Any] | None = None
    person: Mapping[str, Any] | None = None
    note: str = ""
    source: str = ""


def benchmark_dir() -> Path:
    return data_dir() / "memory" / "benchmark"


def load_triples(path: str | Path) -> tuple[str, list[Triple]]:
    doc, p = read_yaml_mapping(path, what="learning benchmark file", error=BenchmarkError)
    if doc.get("format") != BENCH_FORMAT:
        raise BenchmarkError(f"{p}: format: expected {BENCH_FORMAT!r}, got {doc.get('format')!r}")
    name = doc.get("set")
    if not isinstance(name, str) or not name.strip():
        raise BenchmarkError(f"{p}: set: expected the set's name (dev, heldout)")
    raw = doc.get("triples")
    if not isinstance(raw, list) or not raw:
        raise BenchmarkError(f"{p}: triples: expected a non-empty list")
    out, ids = [], set()
    for i, t in enumerate(raw):
        where = f"{p}: triples[{i}]"
        if not isinstance(t, Mapping):
            raise BenchmarkError(f"{where}: expected a mapping")
        tid = t.get("id")
        if not isinstance(tid, str) or not tid.strip() or tid in ids:
            raise BenchmarkError(f"{where}.id: expected a unique name, got {tid!r}")
        ids.add(tid)
        where = f"{p}: triple {tid}"
        unknown = set(t) - {"id", "note", "scene", "setup", "person", "teach", "similar", "dissimilar"}
        if unknown:
            raise BenchmarkError(f"{where}: unknown field {sorted(unknown)[0]!r}")
        if not isinstance(t.get("scene"), str):
            raise BenchmarkError(f"{where}.scene: expected a scene name")
        person = t.get("person")
        if person is not None and not (isinstance(person, Mapping) and (person.get("scenario") or person.get("entries"))):
            raise BenchmarkError(f"{where}.person: expected {{scenario: name}} or {{entries: [...]}}")
        reqs = {k: _request(t.get(k), f"{where}.{k}", need_correction=(k == "teach")) for k in
                ("teach", "similar", "dissimilar")}
        out.append(Triple(tid, t["scene"], reqs["teach"], reqs["similar"], reqs["dissimilar"], t.get("setup"),
                          person, str(t.get("note") or ""), str(p)))
    return name.strip(), out


def _request(r: Any, where: str, *, need_correction: bool) -> BenchRequest:
    if not isinstance(r, Mapping):
        raise BenchmarkError(f"{where}: expected a mapping with say, task, roles and goal")
    unknown = set(r) - set(REQUEST_KEYS)
    if unknown:
        raise BenchmarkError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    for key in ("say", "task"):
        if not isinstance(r.get(key), str) or not r[key].strip():
            raise BenchmarkError(f"{where}.{key}: expected text")
    roles = r.get("roles")
    if not isinstance(roles, Mapping) or not roles or not all(isinstance(v, str) for v in roles.values()):
        raise BenchmarkError(f"{where}.roles: expected a mapping of role -> id")
    goal = r.get("goal")
    if not isinstance(goal, Mapping) or not goal:
        raise BenchmarkError(f"{where}.goal: expected a mapping with {', '.join(GOAL_KEYS)}")
    bad = set(goal) - set(GOAL_KEYS)
    if bad:
        raise BenchmarkError(f"{where}.goal.{sorted(bad)[0]}: unknown; expected {', '.join(GOAL_KEYS)}")
    if need_correction and (not isinstance(r.get("correction"), str) or not r["correction"].strip()):
        raise BenchmarkError(f"{where}.correction: the teach request needs the person's correction")
    ref = r.get("reference")
    if ref is not None:
        try:
            parse_plan(ref)
        except PlanError as exc:
            raise BenchmarkError(f"{where}.reference: {exc}") from None
    return BenchRequest(r["say"].strip(), r["task"].strip(), dict(roles), dict(goal), r.get("setup"), ref,
                        r.get("correction"))


def scene_file(name: str) -> Path:
    p = resolve_scene(name)
    if p.is_file():
        return p
    for d in sorted((data_dir() / "benchmark").iterdir()) if (data_dir() / "benchmark").is_dir() else []:
        cand = d / f"{name}.scene.yaml"
        if cand.is_file():
            return cand
    return p


# --------------------------------------------------------------------------- running
@dataclass
class RunResult:
    interaction: Interaction
    success: bool
    failures: list[str]
    plan_source: str


@dataclass
class TripleResult:
    id: str
    teach_before: RunResult
    similar_before: RunResult
    dissimilar_before: RunResult
    recognised: bool
    outcome: LearnOutcome | None
    teach_after: RunResult
    similar_after: RunResult
    dissimilar_after: RunResult

    @property
    def unchanged(self) -> bool:
        return self.dissimilar_before.interaction.trace() == self.dissimilar_after.interaction.trace()


class Bench:
    """Runs triples with the offline backends. ``encoder``: for the memories (default: the
    shared MiniLM encoder)."""

    def __init__(self, *, encoder: Any = None, config: LearningConfig | None = None):
        self.cfg = config or LearningConfig.load()
        self.encoder = encoder

    def new_memory(self) -> EpisodicMemory:
        return EpisodicMemory(":memory:", encoder=self.encoder, gamma=self.cfg.gamma)

    def world(self, triple: Triple, req: BenchRequest) -> SimWorld:
        try:
            world = SimWorld(load_scene(scene_file(triple.scene)))
            if triple.setup:
                world.apply_setup(triple.setup, reset=False, source=f"triple {triple.id} setup")
            if req.setup:
                world.apply_setup(req.setup, reset=False, source=f"triple {triple.id} request setup")
        except SceneError as exc:
            raise BenchmarkError(f"{triple.source}: triple {triple.id}: {exc}") from None
        return world

    def person(self, triple: Triple, world: SimWorld) -> ScriptedHuman:
        p = triple.person or {}
        scenario = p.get("scenario") or {"entries": p.get("entries")} if p else \
            {"entries": [{"match": {"regex": "(?!)"}, "answer": "-"}]}
        return ScriptedHuman(scenario, apply_world_change=lambda s: world.apply_setup(s, reset=False))

    def run(self, triple: Triple, req: BenchRequest, memory: EpisodicMemory) -> tuple[RunResult, SceneIndex]:
        world = self.world(triple, req)
        scene = SceneIndex.from_scene(world.scene)
        human = self.person(triple, world)
        advisor = MemoryAdvisor(memory, config=self.cfg, scene=scene)
        runner = PlanRunner(world, ask=human.ask, say=human.say, resolve_name=human.resolve_name,
                            recovery=RecoveryPlanner("rules", memory=advisor))
        request = req.task_request()
        try:
            tp = TaskPlanner(memory, self.cfg).plan(request, scene)
        except TaskPlanError as exc:
            it = Interaction(req.say, req.task, dict(req.roles), triple.scene, reason=str(exc))
            return RunResult(it, False, [str(exc)], "none"), scene
        it = runner.run(request, tp.plan, plan_source=tp.source)
        failures = goal_failures(req.goal, it, world)
        return RunResult(it, it.success and not failures, failures, tp.source), scene

    def triple(self, triple: Triple) -> TripleResult:
        memory = self.new_memory()
        try:
            teach_before, teach_scene = self.run(triple, triple.teach, memory)
            similar_before, _ = self.run(triple, triple.similar, memory)
            dis_before, _ = self.run(triple, triple.dissimilar, memory)
            fb = classify_feedback(triple.teach.correction or "", self.cfg)
            outcome = None
            if fb.triggers_learning:
                outcome = learn_from_interaction(memory, teach_before.interaction, triple.teach.correction or "",
                                                 teach_scene, improver=RulesImprover(self.cfg, similar=self._similar))
            teach_after, _ = self.run(triple, triple.teach, memory)
            similar_after, _ = self.run(triple, triple.similar, memory)
            dis_after, _ = self.run(triple, triple.dissimilar, memory)
        finally:
            memory.close()
        return TripleResult(triple.id, teach_before, similar_before, dis_before, fb.triggers_learning, outcome,
                            teach_after, similar_after, dis_after)

    def _similar(self, phrase: str, candidates: Sequence[str]):
        mem = self.encoder
        if mem is None:
            from raider_ros.memory.embedding import shared_encoder
            mem = shared_encoder()
        e = mem.encode([phrase, *candidates])
        return e[1:] @ e[0]


def goal_failures(goal: Mapping[str, Any], it: Interaction, world: SimWorld) -> list[str]:
    out = []
    scene = world.scene
    handed = set(it.handed_over())
    for pair in goal.get("handed_over") or []:
        if tuple(pair) not in handed:
            out.append(f"{pair[0]} was not handed to {pair[1]}")
    if "holding" in goal and scene.robot.holding != goal["holding"]:
        out.append(f"the robot holds {scene.robot.holding}, not {goal['holding']}")
    for oid, states in (goal.get("state") or {}).items():
        obj = scene.get(oid)
        for k, v in states.items():
            have = None if obj is None else obj.state.get(k)
            if have != v:
                out.append(f"{oid}.{k} is {have}, not {v}")
    if "max_questions" in goal and it.questions > int(goal["max_questions"]):
        out.append(f"the robot asked {it.questions} question(s)")
    return out


def figures(results: Sequence[TripleResult], suffix: str = "") -> dict[str, float]:
    n = len(results) or 1

    def frac(xs) -> float:
        return round(sum(1 for x in xs if x) / n, 3)

    return {
        f"learning_teach_success_before{suffix}": frac(r.teach_before.success for r in results),
        f"learning_similar_success_before{suffix}": frac(r.similar_before.success for r in results),
        f"learning_feedback_recognised{suffix}": frac(r.recognised for r in results),
        f"learning_lessons_stored{suffix}": frac(bool(r.outcome and r.outcome.learned) for r in results),
        f"learning_teach_success_after{suffix}": frac(r.teach_after.success for r in results),
        f"learning_similar_success{suffix}": frac(r.similar_after.success for r in results),
        f"learning_dissimilar_unchanged{suffix}": frac(r.unchanged for r in results),
    }


def describe(r: TripleResult) -> str:
    def mark(x: RunResult) -> str:
        return "ok" if x.success else "--"
    stored = ", ".join(f"{e.scope} lesson" for e in r.outcome.stored) if r.outcome and r.outcome.stored else \
        (f"not stored: {r.outcome.reason}" if r.outcome else "correction not recognised")
    return (f"{r.id:16s} before: teach {mark(r.teach_before)} similar {mark(r.similar_before)} | {stored} | "
            f"after: teach {mark(r.teach_after)} similar {mark(r.similar_after)} "
            f"({r.similar_after.plan_source}) dissimilar {'same' if r.unchanged else 'CHANGED'}")


def run_sets(names: Sequence[str], *, encoder: Any = None, verbose: bool = False,
             out=sys.stdout) -> tuple[dict[str, float], dict[str, list[TripleResult]]]:
    bench = Bench(encoder=encoder)
    all_results: dict[str, list[TripleResult]] = {}
    figs: dict[str, float] = {}
    for name in names:
        set_name, triples = load_triples(benchmark_dir() / f"{name}.triples.yaml")
        results = []
        for t in triples:
            r = bench.triple(t)
            results.append(r)
            print(f"[{set_name}] {describe(r)}", file=out)
            if verbose:
                for label, x in (("similar after", r.similar_after), ("dissimilar after", r.dissimilar_after)):
                    if not x.success:
                        print(f"    {label}: {x.interaction.reason}; {'; '.join(x.failures)}", file=out)
                if r.outcome is not None:
                    print(f"    problem: {r.outcome.problem}\n    improvement: {r.outcome.improvement}", file=out)
                    for e in r.outcome.stored:
                        print("    plan: " + e.plan.replace("\n", "; "), file=out)
        all_results[set_name] = results
        figs.update(figures(results, f"_{set_name}"))
    every = [r for rs in all_results.values() for r in rs]
    figs = {**figures(every), **figs, "learning_triples": len(every)}
    return figs, all_results


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Learning-from-interaction benchmark (offline backends).")
    ap.add_argument("--set", default="all", help="dev, heldout or all (default)")
    ap.add_argument("--json", help="write the figures to this JSON file")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    names = ["dev", "heldout"] if args.set == "all" else [args.set]
    t0 = time.monotonic()
    try:
        figs, _ = run_sets(names, verbose=args.verbose)
    except BenchmarkError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for k, v in figs.items():
        print(f"{k:44s} {v}")
    print(f"({time.monotonic() - t0:.1f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(figs, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
