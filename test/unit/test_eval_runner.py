"""The evaluation runner, the report files and the evaluate command line, with fake pipelines
(the real in-process pipeline runs in test_eval_local.py), on the suite's own small benchmark
(test/data/mini_benchmark: one scene, ten cases)."""
import json
from pathlib import Path

import pytest

from raider_ros.evaluation.cases import CATEGORIES, load_benchmark
from raider_ros.evaluation.report import load_report, markdown
from raider_ros.evaluation.runner import DetectOutcome, Evaluator
from raider_ros.cli import evaluate

MINI = Path(__file__).resolve().parents[1] / "data" / "mini_benchmark"

# The mini benchmark's answers as a perfect detector would give them.
PERFECT = {
    "pick(Apple)": ("none", "The apple is within reach.", ["Apple_1"]),
    "Can you pick up the fruit?": ("ambiguity", "Do you mean the apple or the banana?", []),
    "Please pick up the mug near the bread.": ("unfeasibility", "Mug_2 is 2.0 m away, out of reach.", ["Mug_2"]),
    "Could you grab the clean mug for me?": ("unfeasibility", "The bread blocks the mug.", ["Mug_1"]),
    "Could you pick up the pear?": ("unfeasibility", "There is no pear in sight.", []),
    "slice(Apple)": ("unfeasibility", "The apple is already sliced.", ["Apple_1"]),
    "pick(CounterTop)": ("unfeasibility", "The counter top is not pickupable.", ["CounterTop_1"]),
    "Please slice the apple.": ("unfeasibility", "The robot holds no knife.", ["Apple_1"]),
    "Please pick up the clean mug.": ("none", "The clean mug can be picked.", ["Mug_1"]),
    "Could you pick up the mug to the right of the apple?":
        ("unfeasibility", "The gripper is holding the knife.", ["Mug_1"]),
}


class FakePipeline:
    name = "fake"

    def __init__(self, fail_on=(), answers=PERFECT):
        self.fail_on = set(fail_on)
        self.answers = answers
        self.prepared = []

    def prepare(self, scene, setup):
        self.prepared.append((scene.name, setup))
        if "prepare" in self.fail_on:
            raise RuntimeError("world is on fire")

    def detect(self, query, **options):
        if query in self.fail_on:
            raise ValueError(f"cannot handle {query!r}")
        issue, expl, grounding = self.answers[query]
        return DetectOutcome(issue, expl, grounding, llm_turns=3, tool_calls=4, prompt_tokens=1000,
                             completion_tokens=50, elapsed_s=0.5)


@pytest.fixture(scope="module")
def bench():
    return load_benchmark(MINI)


def test_a_perfect_pipeline_scores_everything(bench, tmp_path):
    assert not bench.errors and set(PERFECT) == {c.query for c in bench.cases}
    lines = []
    pipe = FakePipeline()
    report = Evaluator(pipe, progress=lines.append).evaluate(bench, tmp_path)
    o = report["overall"]
    assert (o["grnd"], o["det"], o["expl"]) == (1.0, 1.0, 1.0)
    assert o["time_mean_s"] == 0.5 and o["llm_turns_mean"] == 3 and o["prompt_tokens_mean"] == 1000
    assert len(lines) == 10 and lines[0].startswith("[ 1/10] mk-01") and "ok" in lines[0]
    assert pipe.prepared[5] == ("mini_kitchen", bench.cases[5].setup)
    assert report["backend"] == "fake" and report["cases"] == 10


def test_a_failing_case_is_recorded_and_the_run_goes_on(bench, tmp_path):
    lines = []
    pipe = FakePipeline(fail_on={"Could you pick up the pear?"})
    results = Evaluator(pipe, progress=lines.append).run(bench)
    assert len(results) == 10
    bad = next(r for r in results if r.id == "mk-05")
    assert bad.status == "error" and "ValueError" in bad.error and "pear" in bad.error
    assert (bad.det, bad.expl, bad.reported_issue) == (False, False, None)
    assert "ERROR" in lines[4] and "ValueError" in lines[4]
    assert sum(r.expl for r in results) == 9


def test_a_pipeline_that_cannot_prepare_fails_every_case_without_stopping(bench):
    results = Evaluator(FakePipeline(fail_on={"prepare"}), progress=None).run(bench, limit=3)
    assert [r.status for r in results] == ["error"] * 3
    assert all("world is on fire" in r.error for r in results)


def test_a_hanging_pipeline_times_out_and_the_run_goes_on(bench):
    import threading
    release = threading.Event()

    class Hanging(FakePipeline):
        def detect(self, query, **options):
            if query == "pick(Apple)":
                release.wait(10)
            return super().detect(query)
    lines = []
    results = Evaluator(Hanging(), progress=lines.append, case_timeout_s=0.2).run(bench, limit=3)
    release.set()
    assert [r.status for r in results] == ["timeout", "ok", "ok"]
    assert results[0].error == "no answer within 0.2 s" and "TIMEOUT" in lines[0]
    assert results[1].expl and results[2].expl


def test_a_pipeline_returning_garbage_is_an_error(bench):
    class Garbage(FakePipeline):
        def detect(self, query, **options):
            return {"issue": "none"}
    (r,) = Evaluator(Garbage(), progress=None).run(bench, limit=1)
    assert r.status == "error" and "DetectOutcome" in r.error


def test_wrong_answers_score_per_rule(bench):
    answers = dict(PERFECT)
    answers["Can you pick up the fruit?"] = ("ambiguity", "Which fruit?", ["Apple_1"])        # Grnd fails
    answers["pick(Apple)"] = ("unfeasibility", "The apple is within reach.", ["Apple_1"])      # Det fails
    answers["slice(Apple)"] = ("unfeasibility", "It cannot be done.", ["Apple_1"])             # Expl fails
    results = {r.id: r for r in Evaluator(FakePipeline(answers=answers), progress=None).run(bench)}
    assert (results["mk-02"].grnd, results["mk-02"].det) == (False, True)
    assert results["mk-02"].unnamed_candidates == ["Banana_1"]
    assert (results["mk-01"].grnd, results["mk-01"].det, results["mk-01"].expl) == (True, False, False)
    assert (results["mk-06"].det, results["mk-06"].expl) == (True, False)
    assert results["mk-06"].missed_mentions == [["apple"], ["sliced", "slice", "already"]]


def test_case_options_are_passed_to_detect(tmp_path, bench):
    for f in MINI.iterdir():
        (tmp_path / f.name).write_text(f.read_text())
    p = tmp_path / "mini_kitchen.cases.yaml"
    p.write_text(p.read_text().replace('    query: "pick(Apple)"\n',
                                       '    query: "pick(Apple)"\n    context: "I love apples"\n    toolset: household\n'))
    seen = []

    class Recorder(FakePipeline):
        def detect(self, query, **options):
            seen.append(options)
            return super().detect(query)
    Evaluator(Recorder(), progress=None).run(load_benchmark(tmp_path), limit=2)
    assert seen == [{"context": "I love apples", "toolset": "household"}, {}]


def test_report_files_have_the_required_keys(bench, tmp_path):
    Evaluator(FakePipeline(fail_on={"pick(Apple)"}), progress=None).evaluate(bench, tmp_path)
    data = json.loads((tmp_path / "report.json").read_text())
    assert {"backend", "cases", "overall", "by_category", "by_query_type", "by_abstraction", "results",
            "load_errors"} <= set(data)
    assert set(data["by_category"]) == set(CATEGORIES)
    for group in data["by_category"].values():
        assert {"grnd", "det", "expl", "time_mean_s", "time_p95_s", "llm_turns_mean", "tool_calls_mean",
                "prompt_tokens_mean", "completion_tokens_mean"} <= set(group)
    row = data["results"][0]
    assert {"id", "scene", "category", "query_type", "abstraction", "expected", "reported", "grnd", "det",
            "expl", "time_s", "llm_turns", "tool_calls", "tokens", "explanation", "grounding", "status",
            "error"} <= set(row)
    assert row["status"] == "error" and row["grnd"] is False
    assert data["results"][4]["grnd"] is None                       # mk-05 has no grounding
    md = (tmp_path / "report.md").read_text()
    assert "| method | IA | IN | IU1 | IU2 | IU3 | IU4 | IU5 | IU6 |" in md
    assert "| fake | 100.0 | 50.0 |" in md and "mk-01" in md
    png = (tmp_path / "report.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000


def test_markdown_puts_several_methods_side_by_side(bench, tmp_path):
    a = Evaluator(FakePipeline(), progress=None, backend="A").evaluate(bench, tmp_path / "a")
    wrong = {q: ("none", "", []) for q in PERFECT}
    b = Evaluator(FakePipeline(answers=wrong), progress=None, backend="B").evaluate(bench, tmp_path / "b")
    md = markdown([a, b])
    assert "| A | 100.0 | 100.0 |" in md and "| B | 0.0 | 0.0 | 0.0 |" in md   # IN needs "apple" too
    assert load_report(tmp_path / "a")["backend"] == "A"


# --------------------------------------------------------------------------- command line
def test_cli_missing_or_empty_directory(tmp_path, capsys):
    assert evaluate.main(["--cases", str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert evaluate.main(["--cases", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "no *.cases.yaml files" in capsys.readouterr().err
    assert evaluate.main(["--out", str(tmp_path / "o")]) == 2


def test_cli_check_mode(tmp_path, capsys):
    assert evaluate.main(["--cases", str(MINI), "--check"]) == 0
    assert "1 scenes, 10 cases" in capsys.readouterr().out
    (tmp_path / "x.cases.yaml").write_text("format: raider-cases/1\nscene: ghost\ncases: []\n")
    assert evaluate.main(["--cases", str(tmp_path), "--check"]) == 1
    assert "no scene named 'ghost'" in capsys.readouterr().err


def test_cli_runs_a_pipeline_and_writes_reports(tmp_path, monkeypatch, capsys):
    made = {}

    def fake_make(mode, backend, settings=None):
        made.update(mode=mode, backend=backend, settings=settings)
        return FakePipeline(fail_on={"slice(Apple)"})
    monkeypatch.setattr(evaluate, "make_pipeline", fake_make)
    out = tmp_path / "out"
    code = evaluate.main(["--cases", str(MINI), "--backend", "scripted", "--out", str(out),
                          "--filter", "mk-0[1-6]", "--limit", "5", "--set", "fixture=a.yaml", "--set", "seed=3"])
    assert code == 0
    assert made == {"mode": "local", "backend": "scripted", "settings": {"fixture": "a.yaml", "seed": 3}}
    data = load_report(out)
    assert data["cases"] == 5 and data["mode"] == "local"
    assert "Expl" in capsys.readouterr().out
    # nothing matched: a clear message, non-zero
    assert evaluate.main(["--cases", str(MINI), "--out", str(out), "--filter", "zzz"]) == 1
    assert "no case matched" in capsys.readouterr().err


def test_cli_bad_pipeline_settings_and_compare(tmp_path, capsys):
    assert evaluate.main(["--cases", str(MINI), "--out", str(tmp_path), "--set", "nonsense"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err
    assert evaluate.main(["--cases", str(MINI), "--out", str(tmp_path), "--set", "colour=blue"]) == 2
    assert "unknown detector setting 'colour'" in capsys.readouterr().err
    Evaluator(FakePipeline(), progress=None, backend="A").evaluate(load_benchmark(MINI), tmp_path / "a")
    assert evaluate.main(["--compare", str(tmp_path / "a"), str(tmp_path / "a" / "report.json"),
                          "--out", str(tmp_path / "cmp")]) == 0
    assert (tmp_path / "cmp" / "report.md").read_text().count("| A | 100.0") == 2
    assert evaluate.main(["--compare", str(tmp_path / "missing"), "--out", str(tmp_path / "cmp")]) == 2
