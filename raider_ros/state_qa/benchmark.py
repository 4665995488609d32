"""The state-QA benchmark (ROS-free runner): run a scenario in-process up to a checkpoint,
build every module's state summary from the core objects, then ask the questions and score
the answers. Format and figures: docs/state_qa.md.

A file (``data/state_qa/benchmark/*.yaml``)::

    format: raider-stateqa-bench/1
    name: assistive_after_pick
    scenario:
      run: executor               # executor: the PDDL task with RAIDER checks | actions: skills only
      scene: assistive_room
      person: assistive_demo      # executor: the scripted person (data/scenarios)
      domain: assistive           # executor: PDDL domain (data/pddl) and action mapping
      toolset: assistive          # executor: the issue detector's toolset
      steps: 2                    # checkpoint: run the first N plan steps (default: all)
      # run: actions
      # actions: [[move_to, Table_1], [pick, Apple_1]]
      # checkpoint: 2             # run the first N actions (default: all)
    safety: {constraints: [...], violations: [...]}   # optional: what the safety monitor reports
    questions:
      - {q: "What are you holding?", modules: [robot], mentions: [Medicine_1]}
      - {q: "Can you see a microwave?", modules: [world_model], answer: unknown}

``mentions``: each entry is a string or a list of alternatives; ``answer: unknown`` means the
truthful answer is "I don't know". In executor mode the issue detector is the rules RAIDER
agent on the simulated perception (SimWorld -> PerceptionPipeline -> SceneGraph -> ToolBox),
recoveries come from the rules recovery planner; in actions mode only the world model, people
and robot (and safety, when given) report anything.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from raider_ros.common.yamlfile import read_yaml_mapping

from .answer import QAAnswer, StateQA
from .evaluation import Truthfulness, truthful
from .modules import StateQAError, load_catalog, state_qa_dir
from .summarizers import (summarize_dialogue, summarize_executor, summarize_generic, summarize_issue_check,
                          summarize_people, summarize_recovery, summarize_sim_robot, summarize_world_model)
from .summary import StateSummary, SummaryHistory
from .trackers import DialogueLog, ExecutionTracker, SkillLog

BENCH_FORMAT = "raider-stateqa-bench/1"


@dataclass(frozen=True)
class BenchQuestion:
    text: str
    modules: tuple[str, ...]
    expected: str | tuple            # "unknown" or mentions


@dataclass(frozen=True)
class BenchScenario:
    name: str
    scenario: dict
    questions: tuple[BenchQuestion, ...]
    safety: dict | None = None
    source: str = "<bench>"


def benchmark_dir() -> Path:
    return state_qa_dir() / "benchmark"


def load_bench_file(path: str | Path) -> BenchScenario:
    doc, p = read_yaml_mapping(path, what="state-QA benchmark file", error=StateQAError)
    if doc.get("format") != BENCH_FORMAT:
        raise StateQAError(f"{p}: format: expected {BENCH_FORMAT!r}, got {doc.get('format')!r}")
    sc = doc.get("scenario")
    if not isinstance(sc, dict) or sc.get("run") not in ("executor", "actions") or not isinstance(sc.get("scene"), str):
        raise StateQAError(f"{p}: scenario: expected run (executor | actions) and scene")
    if sc["run"] == "executor":
        for k in ("person", "domain", "toolset"):
            if not isinstance(sc.get(k), str):
                raise StateQAError(f"{p}: scenario.{k}: expected a name (executor scenarios need person, domain, toolset)")
    else:
        acts = sc.get("actions")
        if not isinstance(acts, list) or not acts or not all(isinstance(a, list) and a and all(isinstance(x, str) for x in a)
                                                            for a in acts):
            raise StateQAError(f"{p}: scenario.actions: expected a list of [skill, arg, ...]")
    classes = set(load_catalog().classes)
    qs = []
    for i, e in enumerate(doc.get("questions") or []):
        where = f"{p}: questions[{i}]"
        if not isinstance(e, dict) or not isinstance(e.get("q"), str):
            raise StateQAError(f"{where}: expected q, modules and mentions or answer: unknown")
        mods = e.get("modules") or []
        if not isinstance(mods, list) or any(m not in classes for m in mods):
            raise StateQAError(f"{where} ({e['q']!r}): modules: expected class names from modules.yaml")
        if e.get("answer") == "unknown":
            expected: Any = "unknown"
        else:
            m = e.get("mentions")
            if not isinstance(m, list) or not m:
                raise StateQAError(f"{where} ({e['q']!r}): expected mentions (a list) or answer: unknown")
            expected = tuple(x if isinstance(x, str) else tuple(x) for x in m)
        qs.append(BenchQuestion(e["q"], tuple(mods), expected))
    if not qs:
        raise StateQAError(f"{p}: questions: expected a non-empty list")
    safety = doc.get("safety")
    if safety is not None and not isinstance(safety, dict):
        raise StateQAError(f"{p}: safety: expected a mapping")
    return BenchScenario(str(doc.get("name") or p.stem), sc, tuple(qs), safety, str(p))


def load_benchmark(directory: str | Path | None = None) -> list[BenchScenario]:
    d = Path(directory) if directory is not None else benchmark_dir()
    files = sorted(d.glob("*.yaml"))
    if not files:
        raise StateQAError(f"{d}: no benchmark files (*.yaml)")
    return [load_bench_file(f) for f in files]


# --------------------------------------------------------------------------- running
@dataclass
class ScenarioRun:
    history: SummaryHistory
    outcome: str = ""
    log: list[str] = field(default_factory=list)


class _Perception:
    """Perception in-process. The scene graph's clock is logical - one second per perceived
    frame - so what it remembers and forgets (and "last seen ... ago") does not depend on how
    fast the machine runs the scenario (on a loaded machine a person out of view for a few
    slow checks was forgotten after 30 wall-clock seconds)."""

    FRAME_S = 1.0

    def __init__(self, world: Any):
        from raider_ros.perception.pipeline import PerceptionPipeline
        from raider_ros.perception.provider import TruthProvider
        from raider_ros.perception.scene_graph import SceneGraph
        self.world = world
        self.pipeline = PerceptionPipeline("sim")
        self.provider = TruthProvider()
        self.frames = 0
        self.graph = SceneGraph(clock=lambda: self.frames * self.FRAME_S)

    def update(self) -> None:
        self._update()
        if self.on_update is not None:
            self.on_update()

    on_update = None      # called after each perceived frame (the runner records the summaries)

    def _update(self) -> None:
        frame = self.world.frame()
        self.provider.update(self.world.truth())
        r = self.world.scene.robot
        res = self.pipeline.process(frame.rgb, frame.depth, frame.instance, frame.labels, frame.camera,
                                    robot_xy=(r.x, r.y))
        self.frames += 1
        self.graph.update(res, self.provider)


def run_scenario(bench: BenchScenario) -> ScenarioRun:
    """Run the scenario to its checkpoint and return every module's summary in a history."""
    from raider_ros.sim.world import SimWorld
    sc = bench.scenario
    world = SimWorld()
    world.load_path(sc["scene"])
    perception = _Perception(world)
    skills = SkillLog()
    history = SummaryHistory()
    run = ScenarioRun(history)

    def record() -> None:
        # what the scene_graph and sim_world nodes publish whenever their state changes: the
        # history then holds the world model, people and robot as they were at each frame
        snap = perception.graph.snapshot()
        history.extend([summarize_world_model(snap), summarize_people(snap), summarize_sim_robot(world, skills)])

    perception.on_update = record
    perception.update()
    if sc["run"] == "actions":
        acts = sc["actions"][: int(sc.get("checkpoint") or len(sc["actions"]))]
        for a in acts:
            r = world.execute(a[0], a[1:])
            skills.record(a[0], a[1:], r.success, r.message)
            run.log.append(f"{a[0]}({', '.join(a[1:])}) -> {r.message}")
            perception.update()
        run.outcome = f"{len(acts)} action(s) run"
    else:
        _run_executor(bench, world, perception, skills, history, run)
        perception.update()
    if bench.safety is not None:
        history.add(summarize_generic("safety_monitor", bench.safety))
    return run


def _run_executor(bench: BenchScenario, world: Any, perception: _Perception, skills: SkillLog,
                  history: SummaryHistory, run: ScenarioRun) -> None:
    from raider_ros.agent.factory import DetectorSettings, build_detector
    from raider_ros.executor.machine import DetectionOutcome, Executor, ExecutorConfig, Ports
    from raider_ros.executor.mapping import ActionMapping
    from raider_ros.executor.pddl_plan import load_named, plan
    from raider_ros.human.people import ScriptedHuman
    from raider_ros.perception.toolbox import ToolBox
    from raider_ros.recovery.planner import RecoveryPlanner

    sc = bench.scenario
    tools = ToolBox(perception.graph, perception.provider)
    # a generous time limit: on a loaded machine the default 20 s can cut a rules check short
    detector = build_detector(DetectorSettings(toolset=sc["toolset"], time_limit_s=120.0), tools,
                              scene_graph=perception.graph.to_json)
    human = ScriptedHuman(sc["person"], apply_world_change=lambda s: world.apply_setup(s, reset=False))
    planner = RecoveryPlanner()
    dialogue = DialogueLog()
    # as the plan_executor and human_interface nodes: a summary at every change of the task
    # or of the dialogue (the history answers "what happened" questions)
    tracker = ExecutionTracker(on_change=lambda: history.add(summarize_executor(tracker)))
    last: dict[str, Any] = {}

    def detect(query: str, context: str) -> DetectionOutcome:
        perception.update()
        res = detector.run(query, context)
        history.add(summarize_issue_check(query, res, context=context))
        return DetectionOutcome(res.issue or "none", res.explanation, list(res.grounding), res.status,
                                res.error or "")

    def plan_recovery(query: str, issue: str, explanation: str, holding: str | None):
        try:
            p = planner.plan(query, issue, explanation, holding)
        except Exception as exc:
            history.add(summarize_recovery(None, query=query, issue=issue, explanation=explanation, holding=holding,
                                           error=str(exc), backend=planner.name))
            raise
        history.add(summarize_recovery(p, query=query, issue=issue, explanation=explanation, holding=holding,
                                       backend=planner.name))
        return p

    def skill(name: str, args: list[str], cancel: Any) -> tuple[bool, str]:
        r = world.execute(name, args, cancel=cancel.is_set)
        return r.success, r.message

    task = load_named(sc["domain"])
    steps = ActionMapping.load("", sc["domain"]).bind(plan(task).actions, task)
    steps = steps[: int(sc.get("steps") or len(steps))]
    def ask(question: str, timeout_s: float):
        answer = dialogue.wrap_ask(human.ask)(question, timeout_s)
        history.add(summarize_dialogue(dialogue))
        return answer

    def say(text: str) -> None:
        dialogue.wrap_say(human.say)(text)
        history.add(summarize_dialogue(dialogue))

    ports = Ports(detect=detect, plan_recovery=plan_recovery, skill=skills.wrap(skill), ask=ask, say=say,
                  resolve_name=human.resolve_name, holding=lambda: world.scene.robot.holding)
    ports = tracker.attach(ports)
    tracker.start(sc["domain"], steps)
    outcome = Executor(ports, ExecutorConfig(aliases={"free_table": "FreeTable_1"})).run(steps)
    tracker.finish(outcome)
    last["outcome"] = outcome
    history.extend([summarize_executor(tracker), summarize_dialogue(dialogue)])
    run.outcome = f"{outcome.status}: {outcome.reason}"
    run.log.extend(outcome.log_lines())


# --------------------------------------------------------------------------- scoring
@dataclass(frozen=True)
class QuestionResult:
    scenario: str
    question: BenchQuestion
    answer: QAAnswer
    truth: Truthfulness
    module_recall: float


@dataclass
class BenchReport:
    results: list[QuestionResult]
    runs: dict[str, ScenarioRun]
    index_ms: list[float] = field(default_factory=list)

    def _rate(self, rows: Sequence[QuestionResult]) -> float:
        return sum(r.truth.truthful for r in rows) / len(rows) if rows else float("nan")

    @property
    def factual(self) -> list[QuestionResult]:
        return [r for r in self.results if r.question.expected != "unknown"]

    @property
    def unknown(self) -> list[QuestionResult]:
        return [r for r in self.results if r.question.expected == "unknown"]

    def figures(self) -> dict:
        answered = [r for r in self.results if r.answer.prompt_tokens_all]
        sel = [r.answer.prompt_tokens_selected for r in answered]
        alls = [r.answer.prompt_tokens_all for r in answered]
        lat = sorted(r.answer.elapsed_s * 1000 for r in self.results)
        return {
            "truthful_rate_factual": round(self._rate(self.factual), 4),
            "truthful_rate_unknown": round(self._rate(self.unknown), 4),
            "truthful_rate_all": round(self._rate(self.results), 4),
            "questions_factual": len(self.factual), "questions_unknown": len(self.unknown),
            "scenarios": len(self.runs),
            "module_recall": round(statistics.mean(r.module_recall for r in self.results), 4),
            "prompt_tokens_selected_mean": round(statistics.mean(sel), 1) if sel else 0,
            "prompt_tokens_all_mean": round(statistics.mean(alls), 1) if alls else 0,
            "prompt_tokens_ratio": round(sum(sel) / sum(alls), 4) if alls else 0,
            "answer_ms_p50": round(lat[len(lat) // 2], 2) if lat else 0,
            "answer_ms_p95": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 2) if lat else 0,
            "index_ms_max": round(max(self.index_ms), 1) if self.index_ms else 0,
        }


def run_benchmark(benches: Sequence[BenchScenario], qa: StateQA | None = None, *,
                  index: bool = True) -> BenchReport:
    """Run each scenario, then ask its questions. ``index``: embed the summaries' facts before
    the questions (as the node does when summaries arrive); its time is in ``index_ms``."""
    qa = qa or StateQA()
    results, runs, index_ms = [], {}, []
    for b in benches:
        run = run_scenario(b)
        runs[b.name] = run
        known = list(run.history.latest_all().values())
        if index:
            t0 = time.perf_counter()
            qa.index(run.history)
            index_ms.append((time.perf_counter() - t0) * 1000)
        for bq in b.questions:
            ans = qa.ask(bq.text, run.history)
            truth = truthful(ans.answer, expected=bq.expected, summaries=known, question=bq.text)
            rec = (len(set(bq.modules) & set(ans.labels)) / len(bq.modules)) if bq.modules else 1.0
            results.append(QuestionResult(b.name, bq, ans, truth, rec))
    return BenchReport(results, runs, index_ms)
