"""The rules backend (no LLM) on benchmark cases: Det / Grnd / Expl and its own speed.

Cases: the shared kitchen examples (shared/benchmark/examples, 10 cases), the rules test
scenes (test/data/rules: every category with both query types and all abstractions, and the
assistive plan of the paper's appendix D) and the project benchmark (data/benchmark). Each
case runs through the program flow manager twice: with tools answering from the scene's true
geometry (test/support/fake_tools) and with the real perception tools (render -> pipeline ->
scene graph -> ToolBox). Figures per set: ``rules_<det|grnd|expl>_<set>_<truth|perception>``.

``rules_ms_per_turn_*`` time the reasoner's own ``complete`` calls (re-reading the whole
conversation each turn); ``rules_case_s_*`` the whole run of a case with truth tools.
The embedding fallback is off here (its model load would dominate the timings).

Run: ``python bench/bench_rules_reasoner.py``; prints the figures and writes
bench/results/rules_reasoner.json.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

from raider_ros.agent.flow import ProgramFlowManager  # noqa: E402
from raider_ros.agent.prompt import IssuePrompt  # noqa: E402
from raider_ros.agent.backends.rules import RulesReasoner  # noqa: E402
from raider_ros.sim.render import render  # noqa: E402
from raider_ros.evaluation.cases import load_benchmark  # noqa: E402
from raider_ros.evaluation.scoring import score_case  # noqa: E402
from raider_ros.perception.pipeline import PerceptionPipeline  # noqa: E402
from raider_ros.perception.provider import TruthProvider  # noqa: E402
from raider_ros.perception.scene_graph import SceneGraph  # noqa: E402
from raider_ros.perception.toolbox import ToolBox  # noqa: E402
from support.fake_tools import SceneTools  # noqa: E402
from figures import shared_examples, write_figures  # noqa: E402

SETS = {**({"examples": shared_examples()} if shared_examples() else {}),
        "rules": ROOT / "test" / "data" / "rules",
        "project": ROOT / "data" / "benchmark" / "dev"}


class Timed:
    """The reasoner, with the time of every ``complete`` call recorded."""

    def __init__(self, inner):
        self.inner, self.name, self.ms = inner, inner.name, []

    def complete(self, messages, *, deadline):
        t0 = time.perf_counter()
        try:
            return self.inner.complete(messages, deadline=deadline)
        finally:
            self.ms.append((time.perf_counter() - t0) * 1e3)


def perception_tools(scene):
    frame = render(scene)
    res = PerceptionPipeline("sim").process(frame.rgb, frame.depth, frame.instance, frame.labels, frame.camera,
                                            robot_xy=(scene.robot.x, scene.robot.y))
    provider = TruthProvider.from_scene(scene)
    graph = SceneGraph()
    graph.update(res, provider)
    return ToolBox(graph, provider)


def main() -> None:
    llm = Timed(RulesReasoner(use_embeddings=False))
    rows = []
    for set_name, directory in SETS.items():
        if not directory.is_dir():
            print(f"  no {set_name} cases at {directory}")
            continue
        bench = load_benchmark(directory)
        for case in bench.cases:
            scene = bench.scene_for(case)
            prompt = IssuePrompt(str(case.extra.get("toolset", "household")))
            for tools_name, tools in (("truth", SceneTools(scene, prompt.toolset.names)),
                                      ("perception", perception_tools(scene))):
                t0 = time.perf_counter()
                r = ProgramFlowManager(llm, tools, prompt, time_limit_s=30.0).run(case.query, case.extra.get("context"))
                dt = time.perf_counter() - t0
                s = score_case(case, r.issue, r.explanation, r.grounding, scene)
                rows.append({"set": set_name, "tools": tools_name, "id": case.id, "det": s.det, "grnd": s.grnd,
                             "expl": s.expl, "s": dt, "turns": r.llm_turns, "calls": len(r.tool_calls)})
                if not (s.det and s.expl and s.grnd is not False):
                    print(f"  miss {tools_name} {case.id} ({case.category}, expected {case.expected_issue}): "
                          f"{r.issue} {r.grounding} {r.explanation}")

    def rate(key, sel):
        vals = [r[key] for r in rows if sel(r) and r[key] is not None]
        return round(float(np.mean(vals)), 4) if vals else None

    figures: dict[str, float] = {}
    for tools_name in ("truth", "perception"):
        for scope in SETS:
            def f(r, t=tools_name, s=scope):
                return r["tools"] == t and r["set"] == s
            for key in ("det", "grnd", "expl"):
                figures[f"rules_{key}_{scope}_{tools_name}"] = rate(key, f)
    truth = [r for r in rows if r["tools"] == "truth"]
    figures.update({
        "rules_ms_per_turn_mean": round(float(np.mean(llm.ms)), 3),
        "rules_ms_per_turn_p95": round(float(np.percentile(llm.ms, 95)), 3),
        "rules_case_s_mean": round(float(np.mean([r["s"] for r in truth])), 4),
        "rules_case_s_p95": round(float(np.percentile([r["s"] for r in truth], 95)), 4),
        "rules_turns_mean": round(float(np.mean([r["turns"] for r in truth])), 3),
        "rules_tool_calls_mean": round(float(np.mean([r["calls"] for r in truth])), 3),
        **{f"cases_{scope}": float(sum(1 for r in truth if r["set"] == scope)) for scope in SETS},
    })
    write_figures("rules_reasoner", figures)


if __name__ == "__main__":
    main()
