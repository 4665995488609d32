"""Fakes shared by the rules reasoner's unit tests: a Grounder over a plain pool of ids with an
empty conversation, and get_obj_properties answers with measured colours."""
from __future__ import annotations

import time
from functools import lru_cache
from types import SimpleNamespace

from raider_ros.agent.backends.rules.grounding import Grounder, Pool
from raider_ros.agent.backends.rules.transcript import Observations, read_conversation


def grounder(kb, ids, people=None, obs=None) -> Grounder:
    """A Grounder for the objects ``ids`` (and ``people``: id -> recognised name); ``obs``
    replaces its observations (a fake answering perception tools)."""
    conv = read_conversation([{"role": "system", "content": ""}, {"role": "user", "content": "Query: x"}])
    g = Grounder(Observations(conv), kb, Pool(list(ids), None, dict(people or {})), deadline=time.monotonic() + 60)
    if obs is not None:
        g.obs = obs
    return g


class Props:
    """get_obj_properties answers: id -> (colour name, measured RGB)."""

    def __init__(self, seen):
        self.seen = seen

    def get(self, tool, obj):
        colour, rgb = self.seen[obj]
        return SimpleNamespace(pending=False, ok=True, data={"object": obj, "colour": colour, "rgb": rgb})


def edited_knowledge(tmp_path, file_name: str, old: str, new: str):
    """A copy of data/knowledge in ``tmp_path`` with ``old`` replaced by ``new`` (once) in
    ``file_name``; the path, for load_knowledge (a test of a knowledge file's checks)."""
    from raider_ros.common.paths import data_dir
    for f in (data_dir() / "knowledge").iterdir():
        if f.is_file():
            (tmp_path / f.name).write_bytes(f.read_bytes())
    target = tmp_path / file_name
    text = target.read_text()
    assert old in text, f"{file_name} no longer holds {old!r}"
    target.write_text(text.replace(old, new, 1))
    return str(tmp_path)


@lru_cache(maxsize=1)
def dev_benchmark():
    """data/benchmark/dev, loaded once for all the rules test files."""
    from raider_ros.common.paths import data_dir
    from raider_ros.evaluation.cases import load_benchmark
    return load_benchmark(data_dir() / "benchmark" / "dev")


def assert_case_right(reasoner, case, bench=None, toolset: str | None = None) -> None:
    """Run a benchmark case through the real program flow manager, tools answering from the
    scene's true geometry, and assert Det, Grnd (where labelled) and Expl."""
    from raider_ros.agent.flow import ProgramFlowManager
    from raider_ros.agent.prompt import IssuePrompt
    from raider_ros.evaluation.scoring import score_case
    from support.fake_tools import SceneTools
    bench = bench or dev_benchmark()
    scene = bench.scene_for(case)
    prompt = IssuePrompt(toolset or str(case.extra.get("toolset") or "household"))
    res = ProgramFlowManager(reasoner, SceneTools(scene, prompt.toolset.names), prompt, time_limit_s=60.0).run(
        case.query, str(case.extra.get("context") or "") or None)
    s = score_case(case, res.issue, res.explanation, res.grounding, scene)
    assert s.det and s.grnd is not False and s.expl, (res.issue, res.grounding, res.explanation)


def assert_dev_case_right(reasoner, case_id: str) -> None:
    """assert_case_right for the dev case with this id."""
    assert_case_right(reasoner, next(c for c in dev_benchmark().cases if c.id == case_id))
