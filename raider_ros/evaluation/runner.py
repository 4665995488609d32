"""Running benchmark cases through an issue-detection pipeline and scoring them.

A pipeline is anything with two methods (:class:`Pipeline`):

* ``prepare(scene, setup)`` — make the world show the case: load ``scene`` if it is not the
  one loaded, apply the case's setup block, let perception refresh;
* ``detect(query, **options) -> DetectOutcome`` — run issue detection on the query;
  ``options`` carries a case's optional ``context`` / ``toolset`` keys (:data:`CASE_OPTIONS`).

The ROS-backed pipeline (sim_world services + issue_detector) lives in the node layer; the
in-process one is :class:`raider_ros.evaluation.local.LocalPipeline`.

:class:`Evaluator` runs every case, prints one progress line per case, and never stops on
a case's error: an exception from ``prepare`` or ``detect`` becomes a failed case with
``status: "error"`` and the message.
"""
from __future__ import annotations

import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

from raider_ros.sim.scene import Scene

from .cases import Benchmark, Case, filter_cases
from .report import build_report, write_reports
from .recovery_check import plan_matches
from .retrieval_check import score_retrieval
from .scoring import CaseResult, classify_failure, score_case


@dataclass
class DetectOutcome:
    issue: str | None                 # none | ambiguity | unfeasibility; None when no answer
    explanation: str = ""
    grounding: Sequence[str] = ()
    status: str = "ok"                # ok | error | timeout | ... (anything but ok is a failure)
    error: str | None = None
    llm_turns: int = 0
    tool_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    elapsed_s: float | None = None    # detection time; the runner measures it when None
    warnings: Sequence[str] = ()      # "<number> <title>" of each program-flow warning
    tools_used: Sequence[str] = ()    # the tools called, in order
    retrieval: dict | None = None     # scene-graph retrieval of the run (evaluation/retrieval_check.py)


@dataclass
class RecoveryOutcome:
    """A recovery plan for a detected issue: its steps as (action, [(arg, is a variable)])."""
    steps: Sequence[tuple[str, Sequence[tuple[str, bool]]]] = ()
    plan_text: str = ""
    status: str = "ok"
    error: str | None = None


# Optional case keys (project extensions) passed to ``detect`` as keyword arguments when a
# case has them: ``context`` (what the user said besides the query), ``toolset`` (a toolset
# name under data/toolsets). A pipeline that takes neither still runs every other case.
CASE_OPTIONS = ("context", "toolset")


class Pipeline(Protocol):
    def prepare(self, scene: Scene, setup: Any) -> None: ...

    def detect(self, query: str, **options: Any) -> DetectOutcome: ...

    # optional: pipelines with it score Recov_Plan on cases that carry expected.recovery
    # def plan_recovery(self, query, issue, explanation, holding, grounding, context) -> RecoveryOutcome


def _print_progress(line: str) -> None:
    print(line, flush=True)


class Evaluator:
    """``Evaluator(pipeline).run(benchmark)`` -> list of :class:`CaseResult`."""

    def __init__(self, pipeline: Pipeline, progress: Callable[[str], None] | None = _print_progress,
                 backend: str = "", case_timeout_s: float | None = None):
        self.pipeline = pipeline
        self.progress = progress or (lambda _line: None)
        self.backend = backend or getattr(pipeline, "name", "") or type(pipeline).__name__
        self.case_timeout_s = case_timeout_s

    def _detect(self, query: str, options: dict[str, Any]) -> DetectOutcome:
        """``pipeline.detect``, given up on after ``case_timeout_s`` (a watchdog for pipelines
        that hang; detectors enforce their own, shorter time limits)."""
        if self.case_timeout_s is None:
            return self.pipeline.detect(query, **options)
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["outcome"] = self.pipeline.detect(query, **options)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                box["error"] = exc
        worker = threading.Thread(target=target, name="evaluate-detect", daemon=True)
        worker.start()
        worker.join(self.case_timeout_s)
        if worker.is_alive():
            return DetectOutcome(issue=None, status="timeout", elapsed_s=self.case_timeout_s,
                                 error=f"no answer within {self.case_timeout_s:g} s")
        if "error" in box:
            raise box["error"]
        return box["outcome"]

    def run_case(self, bench: Benchmark, case: Case) -> CaseResult:
        scene = bench.scenes[case.scene]
        world: Scene | None = None
        t0 = time.monotonic()
        try:
            world = bench.scene_for(case)
            self.pipeline.prepare(scene, case.setup)
            options = {k: case.extra[k] for k in CASE_OPTIONS if case.extra.get(k) is not None}
            t0 = time.monotonic()
            outcome = self._detect(case.query, options)
            if not isinstance(outcome, DetectOutcome):
                raise TypeError(f"pipeline.detect returned {type(outcome).__name__}, not DetectOutcome")
        except Exception as exc:  # noqa: BLE001 - one case's failure must not stop the run
            outcome = DetectOutcome(issue=None, status="error",
                                    error=f"{type(exc).__name__}: {exc}".strip(),
                                    elapsed_s=time.monotonic() - t0)
            tb = traceback.extract_tb(exc.__traceback__)
            if tb:
                outcome.error += f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})"
        elapsed = outcome.elapsed_s if outcome.elapsed_s is not None else time.monotonic() - t0
        issue = outcome.issue if outcome.status == "ok" else None
        score = score_case(case, issue, outcome.explanation, outcome.grounding, world or scene)
        result = CaseResult(
            id=case.id, scene=case.scene, category=case.category, query_type=case.query_type,
            abstraction=case.abstraction, query=case.query, expected_issue=case.expected_issue,
            reported_issue=outcome.issue, grnd=score.grnd, det=score.det, expl=score.expl,
            time_s=float(elapsed), llm_turns=int(outcome.llm_turns or 0),
            tool_calls=int(outcome.tool_calls or 0), prompt_tokens=int(outcome.prompt_tokens or 0),
            completion_tokens=int(outcome.completion_tokens or 0),
            explanation=outcome.explanation or "", grounding=[str(g) for g in outcome.grounding or ()],
            expected_grounding=list(case.grounding) if case.grounding is not None else None,
            status=outcome.status, error=outcome.error,
            missed_mentions=[list(g) for g in score.missed_mentions],
            unnamed_candidates=list(score.unnamed_candidates),
            warnings=[str(w) for w in outcome.warnings or ()], tools_used=[str(x) for x in outcome.tools_used or ()],
        )
        if outcome.retrieval:
            result.retrieval = {"case": case.id, **score_retrieval(case, world or scene, outcome.retrieval)}
        result.failure_reason = classify_failure(case, result)
        if case.recovery and score.expl and issue != "none" and callable(getattr(self.pipeline, "plan_recovery", None)):
            self._score_recovery(case, result, world or scene, options)
        return result

    def _score_recovery(self, case: Case, result: CaseResult, world: Scene, options: dict[str, Any]) -> None:
        """Recov_Plan as the paper measures it: only for cases whose issue was detected and
        explained, the planner gets the query, the issue, RAIDER's explanation and what the
        robot holds; the plan is valid when it matches one of the case's expected recoveries."""
        try:
            rec = self.pipeline.plan_recovery(case.query, result.reported_issue or "", result.explanation,
                                              world.robot.holding, list(result.grounding),
                                              options.get("context") or "")
        except Exception as exc:  # noqa: BLE001 - a planner failure is an invalid plan, not a stop
            rec = RecoveryOutcome(status="error", error=f"{type(exc).__name__}: {exc}")
        result.recovery_plan = rec.plan_text
        result.recovery_error = rec.error
        result.recovery_valid = rec.status == "ok" and plan_matches(case.recovery, rec.steps)

    def run(self, bench: Benchmark, *, pattern: str | None = None, limit: int | None = None,
            repeat: int = 1) -> list[CaseResult]:
        """Every selected case once; with ``repeat`` > 1 each case runs that many times in a row
        (the first run's result is the case's result; all runs go to :attr:`repeats`)."""
        cases = filter_cases(bench.cases, pattern, limit)
        results = []
        self.repeats: dict[str, list[CaseResult]] = {}
        width = max((len(c.id) for c in cases), default=4)
        for n, case in enumerate(cases, 1):
            runs = [self.run_case(bench, case) for _ in range(max(1, repeat))]
            self.repeats[case.id] = runs
            r = runs[0]
            results.append(r)
            verdict = "ok" if r.expl else ("fail" if r.status == "ok" else r.status.upper())
            line = (f"[{n:>{len(str(len(cases)))}}/{len(cases)}] {case.id:<{width}} {case.category:<4}"
                    f" expected {case.expected_issue:<13} reported {str(r.reported_issue):<13}"
                    f" {verdict:<5} {r.time_s:6.2f} s")
            if repeat > 1:
                line += f"  agreement {repeatability(runs)['agreement']:.2f} over {len(runs)} runs"
            if r.error:
                line += f"\n      error: {' '.join(r.error.split())}"
            self.progress(line)
        return results

    def evaluate(self, bench: Benchmark, out_dir: str | Path, *, pattern: str | None = None,
                 limit: int | None = None, extra: dict[str, Any] | None = None, repeat: int = 1) -> dict[str, Any]:
        """Run, score, write report.json / report.md / report.png; return the report."""
        results = self.run(bench, pattern=pattern, limit=limit, repeat=repeat)
        extra = dict(extra or {})
        if repeat > 1:
            per_case = {cid: repeatability(runs) for cid, runs in self.repeats.items()}
            extra["repeatability"] = {
                "runs": repeat, "cases": per_case,
                "agreement_mean": float(sum(c["agreement"] for c in per_case.values()) / max(1, len(per_case))),
                "expl_rate_mean": float(sum(c["expl_rate"] for c in per_case.values()) / max(1, len(per_case)))}
        report = build_report(self.backend, results, load_errors=bench.errors,
                              load_warnings=bench.warnings, directory=str(bench.directory), extra=extra)
        write_reports(out_dir, report)
        return report


def repeatability(runs: Sequence[CaseResult]) -> dict[str, Any]:
    """One case over several runs: how often the most common verdict came out (agreement),
    the Det and Expl rates, and the time's mean and spread (paper §4.2.4)."""
    verdicts: dict[str, int] = {}
    for r in runs:
        key = str(r.reported_issue if r.status == "ok" else f"error: {r.status}")
        verdicts[key] = verdicts.get(key, 0) + 1
    times = [r.time_s for r in runs]
    mean = sum(times) / len(times)
    return {"runs": len(runs), "agreement": max(verdicts.values()) / len(runs), "verdicts": verdicts,
            "det_rate": sum(r.det for r in runs) / len(runs), "expl_rate": sum(r.expl for r in runs) / len(runs),
            "time_mean_s": mean, "time_std_s": (sum((x - mean) ** 2 for x in times) / len(times)) ** 0.5}


def print_summary(report: dict[str, Any], out_dir: str | Path, stream=None) -> None:
    stream = stream or sys.stdout
    o = report["overall"]

    def pct(v: float | None) -> str:
        return "–" if v is None else f"{100 * v:.1f} %"

    on = f" on {report['set']}" if report.get("set") else ""
    print(f"\n{report['backend']}{on}: {report['cases']} cases  Grnd {pct(o['grnd'])}  Det {pct(o['det'])}"
          f"  Expl {pct(o['expl'])}  time mean {o['time_mean_s'] or 0:.2f} s"
          f" (p95 {o['time_p95_s'] or 0:.2f} s)  errors {o['errors']}", file=stream)
    for cat, s in report["by_category"].items():
        print(f"  {cat:<4} {s['cases']:>4} cases  Expl {pct(s['expl'])}", file=stream)
    if o.get("recov_plan_cases"):
        print(f"Recov_Plan {pct(o['recov_plan'])} over {o['recov_plan_cases']} explained cases with an expected "
              f"recovery", file=stream)
    print(f"warnings in {pct(o.get('warning_rate'))} of the cases; failures: "
          + (", ".join(f"{k} {v}" for k, v in report.get("failure_reasons", {}).items() if v) or "none"), file=stream)
    if "repeatability" in report:
        r = report["repeatability"]
        print(f"repeatability over {r['runs']} runs: agreement {r['agreement_mean']:.2f}, "
              f"Expl rate {r['expl_rate_mean']:.2f} (per case in report.json)", file=stream)
    if report.get("retrieval"):
        r = report["retrieval"]
        num = lambda v, f="{:.0f}": "–" if v is None else f.format(v)  # noqa: E731
        print(f"retrieval {r['mode']} over ~{num(r['total_objects_mean'])} objects: recall {pct(r['recall'])} "
              f"({r['recall_cases']} cases; {pct(r.get('recall_incl_unperceived'))} counting "
              f"{len(r.get('unperceived') or {})} case(s) whose needed objects perception never saw), scene tokens {num(r['scene_tokens_mean'])} "
              f"(whole graph {num(r['full_scene_tokens_mean'])}), first message {num(r['first_message_tokens_mean'])}, "
              f"conversation {num(r['conversation_tokens_mean'])}, verdicts as with the whole graph "
              f"{pct(r['agreement_with_full'])}, retrieve p95 {num(r['retrieve_ms_p95'], '{:.1f}')} ms", file=stream)
    if report["load_errors"]:
        print(f"{len(report['load_errors'])} load errors:", file=stream)
        for e in report["load_errors"]:
            print(f"  {e['text']}", file=stream)
    print(f"reports in {Path(out_dir)}/ (report.json, report.md, report.png)", file=stream)
