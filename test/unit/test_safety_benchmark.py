"""The safety benchmark: the data set, its loader's errors, the pure-core runner."""
from __future__ import annotations

import pytest

from raider_ros.common.paths import data_dir
from raider_ros.safety.automata import Compiler
from raider_ros.safety.benchmark import (
    SafetyBenchmarkError, load_benchmark, load_file, run_benchmark, run_case, score_translations,
    summarise_translations,
)

COMPILER = Compiler()
BENCH = load_benchmark(data_dir() / "safety" / "benchmark")


def test_the_data_set_has_enough_cases_scenes_and_batches():
    assert len(BENCH.cases) >= 40
    assert {"house", "kitchen", "assistive_room"} <= {c.scene for c in BENCH.cases}
    assert {c.batch for c in BENCH.cases} == {1, 2, 3, 4}
    assert all(c.ltl is not None for c in BENCH.cases)
    paper = [c for c in BENCH.cases
             if c.plan is not None and "You have to enter the living room before the bathroom." in c.constraints]
    assert paper and any(c.expected["first_unsafe_step"] is None for c in paper)
    assert any(c.task is not None for c in BENCH.cases)


@pytest.mark.parametrize("case", [c for c in BENCH.cases if c.plan is not None], ids=lambda c: c.id)
def test_monitor_verdict_matches_every_case(case):
    res = run_case(BENCH, case, compiler=COMPILER)
    assert res.error is None, res.error
    assert res.ok, (f"{case.id}: expected {dict(case.expected)}, got first_unsafe_step={res.first_unsafe_step} "
                    f"violated={res.violated} pending={res.pending_at_end}")


def test_run_benchmark_reports_task_cases_as_not_run():
    res = run_benchmark(BENCH, compiler=COMPILER)
    tasks = [c.id for c in BENCH.cases if c.task is not None]
    assert res["accuracy"] == 1.0 and sorted(res["not_run"]) == sorted(tasks) and len(tasks) >= 20


def test_translation_scoring_is_by_equivalence():
    from raider_ros.safety.translate import RulesTranslator
    rs = score_translations(BENCH, RulesTranslator(), compiler=COMPILER)
    summary = summarise_translations(rs)
    assert summary["sentences"] == len(rs) >= 80
    assert set(summary) >= {"batch1_accuracy", "batch2_accuracy", "batch3_accuracy"}
    ok = [r for r in rs if r.equivalent]
    assert any(r.produced != r.gold for r in ok)     # right answers spelled otherwise: judged by automata


def test_a_sentence_reused_by_a_later_batch_counts_in_the_batch_that_first_had_it(tmp_path):
    from raider_ros.safety.translate import RulesTranslator
    case = """  - id: {id}
    constraints: ["Never enter the bathroom.", "{other}"]
    ltl: ["G !agent_at(bathroom)", "G !switched_on(stove)"]
    plan: ["move_to(Toilet_1)"]
    expected: {{first_unsafe_step: 0, violated: [0]}}
"""
    # the later batch's file sorts first
    (tmp_path / "a-later.safety.yaml").write_text("format: raider-safety/1\nbatch: 4\nscene: house\ncases:\n"
                                                  + case.format(id="l-01", other="Never turn on the stove."))
    (tmp_path / "b-first.safety.yaml").write_text("format: raider-safety/1\nbatch: 1\nscene: house\ncases:\n"
                                                  + case.format(id="f-01", other="Do not switch the stove on."))
    rs = score_translations(load_benchmark(tmp_path), RulesTranslator(), compiler=COMPILER)
    batches = {r.sentence: r.batch for r in rs}
    assert batches == {"Never enter the bathroom.": 1, "Do not switch the stove on.": 1,
                       "Never turn on the stove.": 4}
    summary = summarise_translations(rs)
    assert summary["batch1_sentences"] == 2 and summary["batch4_sentences"] == 1


GOOD = """format: raider-safety/1
scene: house
cases:
  - id: t-01
    constraints: ["Never enter the bathroom."]
    ltl: ["G !agent_at(bathroom)"]
    plan: ["move_to(Toilet_1)"]
    expected: {first_unsafe_step: 0, violated: [0]}
"""


@pytest.mark.parametrize("old, new, field", [
    ("format: raider-safety/1", "format: raider-safety/9", "format"),
    ("scene: house", "scene: castle", "scene"),
    ('ltl: ["G !agent_at(bathroom)"]', 'ltl: ["G !agent_at(bathroom"]', "case t-01: ltl[0]"),
    ('ltl: ["G !agent_at(bathroom)"]', 'ltl: ["a", "b"]', "case t-01: ltl"),
    ("first_unsafe_step: 0", "first_unsafe_step: 5", "case t-01: expected.first_unsafe_step"),
    ("violated: [0]", "violated: [3]", "case t-01: expected.violated"),
    ("violated: [0]", "violated: []", "case t-01: expected.violated"),
    ('plan: ["move_to(Toilet_1)"]', 'plan: []', "case t-01: plan"),
    ('plan: ["move_to(Toilet_1)"]', 'plan: ["x"]\n    task: {goal: "(g)"}', "case t-01: plan"),
    ("  - id: t-01", "  - id: t-01\n    colour: red", "case t-01: colour"),
    ("  - id: t-01", "  - id: 7", "case #0: id"),
])
def test_loader_errors_name_file_case_and_field(tmp_path, old, new, field):
    path = tmp_path / "bad.safety.yaml"
    path.write_text(GOOD.replace(old, new))
    with pytest.raises(SafetyBenchmarkError) as err:
        load_file(path)
    assert str(err.value).startswith(f"{path}: {field}:"), str(err.value)


def test_a_scene_file_beside_the_benchmark(tmp_path):
    (tmp_path / "tiny.scene.yaml").write_text(
        "format: raider-scene/1\nname: tiny\nrobot: {pose: [0, 0, 0]}\nrooms:\n  - {name: hall, min: [-1, -1], max: [1, 1]}\n"
        "objects:\n  - {id: Box_1, type: Box, shape: box, center: [3, 0, 0.2], size: [0.4, 0.4, 0.4]}\n")
    (tmp_path / "t.safety.yaml").write_text(
        GOOD.replace("scene: house", "scene: tiny").replace("agent_at(bathroom)", "agent_at(hall)")
        .replace("move_to(Toilet_1)", "move_to(Box_1)").replace("first_unsafe_step: 0, violated: [0]",
                                                               "first_unsafe_step: 0, violated: [0]"))
    bench = load_benchmark(tmp_path)
    res = run_case(bench, bench.cases[0], compiler=COMPILER)
    # the robot starts in the hall (G !agent_at(hall) is violated at once): a case error, named
    assert not res.ok and "already violated" in res.error


def test_an_empty_directory_is_an_error(tmp_path):
    with pytest.raises(SafetyBenchmarkError, match="no \\*.safety.yaml files"):
        load_benchmark(tmp_path)
