"""Agent overhead: the share of a run not spent waiting for the LLM, at 200 objects.

The scripted backend answers every turn after ``--llm-delay`` seconds (1 s by default) with a
realistic four-turn conversation (detection, then four checks on one object run concurrently,
then two relation queries, then the final response). The tools are the real
``perception.tools.ToolBox`` over a 200-object scene graph (199 objects on a counter with
point clouds, 2 people, ~4000 relations); if that module cannot be imported, a dict-backed
fake world of 200 objects stands in (``toolbox_real`` = 0).

Everything but the LLM's own reply time counts as overhead: prompt and message handling,
parsing, token estimates (no usage from the scripted backend, so tiktoken counts every
message), thread hand-offs, the tools and their events.

Run: ``python bench/bench_agent_overhead.py [--runs N] [--llm-delay S]``; prints the figures and
writes bench/results/agent_overhead.json. Target: agent_overhead_fraction_200_objects <= 0.05.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from raider_ros.agent.backends.scripted import ScriptedLLM  # noqa: E402
from raider_ros.agent.flow import ProgramFlowManager  # noqa: E402
from raider_ros.agent.prompt import IssuePrompt  # noqa: E402
from raider_ros.common.token_count import count_tokens  # noqa: E402
from raider_ros.common.tool_contract import FunctionTools, ToolFailure  # noqa: E402
from figures import write_figures  # noqa: E402

N_OBJECTS = 200
TYPES = ["Apple", "Mug", "Bowl", "Knife", "Plate", "Cup", "Pan", "Egg", "Bread", "Tomato"]
QUERY = "pick the clean mug to the right of the bowl"
TURNS = [
    'Step 1 - GROUND: I need the objects in view and what the robot holds.\n'
    'call_tool{"tool": "object_detection", "args": []}\ncall_tool{"tool": "robot_holding", "args": []}',
    'Step 1 - GROUND: Mug_3 lies right of Bowl_2.\nStep 2 - ASK: Is Mug_3 reachable, clean, pickupable, unobstructed?\n'
    'Step 3 - ANSWER:\ncall_tool{"tool": "dist_to_target", "args": ["Mug_3"]}\n'
    'call_tool{"tool": "get_obj_state", "args": ["Mug_3"]}\n'
    'call_tool{"tool": "get_obj_properties", "args": ["Mug_3"]}\n'
    'call_tool{"tool": "check_obj_relationship", "args": ["blocking", "Mug_3"]}',
    'Step 3 - ANSWER: checking what lies on and around the mug.\n'
    'call_tool{"tool": "check_obj_relationship", "args": ["on the right of", "Bowl_2"]}\n'
    'call_tool{"tool": "check_obj_relationship", "args": ["on top of", "Mug_3"]}',
    'Step 4 - ISSUE:\n{"final_response": "none", "explanation": "Mug_3 is clean, within reach and free.", '
    '"grounding": ["Mug_3"]}',
]


class TimedLLM:
    """Wraps the scripted backend and adds up the time spent inside its replies."""

    def __init__(self, inner: ScriptedLLM):
        self.inner, self.name, self.busy_s = inner, inner.name, 0.0

    def complete(self, messages, *, deadline):
        t0 = time.perf_counter()
        try:
            return self.inner.complete(messages, deadline=deadline)
        finally:
            self.busy_s += time.perf_counter() - t0


@dataclass
class _Result:
    objects: dict = field(default_factory=dict)
    relations: list = field(default_factory=list)


def real_toolbox():
    """ToolBox over a 200-object scene graph, or None when perception is not importable."""
    try:
        from raider_ros.perception.provider import TruthProvider
        from raider_ros.perception.scene_graph import SceneGraph
        from raider_ros.perception.toolbox import ToolBox
        from raider_ros.perception.types import PerceivedObject, Relation
        from raider_ros.common.vocabulary import RELATIONS
    except ImportError as e:
        print(f"perception ToolBox not available ({e}); using the fake world")
        return None
    rng = np.random.default_rng(0)

    def obj(name, label, center, size, person=False, n=400):
        c, s = np.asarray(center, float), np.asarray(size, float)
        pts = c + (rng.random((n, 3)) - 0.5) * s
        d = float(np.min(np.linalg.norm(pts - [0, 0, 1.3], axis=1)))
        return PerceivedObject(name, label, pts, pts.min(0), pts.max(0), d, n, (0, 0, 1, 1), n, is_person=person)

    objs = [obj("CounterTop_1", "CounterTop", [2.5, 0.0, 0.45], [4.0, 4.0, 0.9], n=3000)]
    for i in range(N_OBJECTS - 1):
        t = TYPES[i % len(TYPES)]
        objs.append(obj(f"{t}_{i // len(TYPES) + 1}", t, [0.6 + (i % 14) * 0.25, -1.8 + (i // 14) * 0.25, 0.95],
                        [0.08, 0.08, 0.1]))
    objs += [obj("Person_1", "Person", [1.0, -2.5, 0.85], [0.45, 0.35, 1.7], True),
             obj("Person_2", "Person", [3.5, 2.5, 0.85], [0.45, 0.35, 1.7], True)]
    names = [o.name for o in objs]
    rels = []
    for _ in range(20 * N_OBJECTS):
        a, b = rng.choice(len(names), 2, replace=False)
        rels.append(Relation(names[a], RELATIONS[int(rng.integers(len(RELATIONS)))], names[b], {"gap_m": 0.1}))
    truth = {"name": "bench", "robot": {"pose": [0, 0, 0], "reach": 1.1, "holding": None},
             "objects": [{"id": o.name, "type": o.label, "properties": ["pickupable", "dirtyable"],
                          "state": {"clean": True}} for o in objs if not o.is_person],
             "people": [{"id": "Person_1", "name": "Adriana", "state": {"looking_at_robot": True, "hands_free": True}},
                        {"id": "Person_2", "name": None, "state": {}}]}
    provider = TruthProvider(truth)
    graph = SceneGraph()
    graph.update(_Result({o.name: o for o in objs}, rels), provider, stamp=0.0)
    return ToolBox(graph, provider)


def fake_tools() -> FunctionTools:
    ids = [f"{TYPES[i % len(TYPES)]}_{i // len(TYPES) + 1}" for i in range(N_OBJECTS)]
    dist = {o: 0.5 + (i % 17) * 0.1 for i, o in enumerate(ids)}
    rels = [(ids[i], r, ids[(i * 7 + 3) % N_OBJECTS]) for i in range(N_OBJECTS)
            for r in ("near", "on the right of", "blocking", "on top of")]

    def known(o):
        if o not in dist:
            raise ToolFailure(f"{o} not found", {"error": "not found", "closest": []})
        return o
    return FunctionTools({
        "object_detection": lambda: ids,
        "robot_holding": lambda: None,
        "dist_to_target": lambda t: {"target": known(t), "distance_m": dist[t], "reach_m": 1.1,
                                     "within_reach": dist[t] <= 1.1},
        "get_obj_state": lambda o: {"object": known(o), "state": {"clean": True}},
        "get_obj_properties": lambda o: {"object": known(o), "properties": ["pickupable", "dirtyable"]},
        "check_obj_relationship": lambda r, o: {"relationship": r, "object": known(o),
                                                "related": [s for s, rr, t in rels if rr == r and t == o]},
    })


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--llm-delay", type=float, default=1.0)
    a = ap.parse_args()

    t0 = time.perf_counter()
    count_tokens("warm up")                        # the agent node loads the encoding once at start
    encoding_load_s = time.perf_counter() - t0
    tools = real_toolbox()
    real = tools is not None
    tools = tools or fake_tools()
    llm = TimedLLM(ScriptedLLM({"scripts": [{"query": QUERY, "turns": TURNS}]}, delay_s=a.llm_delay))
    pfm = ProgramFlowManager(llm, tools, IssuePrompt("household"), time_limit_s=20.0)

    fractions, overhead_ms, tool_ms, turns, calls, tokens = [], [], [], [], [], []
    for _ in range(a.runs):
        llm.busy_s = 0.0
        res = pfm.run(QUERY)
        if res.status != "ok" or res.issue != "none":
            raise SystemExit(f"bench run failed: {res.status} {res.error} {res.issue}")
        non_llm = res.elapsed_s - llm.busy_s
        fractions.append(non_llm / res.elapsed_s)
        overhead_ms.append(non_llm * 1000.0)
        tool_ms.append(sum(c.duration_s for c in res.tool_calls) * 1000.0)
        turns.append(res.llm_turns)
        calls.append(len(res.tool_calls))
        tokens.append(res.prompt_tokens)

    figures = {
        "agent_overhead_fraction_200_objects": max(fractions),
        "agent_overhead_fraction_200_objects_median": statistics.median(fractions),
        "agent_non_llm_ms_per_run": statistics.median(overhead_ms),
        "agent_non_llm_ms_per_turn": statistics.median(overhead_ms) / turns[0],
        "agent_tool_ms_per_run": statistics.median(tool_ms),
        "agent_llm_turns": turns[0],
        "agent_tool_calls": calls[0],
        "agent_prompt_tokens_estimated": tokens[0],
        "llm_delay_s": a.llm_delay,
        "objects": N_OBJECTS,
        "toolbox_real": int(real),
        "token_encoding_load_s": encoding_load_s,
        "runs": a.runs,
    }
    figures = {k: round(float(v), 5) for k, v in figures.items()}
    write_figures("agent_overhead", figures)


if __name__ == "__main__":
    main()
