"""The learning benchmark's data: both triple files load, every id a request names exists in
its world, and every reference plan reaches its request's goal in the simulator (so a triple
can be solved), run with the real plan interpreter and skills, the person answering."""
from __future__ import annotations

import pytest

from raider_ros.memory.benchmark import (
    Bench, BenchmarkError, benchmark_dir, goal_failures, load_triples,
)
from raider_ros.memory.adapt import SceneIndex
from raider_ros.memory.runner import PlanRunner
from raider_ros.memory.tasks import TaskRequest
from raider_ros.recovery.plan import parse_plan

SETS = {name: load_triples(benchmark_dir() / f"{name}.triples.yaml")[1] for name in ("dev", "heldout")}
ALL = [(name, t) for name, ts in SETS.items() for t in ts]


def test_sets_are_large_enough_and_distinct():
    assert len(SETS["dev"]) >= 10 and len(SETS["heldout"]) >= 5
    assert not {t.id for t in SETS["dev"]} & {t.id for t in SETS["heldout"]}


@pytest.mark.parametrize("name, triple", ALL, ids=[f"{n}/{t.id}" for n, t in ALL])
def test_triple_is_well_formed_and_solvable(name, triple):
    bench = Bench(encoder=object())           # no memory is made here
    for kind in ("teach", "similar", "dissimilar"):
        req = getattr(triple, kind)
        world = bench.world(triple, req)
        scene = SceneIndex.from_scene(world.scene)
        for role, thing in req.roles.items():
            assert thing in scene.things, f"{kind}.roles.{role}: {thing} is not in {triple.scene}"
        for thing in [*(req.goal.get("state") or {}), *(x for pair in req.goal.get("handed_over") or [] for x in pair)]:
            assert thing in scene.things, f"{kind}.goal names {thing}, not in {triple.scene}"
        if req.reference is None:
            continue
        human = bench.person(triple, world)
        it = PlanRunner(world, ask=human.ask, resolve_name=human.resolve_name).run(
            TaskRequest(req.say, req.task, req.roles), parse_plan(req.reference))
        assert it.success, f"{kind} reference: {it.reason}"
        goal = {k: v for k, v in req.goal.items() if k != "max_questions"}   # the reference may ask
        assert goal_failures(goal, it, world) == [], kind
    assert triple.teach.reference is not None


def test_bad_triple_files_name_the_field(tmp_path):
    f = tmp_path / "x.triples.yaml"
    f.write_text("format: raider-memory-benchmark/1\nset: x\ntriples:\n  - id: a\n    scene: kitchen\n"
                 "    teach: {say: hi, task: fetch, roles: {item: Apple_1}, goal: {holding: Apple_1}}\n"
                 "    similar: {say: hi, task: fetch, roles: {item: Apple_1}, goal: {holding: Apple_1}}\n"
                 "    dissimilar: {say: hi, task: fetch, roles: {item: Apple_1}, goal: {flying: true}}\n")
    with pytest.raises(BenchmarkError, match=r"triple a\.teach\.correction"):
        load_triples(f)
    f.write_text(f.read_text().replace("goal: {holding: Apple_1}}\n    similar", "goal: {holding: Apple_1}, "
                                       "correction: next time}\n    similar"))
    with pytest.raises(BenchmarkError, match=r"triple a\.dissimilar\.goal\.flying"):
        load_triples(f)
