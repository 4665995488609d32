"""Evaluate question answering about the robot's state (RACCOON) on a Q&A benchmark directory.

    python -m raider_ros.cli.qa_eval --cases DIR --out DIR [--mode inprocess|ros|both]
           [--backend rules|openai|scripted] [--set KEY=VALUE ...] [--filter REGEX] [--no-loocv]

``make qa-eval CASES=<dir> OUT=<dir>`` runs it with ``--mode both`` (default CASES:
data/state_qa/benchmark; the format is in docs/state_qa.md). Writes OUT/report.json and
OUT/report.md with:

* module selection - recall and precision by leave-one-out on the training split (a dev
  figure: the selector was tuned on it) and on the held-out split (in-process, and in ROS mode
  the same questions through ``ask_robot``), and on the benchmark's own questions;
* answer truthfulness - factual questions, and questions about absent things / unknown /
  refused;
* prompt tokens of the selected contexts vs every module's context.

In-process mode runs each scenario with the core's runner (simulator, perception, rules issue
detector, recovery planner, executor, scripted person in one process). ROS mode starts a fresh
node graph per scenario, runs it to its checkpoint through the nodes, collects the summaries
from ``state/summaries`` and asks through ``ask_robot``. Exit status 0 when the run completed,
2 for a usage error (no benchmark files, a file that does not load, an unavailable backend).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path

import yaml

BACKENDS = ("rules", "openai", "scripted")
MODES = ("inprocess", "ros", "both")


class UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="qa_eval", description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default=None, help="directory of *.yaml Q&A benchmark files "
                                                 "(default: data/state_qa/benchmark)")
    p.add_argument("--out", default="out/qa_eval", help="output directory for report.json and report.md")
    p.add_argument("--mode", default="both", choices=MODES)
    p.add_argument("--backend", default="rules", choices=BACKENDS, help="who writes the answers")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", dest="settings", default=[],
                   help="an LLM setting: model, base_url, api_key_env, fixture, timeout_s (repeatable)")
    p.add_argument("--filter", metavar="REGEX", help="only scenarios whose name matches")
    p.add_argument("--no-loocv", action="store_true", help="skip the leave-one-out on the training split")
    p.add_argument("--log-dir", help="ROS mode: keep each node's log here")
    return p


def _settings(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key.strip() not in ("model", "base_url", "api_key_env", "fixture", "timeout_s"):
            raise UsageError(f"--set expects KEY=VALUE with KEY one of model, base_url, api_key_env, fixture, "
                             f"timeout_s; got {pair!r}")
        out[key.strip()] = yaml.safe_load(value) if value.strip() else ""
    return out


def _make_llm(backend: str, settings: dict):
    if backend == "rules":
        return None
    from raider_ros.agent.factory import DetectorSettings, make_backend
    try:
        return make_backend(DetectorSettings(backend=backend, **{k: v for k, v in settings.items()
                                                                 if k != "timeout_s"}))
    except (ValueError, OSError) as exc:
        raise UsageError(f"backend {backend}: {exc}") from None


# --------------------------------------------------------------------------- figures
def selection_on_bench(report) -> dict:
    """Recall / precision of the selected labels against the benchmark questions' modules."""
    rows = [r for r in report.results if r.question.modules and r.answer.labels]
    if not rows:
        return {}
    rec = [len(set(r.question.modules) & set(r.answer.labels)) / len(r.question.modules) for r in rows]
    pre = [len(set(r.question.modules) & set(r.answer.labels)) / len(r.answer.labels) for r in rows]
    return {"bench_selection_recall": round(statistics.mean(rec), 4),
            "bench_selection_precision": round(statistics.mean(pre), 4), "bench_selection_n": len(rows)}


def _failures(report) -> list[dict]:
    return [{"scenario": r.scenario, "question": r.question.text, "answer": r.answer.answer,
             "status": r.answer.status, "modules": list(r.answer.modules), "labels": list(r.answer.labels),
             "missing": list(r.truth.missing), "invented": list(r.truth.invented)}
            for r in report.results if not r.truth.truthful]


def _answers(report) -> list[dict]:
    return [{"scenario": r.scenario, "question": r.question.text, "answer": r.answer.answer,
             "modules": list(r.answer.modules), "labels": list(r.answer.labels), "status": r.answer.status,
             "truthful": r.truth.truthful} for r in report.results]


def selection_figures(no_loocv: bool, log) -> tuple[dict, object]:
    from raider_ros.state_qa.dataset import load_questions
    from raider_ros.state_qa.evaluation import selection_scores
    from raider_ros.state_qa.selector import default_selector
    selector = default_selector()
    held = load_questions("heldout")
    out = {}
    t0 = time.monotonic()
    ho = selection_scores(selector.select_many([q.text for q in held]), held)
    out.update(ho.as_dict("heldout_"))
    if not no_loocv:
        loo = selection_scores(selector.leave_one_out(), selector.questions)
        out.update(loo.as_dict("loocv_"))
    log(f"selection figures in {time.monotonic() - t0:.0f} s")
    return out, held


def run_inprocess(benches, llm, timeout_s: float, log) -> dict:
    from raider_ros.state_qa.answer import StateQA
    from raider_ros.state_qa.benchmark import run_benchmark
    qa = StateQA(llm=llm, llm_timeout_s=timeout_s)
    t0 = time.monotonic()
    report = run_benchmark(benches, qa)
    for name, run in report.runs.items():
        log(f"in-process {name}: {run.outcome}")
    return {"figures": {**report.figures(), **selection_on_bench(report),
                        "elapsed_s": round(time.monotonic() - t0, 1), "backend": qa.backend},
            "failures": _failures(report), "answers": _answers(report)}


def run_ros(benches, backend: str, settings: dict, held, log_dir: str | None, log) -> dict:
    from raider_ros.ros.qa_bench import run_scenario_ros
    from raider_ros.state_qa.benchmark import BenchReport
    from raider_ros.state_qa.evaluation import selection_scores
    from raider_ros.state_qa.selector import Selection
    qa_params = {"backend": backend, **settings}
    llm_params = {} if backend == "rules" else {"backend": backend, **{k: v for k, v in settings.items()
                                                                      if k != "timeout_s"}}
    results, runs, rtt, held_sel, timing = [], {}, [], None, {}
    t0 = time.monotonic()
    for i, b in enumerate(benches):
        extra = [q.text for q in held] if i == 0 and held else []
        res, extra_answers = run_scenario_ros(b, log_dir=log_dir, qa_params=qa_params, llm_params=llm_params,
                                              extra_questions=extra, on_line=log)
        results.extend(res.results)
        runs[b.name] = res.run
        rtt.extend(res.rtt_ms)
        timing[b.name] = {"startup_s": round(res.startup_s, 1), "run_s": round(res.run_s, 1),
                          "first_ask_ms": round(res.first_ms, 1), "after_change_ask_ms": round(res.after_change_ms, 1)}
        if extra_answers:
            sels = [Selection(a.answer.labels or ("unknown",)) for a in extra_answers]
            held_sel = selection_scores(sels, held).as_dict("heldout_over_ros_")
    report = BenchReport(results, runs)
    rtt.sort()
    fig = {**report.figures(), **selection_on_bench(report), **(held_sel or {}),
           "ask_robot_ms_p50": round(rtt[len(rtt) // 2], 1) if rtt else 0,
           "ask_robot_ms_p95": round(rtt[min(len(rtt) - 1, int(0.95 * len(rtt)))], 1) if rtt else 0,
           "elapsed_s": round(time.monotonic() - t0, 1)}
    return {"figures": fig, "timing": timing, "failures": _failures(report), "answers": _answers(report)}


# --------------------------------------------------------------------------- report
def markdown(doc: dict) -> str:
    lines = [f"# State Q&A evaluation ({doc['cases']})", "",
             f"Backend: {doc['backend']}. Scenarios: {', '.join(doc['scenarios'])}.", ""]
    sel = doc.get("selection") or {}
    if sel:
        lines += ["## Module selection", "", "| split | recall | precision | labels per question | questions |",
                  "|---|---|---|---|---|"]
        for tag, title in (("loocv_", "training split, leave-one-out (dev: the settings were tuned on it)"),
                           ("heldout_", "held-out split"), ("heldout_over_ros_", "held-out split, through ask_robot")):
            src = sel if tag != "heldout_over_ros_" else (doc.get("ros") or {}).get("figures", {})
            if f"{tag}recall" in src:
                lines.append(f"| {title} | {src[f'{tag}recall']:.3f} | {src[f'{tag}precision']:.3f} | "
                             f"{src[f'{tag}mean_labels']:.2f} | {src[f'{tag}n']} |")
        lines.append("")
    for mode, title in (("inprocess", "In-process (the core's runner)"), ("ros", "Through the node graph")):
        part = doc.get(mode)
        if not part:
            continue
        f = part["figures"]
        lines += [f"## {title}", "", "| figure | value |", "|---|---|"]
        for key, label in (("truthful_rate_factual", "truthful, factual questions"),
                           ("truthful_rate_unknown", "truthful, absent / unknown / refused"),
                           ("truthful_rate_all", "truthful, all"),
                           ("questions_factual", "factual questions"), ("questions_unknown", "absent / unknown questions"),
                           ("bench_selection_recall", "selection recall on these questions"),
                           ("bench_selection_precision", "selection precision on these questions"),
                           ("prompt_tokens_selected_mean", "prompt tokens, selected contexts (mean)"),
                           ("prompt_tokens_all_mean", "prompt tokens, every context (mean)"),
                           ("prompt_tokens_ratio", "selected / all"),
                           ("answer_ms_p50", "answer time in the answerer, p50 [ms]"),
                           ("answer_ms_p95", "answer time in the answerer, p95 [ms]"),
                           ("ask_robot_ms_p50", "ask_robot round trip, p50 [ms]"),
                           ("ask_robot_ms_p95", "ask_robot round trip, p95 [ms]"),
                           ("elapsed_s", "run time [s]")):
            if key in f:
                lines.append(f"| {label} | {f[key]} |")
        lines.append("")
        if part["failures"]:
            lines += ["Not truthful:", ""]
            for x in part["failures"]:
                why = "; ".join(filter(None, [f"missing {', '.join(x['missing'])}" if x["missing"] else "",
                                              f"invented {', '.join(x['invented'])}" if x["invented"] else ""]))
                lines.append(f"- [{x['scenario']}] {x['question']} -> {x['answer'][:200]} ({why})")
            lines.append("")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ns = _parser().parse_args(argv)
    log = lambda s: print(f"[qa_eval] {s}", flush=True)  # noqa: E731
    try:
        from raider_ros.state_qa.benchmark import benchmark_dir, load_benchmark
        from raider_ros.state_qa.modules import StateQAError
        cases = Path(ns.cases) if ns.cases else benchmark_dir()
        if not cases.is_dir():
            raise UsageError(f"--cases {cases}: not a directory")
        try:
            benches = load_benchmark(cases)
        except StateQAError as exc:
            raise UsageError(str(exc)) from None
        if ns.filter:
            benches = [b for b in benches if re.search(ns.filter, b.name)]
            if not benches:
                raise UsageError(f"--filter {ns.filter!r} matches no scenario")
        settings = _settings(ns.settings)
        llm = _make_llm(ns.backend, settings)
    except UsageError as exc:
        print(f"qa_eval: {exc}", file=sys.stderr)
        return 2
    backend_label = "rules (no LLM)" if llm is None else str(getattr(llm, "name", ns.backend))
    doc: dict = {"cases": str(cases), "backend": backend_label, "scenarios": [b.name for b in benches]}
    sel, held = selection_figures(ns.no_loocv, log)
    doc["selection"] = sel
    if ns.mode in ("inprocess", "both"):
        doc["inprocess"] = run_inprocess(benches, llm, float(settings.get("timeout_s", 30.0)), log)
    if ns.mode in ("ros", "both"):
        if "ROS_DOMAIN_ID" not in os.environ:     # a private domain: never meet another running graph
            os.environ["ROS_DOMAIN_ID"] = str(random.SystemRandom().randint(1, 100))
        doc["ros"] = run_ros(benches, ns.backend, settings, held, ns.log_dir, log)
    out = Path(ns.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out / "report.md").write_text(markdown(doc))
    print(markdown(doc))
    log(f"wrote {out / 'report.json'} and {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
