"""RACCOON state QA: module selection and answer truthfulness, ROS-free.

Module selection (recall = |selected ∩ true| / |true|, precision = |selected ∩ true| /
|selected|, averaged over the questions):
  qa_module_*_loocv    leave-one-out on the training split (data/state_qa/train.yaml); the
                       selector settings were tuned on it: a DEV figure (the paper: 93.5 % /
                       62.7 % with SVM+2NN on its 322 questions)
  qa_module_*_heldout  trained on the training split, measured on data/state_qa/heldout.yaml,
                       written and committed before the classifier and never used to tune it
  qa_module_*_svm2nn_* the same with the paper's plain SVM+2NN (no margins), for comparison
Answers (rules answerer, no LLM) on the Q&A benchmark (data/state_qa/benchmark, four scenarios
run in-process: simulator, perception, scene graph, rules issue detector, recovery planner,
executor, scripted person):
  qa_truthful_rate          share of factual questions answered truthfully (target >= 0.90)
  qa_truthful_rate_unknown  share of questions about absent things / refused / unknown
  qa_prompt_tokens_*        cl100k tokens of the LLM prompt with the selected contexts vs with
                            every module's context (the paper's ablation of context selection)
  qa_answer_ms_p50 / p95    in-process time of StateQA.ask (model loaded; each scenario's
                            summaries indexed first, as the node does when they arrive)
  qa_index_ms_max           the longest indexing of one scenario's summaries (embedding facts)
The benchmark questions were written before the answerer was first run on them; the rules
answerer was then improved while looking at its failures there, so qa_truthful_rate is a dev
figure too (its first, untuned run: 0.773 factual, 0.95 unknown).

Run: ``python bench/bench_state_qa.py``; prints the figures, writes bench/results/state_qa.json.
"""
from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from figures import write_figures  # noqa: E402
from raider_ros.state_qa.answer import StateQA  # noqa: E402
from raider_ros.state_qa.benchmark import load_benchmark, run_benchmark  # noqa: E402
from raider_ros.state_qa.dataset import load_questions  # noqa: E402
from raider_ros.state_qa.evaluation import selection_scores  # noqa: E402
from raider_ros.state_qa.selector import ModuleSelector, SelectorConfig, default_selector  # noqa: E402


def selection_figures(selector: ModuleSelector, held, tag: str) -> dict:
    out = {}
    t0 = time.monotonic()
    loo = selection_scores(selector.leave_one_out(), selector.questions)
    print(f"  leave-one-out ({tag}) in {time.monotonic() - t0:.1f} s", flush=True)
    ho = selection_scores(selector.select_many([q.text for q in held]), held)
    for name, sc in (("loocv", loo), ("heldout", ho)):
        out[f"qa_module_recall_{tag}{name}"] = round(sc.recall, 4)
        out[f"qa_module_precision_{tag}{name}"] = round(sc.precision, 4)
        out[f"qa_module_mean_labels_{tag}{name}"] = round(sc.mean_labels, 3)
    return out


def main() -> None:
    figures: dict = {}
    selector = default_selector()
    held = load_questions("heldout")
    figures.update(selection_figures(selector, held, ""))
    plain = ModuleSelector(selector.questions, config=replace(SelectorConfig.load(), svm_margin=None, knn_margin=None))
    plain._X = selector.embeddings()        # the same vector store, embedded once
    figures.update(selection_figures(plain, held, "svm2nn_"))
    figures["qa_train_questions"] = len(selector.questions)
    figures["qa_heldout_questions"] = len(held)

    qa = StateQA(selector=selector)
    qa.ask("What are you holding?", {})     # warm-up: model and selector ready before timing
    t0 = time.monotonic()
    report = run_benchmark(load_benchmark(), qa)
    print(f"  benchmark (scenarios + answers) in {time.monotonic() - t0:.1f} s", flush=True)
    for name, run in report.runs.items():
        print(f"  scenario {name}: {run.outcome}")
    for r in report.results:
        if not r.truth.truthful:
            print(f"  not truthful [{r.scenario}] {r.question.text!r} -> {r.answer.answer[:160]!r}")
    f = report.figures()
    figures.update({
        "qa_truthful_rate": f["truthful_rate_factual"],
        "qa_truthful_rate_unknown": f["truthful_rate_unknown"],
        "qa_truthful_rate_all": f["truthful_rate_all"],
        "qa_benchmark_questions_factual": f["questions_factual"],
        "qa_benchmark_questions_unknown": f["questions_unknown"],
        "qa_benchmark_scenarios": f["scenarios"],
        "qa_benchmark_module_recall": f["module_recall"],
        "qa_prompt_tokens_selected_mean": f["prompt_tokens_selected_mean"],
        "qa_prompt_tokens_all_mean": f["prompt_tokens_all_mean"],
        "qa_prompt_tokens_ratio": f["prompt_tokens_ratio"],
        "qa_answer_ms_p50": f["answer_ms_p50"],
        "qa_answer_ms_p95": f["answer_ms_p95"],
        "qa_index_ms_max": f["index_ms_max"],
    })
    write_figures("state_qa", figures)


if __name__ == "__main__":
    main()
