"""The in-process pipeline (world -> perception -> scene graph -> tools -> rules agent) on the
suite's own small benchmark (test/data/mini_benchmark), through the evaluator."""
from pathlib import Path

import pytest

from raider_ros.evaluation.cases import load_benchmark
from raider_ros.evaluation.local import LocalPipeline, make_pipeline
from raider_ros.evaluation.runner import Evaluator

MINI = Path(__file__).resolve().parents[1] / "data" / "mini_benchmark"


@pytest.fixture(scope="module")
def pipeline():
    return make_pipeline("rules", extra={"use_embeddings": False})


@pytest.mark.slow
def test_local_pipeline_runs_the_mini_benchmark(pipeline, tmp_path):
    bench = load_benchmark(MINI)
    report = Evaluator(pipeline, progress=None).evaluate(bench, tmp_path)
    assert report["backend"] == "rules (no LLM)"
    assert report["overall"]["errors"] == 0
    rows = {r["id"]: r for r in report["results"]}
    # each answer comes from the perceived scene of its own case (setups applied)
    assert rows["mk-01"]["reported"] == "none" and rows["mk-01"]["grounding"] == ["Apple_1"]
    assert rows["mk-04"]["reported"] == "unfeasibility"          # the bread moved in front of the mug
    assert rows["mk-06"]["reported"] == "unfeasibility"          # the apple sliced by the setup
    assert all(r["tool_calls"] > 0 and r["time_s"] > 0 for r in report["results"])


def test_prepare_applies_setups_to_the_same_base_scene(pipeline):
    bench = load_benchmark(MINI)
    scene = bench.scenes["mini_kitchen"]
    pipeline.prepare(scene, {"remove": ["Mug_1"]})
    assert pipeline.world.scene.get("Mug_1") is None
    assert "Mug_1" not in pipeline.tools.call("object_detection", [], deadline=None).data
    pipeline.prepare(scene, None)                      # the next case starts from the base scene
    assert pipeline.world.scene.get("Mug_1") is not None
    assert "Mug_1" in pipeline.tools.call("object_detection", [], deadline=None).data


def test_bad_settings_fail_when_the_pipeline_is_built():
    with pytest.raises(ValueError, match="unknown detector setting"):
        make_pipeline("rules", colour="blue")
    with pytest.raises(ValueError, match="fixture"):
        make_pipeline("scripted")
    assert isinstance(make_pipeline("rules", extra={"use_embeddings": False}), LocalPipeline)
