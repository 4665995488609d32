"""What a robot engineer meets in the first hour (issue 10), each at its cause: options through
make, LLM settings and a missing key, baseline labels, no Grnd for errored runs, a non-zero
exit when every case errors, progress lines, and what the counts of a no-LLM backend mean."""
from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from raider_ros.agent.factory import DetectorSettings, build_detector
from raider_ros.cli import evaluate
from raider_ros.common.paths import data_dir
from raider_ros.common.tool_contract import NoTools
from raider_ros.evaluation.cases import load_benchmark
from raider_ros.evaluation.report import markdown
from raider_ros.evaluation.runner import DetectOutcome, Evaluator
from raider_ros.evaluation.scoring import score_case

ROOT = Path(__file__).resolve().parents[2]
DEV = data_dir() / "benchmark" / "dev"


def test_make_evaluate_passes_args_through():
    res = subprocess.run(["make", "--no-print-directory", "-n", "evaluate", "CASES=somewhere", 'ARGS=--limit 1 --set method=precond'],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    line = res.stdout.strip().splitlines()[-1]
    assert "--cases \"somewhere\"" in line and line.endswith("--limit 1 --set method=precond")


def test_baselines_are_labelled_by_method_and_backend():
    assert DetectorSettings().label() == "rules (no LLM)"
    assert DetectorSettings(method="precond").label() == "precond (rules (no LLM))"
    assert DetectorSettings(backend="openai", model="m").label() == "openai:m"


def test_llm_visual_obs_with_the_rules_backend_is_refused_in_one_line():
    with pytest.raises(ValueError, match="llm_visual_obs needs a language model"):
        build_detector(DetectorSettings(method="llm_visual_obs"), NoTools())


def test_cli_refuses_llm_visual_obs_and_a_missing_key_with_status_2(tmp_path, capsys, monkeypatch):
    for var in ("RAIDER_LLM_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    common = ["--cases", str(DEV), "--limit", "1", "--out", str(tmp_path)]
    assert evaluate.main([*common, "--set", "method=llm_visual_obs"]) == 2
    err = capsys.readouterr().err.strip()
    assert "llm_visual_obs needs a language model" in err and len(err.splitlines()) == 1
    assert evaluate.main([*common, "--backend", "openai"]) == 2
    err = capsys.readouterr().err.strip()
    assert "OPENAI_API_KEY" in err and len(err.splitlines()) == 1


def test_an_errored_run_earns_no_grnd_even_for_an_empty_expected_grounding():
    bench = load_benchmark(DEV)
    absent = dataclasses.replace(next(c for c in bench.cases if c.category == "IU3"), grounding=[])
    assert score_case(absent, None, "", [], bench.scenes[absent.scene]).grnd is False
    assert score_case(absent, absent.expected_issue, "", [], bench.scenes[absent.scene]).grnd is True


class _Failing:
    name = "always failing"

    def prepare(self, scene, setup):
        pass

    def detect(self, query, **options):
        return DetectOutcome(None, status="error", error="the model is unreachable: connection refused "
                                                         "to http://localhost:9/v1 after 3 attempts, each "
                                                         "with a 30 s timeout; check RAIDER_LLM_BASE_URL")


def test_a_run_where_every_case_errors_exits_1_and_errors_are_not_cut(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(evaluate, "make_pipeline", lambda *a, **k: _Failing())
    assert evaluate.main(["--cases", str(DEV), "--limit", "2", "--out", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert "every case ended with an error" in err
    assert "check RAIDER_LLM_BASE_URL" in out               # the whole message, not its first 120 characters


def test_evaluate_says_what_it_does_before_the_first_case(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(evaluate, "make_pipeline", lambda *a, **k: _Failing())
    evaluate.main(["--cases", str(DEV), "--limit", "1", "--out", str(tmp_path)])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("1 cases from ") and "local pipeline" in lines[0]
    assert lines[1].startswith("pipeline ready in ") and lines[2].startswith("[1/1]")


def test_the_report_says_what_turns_and_tokens_count_without_an_llm(tmp_path):
    bench = load_benchmark(DEV)

    class Perfect:
        name = "rules (no LLM)"

        def prepare(self, scene, setup):
            pass

        def detect(self, query, **options):
            return DetectOutcome("none", "ok", [], llm_turns=3, prompt_tokens=3000)
    run = Evaluator(Perfect(), progress=None, backend="rules (no LLM)").evaluate(bench, tmp_path, limit=2)
    md = markdown([run])
    assert "no model is called" in md and "prompt an LLM would have been sent" in md
    assert "| LLM turns |" not in md
