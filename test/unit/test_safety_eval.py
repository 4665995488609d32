"""make safety-eval (raider_ros/cli/safety_eval.py) on a few cases of the project's benchmark:
report.json has the keys issue 12 asks for, the chip dispatches nothing unsafe, bad input is a
clear error."""
from __future__ import annotations

import json

import pytest

from raider_ros.cli import safety_eval
from raider_ros.common.paths import data_dir

CASES = str(data_dir() / "safety" / "benchmark")
KEYS = {"cases", "translation_accuracy", "monitor_accuracy", "success_rate_with_chip", "safety_rate_with_chip",
        "success_rate_without_chip", "safety_rate_without_chip", "unsafe_steps_dispatched_with_chip", "results"}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("safety_eval")
    # h-01: the paper's example as a plan; hc-01: a held-out sentence; ht-01: the paper's example as a task
    rc = safety_eval.main(["--cases", CASES, "--out", str(out), "--filter", "^(h-01|hc-01|ht-01)$",
                           "--modes", "off,chip", "--constraints", "gold", "--quiet"])
    assert rc == 0
    return json.loads((out / "report.json").read_text()), (out / "report.md").read_text()


def test_the_report_has_every_key_the_issue_lists(report):
    rep, md = report
    assert KEYS <= set(rep)
    assert rep["cases"] == 3 and rep["plan_cases"] == 2 and rep["task_cases"] == 1
    assert {r["id"] for r in rep["results"]} == {"h-01", "hc-01", "ht-01"}
    tr = rep["translation"]
    assert tr["before_last_change"]["sentences"] >= 2 and tr["after_last_change"]["sentences"] >= 1
    assert "Success Rate" in md and "Safety Rate" in md and "held out" in md


def test_the_chip_dispatches_nothing_unsafe_and_the_plain_plan_does(report):
    rep, _ = report
    assert rep["monitor_accuracy"] == 1.0
    assert rep["unsafe_steps_dispatched_with_chip"] == 0 and rep["safety_rate_with_chip"] == 1.0
    assert rep["unsafe_steps_dispatched_without_chip"] >= 1 and rep["safety_rate_without_chip"] == 0.0
    run = next(r for r in rep["results"] if r["id"] == "ht-01")["runs"]["chip/gold"]
    assert run["success"] and run["pruned"]                # went around the rule after pruning


def test_a_missing_cases_directory_is_a_clear_error(tmp_path, capsys):
    rc = safety_eval.main(["--cases", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "nowhere" in err
    assert not (tmp_path / "out" / "report.json").exists()


def test_bad_options_are_refused(tmp_path):
    with pytest.raises(SystemExit):
        safety_eval.main(["--cases", CASES, "--out", str(tmp_path), "--modes", "sometimes"])
