"""RAIDER with retrieval at house scale, end to end in the local pipeline with the real
MiniLM model and the rules backend: on a sample of the dev benchmark at 1,000 objects the
verdicts in mode rag equal those in mode full (bench/bench_retrieval.py runs every case)."""
import json

import pytest

from raider_ros.common.paths import data_dir
from raider_ros.evaluation.cases import load_benchmark
from raider_ros.evaluation.local import LocalPipeline, make_pipeline
from raider_ros.evaluation.runner import Evaluator

DEV = data_dir() / "benchmark" / "dev"
# one case of every category and abstraction, from several scenes
SAMPLE = ["ki-03", "ki-06", "ki-07", "ki-08", "ki-12", "ki-14", "ki-16", "ki-23", "kf-16", "ho-01", "lr-11", "dr-21"]


@pytest.fixture(scope="module")
def bench():
    return load_benchmark(DEV)


@pytest.fixture(scope="module")
def rag_pipeline():
    return LocalPipeline(scale=1000, retrieval="rag")


def test_rag_verdicts_equal_full_verdicts_on_a_sample_at_1000_objects(bench, rag_pipeline):
    ev = Evaluator(rag_pipeline, progress=None)
    cases = [c for c in bench.cases if c.id in SAMPLE]
    assert len(cases) == len(SAMPLE)
    for case in cases:
        r = ev.run_case(bench, case)
        info = r.retrieval
        assert r.status == "ok", (case.id, r.error)
        assert 990 <= info["total_objects"] <= 1000          # case objects out of view are not in the graph
        assert info["agrees_with_full"], (case.id, r.reported_issue, info["full_verdict"])
        assert info["recall"], (case.id, info["missing"])
        assert info["scene_tokens"] * 10 <= info["full_scene_tokens"], case.id
        assert info["first_message_tokens"] < info["full_first_message_tokens"]
        assert r.expl, (case.id, r.explanation)


def test_the_first_message_and_the_whole_graph_tool(bench, rag_pipeline):
    case = next(c for c in bench.cases if c.id == "ki-06")
    rag_pipeline.prepare(bench.scenes[case.scene], case.setup)
    det = rag_pipeline._detector("household")
    res = det.run(case.query)
    first = res.transcript[1]["content"]
    assert first.startswith('Query: "pick(Mug)"') and "Objects in sight: " in first
    assert "Mug_1" in first and "Mug_2" in first and "Remembered objects out of sight: " in first
    assert "get_scene_graph()" in res.transcript[0]["content"]            # offered in mode rag
    answer = det.tools.call("get_scene_graph", [])
    assert answer.success and len(answer.data["remembered"]) > 900
    strict = rag_pipeline._detector("household", "rag-strict")
    assert strict.prompt.toolset.get("get_scene_graph") is None
    assert not strict.tools.call("get_scene_graph", []).success
    full = rag_pipeline._detector("household", "full").run(case.query)
    assert full.issue == res.issue == "ambiguity"
    assert len(full.transcript[1]["content"]) > 20 * len(first)


def test_recovery_context_and_report_fields(tmp_path):
    pipe = make_pipeline("rules", scale=300, retrieval="rag")
    bench = load_benchmark(DEV)
    report = Evaluator(pipe, progress=None).evaluate(bench, tmp_path, pattern="^ki-0[1-2]$")
    assert report["retrieval"]["cases"] == 2 and report["retrieval"]["agreement_with_full"] == 1.0
    row = json.loads((tmp_path / "report.json").read_text())["results"][0]["retrieval"]
    assert {"scene_tokens", "first_message_tokens", "conversation_tokens", "needed", "recall", "agrees_with_full"} <= set(row)
    rec = pipe.plan_recovery("pick(Mug)", "ambiguity", "There are two mugs, Mug_1 and Mug_2.", None, ["Mug_1", "Mug_2"])
    assert rec.status == "ok" and rec.steps


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="unknown retrieval mode 'everything'"):
        LocalPipeline(retrieval="everything")
    with pytest.raises(ValueError, match="scale must be"):
        LocalPipeline(scale=-3)


def test_a_house_of_10000_objects_loads_renders_and_answers(tmp_path):
    """A house file of 10,000 objects: loaded, its view rendered and perceived, the rest
    remembered, tools and retrieval answer (within the detector's time limit, by far)."""
    import time

    from raider_ros.perception.pipeline import PerceptionPipeline
    from raider_ros.perception.provider import TruthProvider
    from raider_ros.perception.scene_graph import SceneGraph
    from raider_ros.perception.toolbox import ToolBox
    from raider_ros.retrieval import Retriever
    from raider_ros.sim.house import dump_house, generate_house, load_house, memory_entries
    from raider_ros.sim.world import SimWorld

    path = tmp_path / "house.scene.yaml"
    dump_house(generate_house(10000, seed=4), path)
    t0 = time.monotonic()
    house = load_house(path)
    world = SimWorld()
    world.load(house.view())
    frame = world.frame()
    provider = TruthProvider(world.truth())
    r = world.scene.robot
    graph = SceneGraph()
    graph.remember(memory_entries(house))
    graph.update(PerceptionPipeline("sim").process(frame.rgb, frame.depth, frame.instance, frame.labels,
                                                   frame.camera, robot_xy=(r.x, r.y)), provider)
    tools = ToolBox(graph, provider)
    seen = tools.call("object_detection", [], deadline=time.monotonic() + 20)
    assert seen.success and seen.data and set(seen.data) <= {o.id for o in house.view().objects}
    state = tools.call("get_obj_state", [seen.data[0]], deadline=time.monotonic() + 20)
    assert state.success, state.error
    far = next(m["id"] for m in memory_entries(house))
    gone = tools.call("dist_to_target", [far], deadline=time.monotonic() + 20)
    assert not gone.success and "not currently visible" in gone.error
    retriever = Retriever(graph)
    retriever.sync()                           # the index follows the graph (embeds the labels once)
    t1 = time.monotonic()
    sub = retriever.retrieve(f"pick up the {seen.data[0].rsplit('_', 1)[0]}")
    assert seen.data[0] in sub.nodes and sub.total_objects >= 9900
    assert time.monotonic() - t1 < 10          # a check's time limit is 20 s
    assert time.monotonic() - t0 < 300
