"""The state-QA benchmark: file format, in-process scenario runs (simulator + core objects, no
ROS) and scoring."""
from __future__ import annotations

import pytest

from raider_ros.state_qa.answer import StateQA
from raider_ros.state_qa.benchmark import benchmark_dir, load_bench_file, load_benchmark, run_benchmark, run_scenario
from raider_ros.state_qa.modules import StateQAError


def test_the_shipped_benchmark_is_large_enough():
    benches = load_benchmark()
    questions = [q for b in benches for q in b.questions]
    assert len(benches) >= 3 and len(questions) >= 40
    assert sum(q.expected == "unknown" for q in questions) >= 10
    assert sum(q.expected != "unknown" for q in questions) >= 30


@pytest.mark.parametrize("text, message", [
    ("format: other/1\n", "format"),
    ("format: raider-stateqa-bench/1\nscenario: {run: fly, scene: kitchen}\n", "run \\(executor | actions\\)"),
    ("format: raider-stateqa-bench/1\nscenario: {run: executor, scene: kitchen}\nquestions: []\n", "person"),
    ("format: raider-stateqa-bench/1\nscenario: {run: actions, scene: kitchen, actions: [pick]}\n", "actions"),
    ("format: raider-stateqa-bench/1\nscenario: {run: actions, scene: kitchen, actions: [[pick, Apple_1]]}\n"
     "questions: [{q: 'Hi?', modules: [robot]}]\n", "mentions"),
    ("format: raider-stateqa-bench/1\nscenario: {run: actions, scene: kitchen, actions: [[pick, Apple_1]]}\n"
     "questions: [{q: 'Hi?', modules: [kitchen], answer: unknown}]\n", "modules"),
])
def test_bad_benchmark_files_are_refused(tmp_path, text, message):
    f = tmp_path / "b.yaml"
    f.write_text(text)
    with pytest.raises(StateQAError, match=message):
        load_bench_file(f)


def test_actions_scenario_builds_summaries_and_answers_truthfully():
    bench = load_bench_file(benchmark_dir() / "kitchen_actions.yaml")
    run = run_scenario(bench)
    latest = run.history.latest_all()
    assert set(latest) == {"world_model", "people", "robot", "safety_monitor"}   # no task, checks or dialogue
    assert latest["robot"].fact("holding") == "Apple_1"
    assert "hand is full" in latest["robot"].fact("skill_failures")
    report = run_benchmark([bench], StateQA())
    figures = report.figures()
    assert figures["questions_factual"] + figures["questions_unknown"] == len(bench.questions)
    by_q = {r.question.text: r for r in report.results}
    assert by_q["What are you holding?"].truth.truthful
    assert by_q["Do you see a toaster?"].truth.truthful and by_q["Do you see a toaster?"].truth.said_dont_know
    assert by_q["What task are you doing?"].answer.status == "no_state"
    assert all(not r.truth.invented for r in report.results)
    assert 0 < figures["prompt_tokens_ratio"] < 1


@pytest.mark.slow
def test_executor_scenario_runs_the_task_with_checks_and_recoveries():
    bench = load_bench_file(benchmark_dir() / "assistive_midway.yaml")
    run = run_scenario(bench)
    assert run.outcome.startswith("success"), run.outcome
    latest = run.history.latest_all()
    assert {"issue_detector", "recovery_planner", "plan_executor", "human_interface", "robot"} <= set(latest)
    assert latest["robot"].fact("holding") == "Medicine_1"
    assert latest["plan_executor"].fact("recoveries") == "step 1: 1, step 2: 2"
    assert "closest to the plant" in latest["human_interface"].fact("dialogue")
    assert len(run.history.past("issue_detector")) >= 4     # every check was published
