"""The rules reasoner end to end on benchmark cases: the scenes of test/data/rules (every
issue category with both query types and all four abstractions, plus the assistive plan of
the paper's appendix D), the suite's mini benchmark (test/data/mini_benchmark) and, when
they are beside the clone, the shared kitchen examples (skipped otherwise). Tools answer from the
scene's true geometry (support.fake_tools.SceneTools); the conversation runs through the
real program flow manager, and also through a minimal loop of our own. Finally the same
cases run against the real perception tools (render -> pipeline -> scene graph -> ToolBox)."""
from pathlib import Path

import pytest

from raider_ros.agent.flow import ProgramFlowManager
from raider_ros.agent.parsing import parse_reply
from raider_ros.agent.prompt import IssuePrompt
from raider_ros.agent.backends.rules import RulesReasoner
from raider_ros.sim.render import render
from raider_ros.evaluation.cases import ABSTRACTIONS, CATEGORIES, QUERY_TYPES, load_benchmark
from raider_ros.evaluation.scoring import score_case
from raider_ros.perception.pipeline import PerceptionPipeline
from raider_ros.perception.provider import TruthProvider
from raider_ros.perception.scene_graph import SceneGraph
from raider_ros.perception.toolbox import ToolBox
from support.fake_tools import SceneTools, drive
from support.shared import EXAMPLES, HAVE_SHARED, requires_shared

TEST_DATA = Path(__file__).resolve().parents[1] / "data"
OURS = TEST_DATA / "rules"
MINI = TEST_DATA / "mini_benchmark"
BENCHES = {"rules": load_benchmark(OURS), "mini": load_benchmark(MINI)}
if HAVE_SHARED:
    BENCHES["examples"] = load_benchmark(EXAMPLES)


def _params(names):
    """(bench name, case) parameters; without the shared examples one skipped stand-in for them."""
    out = [pytest.param(name, case, id=case.id) for name in names if name in BENCHES for case in BENCHES[name].cases]
    if "examples" in names and not HAVE_SHARED:
        out.append(pytest.param("examples", None, id="shared-examples", marks=requires_shared))
    return out


CASES = _params(["examples", "rules", "mini"])


@pytest.fixture(scope="module")
def reasoner():
    return RulesReasoner(use_embeddings=False)


def _setup(bench_name, case):
    bench = BENCHES[bench_name]
    scene = bench.scene_for(case)
    prompt = IssuePrompt(str(case.extra.get("toolset", "household")))
    return scene, prompt, SceneTools(scene, prompt.toolset.names)


def _transcript(messages) -> str:
    return "\n".join(f"[{m['role']}] {m['content']}" for m in messages[1:])


def test_benchmarks_load_cleanly():
    for name, bench in BENCHES.items():
        assert not bench.errors, (name, [str(e) for e in bench.errors])
    assert len(BENCHES["mini"].cases) == 10


@requires_shared
def test_shared_examples_load():
    assert len(BENCHES["examples"].cases) == 10


def test_our_cases_cover_every_category_with_both_query_types_and_all_abstractions():
    cases = BENCHES["rules"].cases
    for cat in CATEGORIES:
        assert {c.query_type for c in cases if c.category == cat} == set(QUERY_TYPES), cat
        assert {c.abstraction for c in cases if c.category == cat} == set(ABSTRACTIONS), cat


@pytest.mark.parametrize("bench_name, case", CASES)
def test_case_through_the_flow_manager(reasoner, bench_name, case):
    scene, prompt, tools = _setup(bench_name, case)
    pfm = ProgramFlowManager(reasoner, tools, prompt, time_limit_s=30.0)
    res = pfm.run(case.query, case.extra.get("context"))
    assert res.status == "ok", res.error
    assert not res.warnings, [w.message for w in res.warnings]
    s = score_case(case, res.issue, res.explanation, res.grounding, scene)
    why = f"{case.id}: {res.issue} {res.grounding} {res.explanation!r}\n{_transcript(res.transcript)}"
    assert s.det, why
    assert s.grnd is not False, why
    assert s.expl, f"missed {s.missed_mentions}: {why}"
    # every turn announces its procedure step; the tools are asked only what the prompt offers
    stages = [st for m in res.transcript if m["role"] == "assistant" for st, _ in parse_reply(m["content"]).stages]
    assert stages[0] == "ground" and stages[-1] == "issue"
    assert {c.name for c in res.tool_calls} <= set(prompt.toolset.names)
    assert res.llm_turns <= 5 and len(res.tool_calls) <= 12


@pytest.mark.parametrize("bench_name, case", _params(["examples", "mini"]))
def test_example_case_through_a_minimal_loop(reasoner, bench_name, case):
    scene, prompt, tools = _setup(bench_name, case)
    final, messages = drive(reasoner, tools, prompt.system, prompt.user_message(case.query))
    assert final is not None, _transcript(messages)
    s = score_case(case, final["issue"], final["explanation"], final["grounding"], scene)
    assert s.det and s.grnd is not False and s.expl, (final, _transcript(messages))


@pytest.mark.parametrize("bench_name, case", CASES)
def test_case_with_the_real_perception_tools(reasoner, bench_name, case):
    scene = BENCHES[bench_name].scene_for(case)
    frame = render(scene)
    perceived = PerceptionPipeline("sim").process(frame.rgb, frame.depth, frame.instance, frame.labels,
                                                  frame.camera, robot_xy=(scene.robot.x, scene.robot.y))
    provider = TruthProvider.from_scene(scene)
    graph = SceneGraph()
    graph.update(perceived, provider)
    prompt = IssuePrompt(str(case.extra.get("toolset", "household")))
    res = ProgramFlowManager(reasoner, ToolBox(graph, provider), prompt, time_limit_s=30.0).run(
        case.query, case.extra.get("context"))
    s = score_case(case, res.issue, res.explanation, res.grounding, scene)
    assert s.det and s.grnd is not False and s.expl, \
        f"{case.id}: {res.issue} {res.grounding} {res.explanation!r}\n{_transcript(res.transcript)}"
