"""The project benchmark (data/benchmark): each set (dev/, the set the rules reasoner was tuned
on, and heldout/, written before any change it measures) loads cleanly, covers every category,
and every label that rests on geometry holds on the oracle with a clear margin. The same rules
apply to both sets; only the coverage minimums differ (``SETS``). The two sets may be run
together, so their scene names and case ids must not clash. The label and interpenetration
checks also run on the test suite's own small benchmark (test/data/mini_benchmark, used by
the evaluator and command-line tests).

Rules checked per case (docs/benchmark-format.md, "The project benchmark"):

* grounded targets exist, are visible (>= 100 pixels; >= 50 for IU2) and are never in the
  band between "clearly within reach" (<= reach - 0.10 m) and "clearly out of reach"
  (>= reach + 0.20 m); IU1 cases have a target out of reach, IA candidates may be out of
  reach (the ambiguity comes first), all other categories have every target within reach;
* IU2 cases: something blocks the first target; all other cases: nothing blocks any target.
  Objects standing on a piece of furniture (a receptacle that is not pickupable: a table, a
  counter, a nightstand) do not count as blocking it; anything else that hides >= 20 % of a
  target does, even if it stands on the target (a pan on a stove burner blocks the burner).
  No blocking answer about a target may be borderline;
* the optional ``geometry`` facts of a case hold (or, prefixed with ``not``, do not hold) on
  the oracle, never on a borderline; every AR case states which entities of the kind it
  names stand in its relation (``only A, B <relation> C among <kinds>``), so no other object
  of that kind satisfies the relation and none is borderline;
* IU3 cases name something absent: no entity's type or name matches the first mention group;
* QS queries name types or ids that exist (except IU3); IA cases list >= 2 candidates;
* no two solid entities interpenetrate (after the setup).
"""
from __future__ import annotations

import json
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from raider_ros.common.paths import data_dir
from raider_ros.sim.render import visible_pixel_counts
from raider_ros.sim.scene import Person, SceneObject
from raider_ros.evaluation.cases import ABSTRACTIONS, CATEGORIES, QUERY_TYPES, Case, load_benchmark
from raider_ros.evaluation.stem import stem_key, text_forms
from raider_ros.perception.oracle import OracleGeometry, carries
from raider_ros.common.vocabulary import RELATIONS

# Coverage minimums per set: scenes, cases, cases per category, cases per abstraction.
SETS = {
    "dev": {"scenes": 10, "cases": 130, "per_category": 10, "per_abstraction": 8},
    "heldout": {"scenes": 5, "cases": 120, "per_category": 8, "per_abstraction": 8},
}
BENCHES = {name: load_benchmark(data_dir() / "benchmark" / name) for name in SETS}
MINI_DIR = Path(__file__).resolve().parents[1] / "data" / "mini_benchmark"
LABELLED = {**BENCHES, "mini": load_benchmark(MINI_DIR)}       # label checks run on all three
CASES = {(name, c.id): c for name, bench in LABELLED.items() for c in bench.cases}
NEAR_MARGIN, FAR_MARGIN = 0.10, 0.20
MIN_PIXELS, MIN_PIXELS_BLOCKED = 100, 50


@pytest.mark.parametrize("name", sorted(LABELLED))
def test_directory_loads_without_errors_or_warnings(name):
    bench = LABELLED[name]
    assert [str(e) for e in bench.errors] == []
    assert [str(w) for w in bench.warnings] == []


@pytest.mark.parametrize("name", sorted(SETS))
def test_coverage(name):
    bench, need = BENCHES[name], SETS[name]
    assert len(bench.scenes) >= need["scenes"]
    assert len(bench.cases) >= need["cases"]
    by_cat = Counter(c.category for c in bench.cases)
    assert {c: by_cat[c] for c in CATEGORIES if by_cat[c] < need["per_category"]} == {}
    assert set(c.query_type for c in bench.cases) == set(QUERY_TYPES)
    by_abs = Counter(c.abstraction for c in bench.cases)
    assert {a: by_abs[a] for a in ABSTRACTIONS if by_abs[a] < need["per_abstraction"]} == {}
    actions = Counter(re.match(r"\s*(\w+)\(", c.query).group(1) for c in bench.cases if c.query_type == "QS")
    assert {"pick", "place", "open", "close", "turn_on", "turn_off", "slice"} <= set(actions)
    assert any("hand" in c.query.lower() or "give" in c.query.lower() for c in bench.cases)
    for scene in bench.scenes.values():
        assert 8 <= len(scene.objects) <= 25, scene.name
    used = Counter(c.scene for c in bench.cases)
    assert all(used[scene] >= 10 for scene in bench.scenes), used


def test_sets_do_not_clash():
    """Scene names and case ids are unique over all sets, so they can be evaluated together."""
    names = Counter(s for bench in BENCHES.values() for s in bench.scenes)
    ids = Counter(c.id for bench in BENCHES.values() for c in bench.cases)
    assert [n for n, k in names.items() if k > 1] == []
    assert [i for i, k in ids.items() if k > 1] == []


# --------------------------------------------------------------------------- oracle checks
@lru_cache(maxsize=None)
def _world(name: str, scene: str, setup_json: str):
    case_setup = json.loads(setup_json)
    world = LABELLED[name].scene_for(Case(id="-", scene=scene, query="-", query_type="QS", abstraction="AS",
                                         expected_issue="none", category="IN", setup=case_setup))
    geo = OracleGeometry(world)
    return world, geo, visible_pixel_counts(geo.frame)


def _world_of(name: str, case: Case):
    return _world(name, case.scene, json.dumps(case.setup, sort_keys=True))


def _blockers(geo: OracleGeometry, target: str, skip_carried: bool) -> tuple[list[str], list[str]]:
    """(entities blocking ``target``, entities whose answer about it is borderline)."""
    blocking, borderline = [], []
    t_lo, t_hi = geo.boxes[target]
    for a in geo.entities:
        if a == target or (skip_carried and carries(t_lo, t_hi, *geo.boxes[a])):
            continue
        ans = geo.answer(a, "blocking", target)
        if ans.borderline:
            borderline.append(f"{a} {ans.evidence}")
        elif ans.holds:
            blocking.append(a)
    return blocking, borderline


_REL = "|".join(sorted(RELATIONS, key=len, reverse=True))
_FACT = re.compile(r"^(not\s+)?(\S+)\s+(" + _REL + r")\s+(\S+)$")
_ONLY = re.compile(r"^only\s+(.+?)\s+(" + _REL + r")\s+(\S+)\s+among\s+(.+)$")


def _check_fact(geo: OracleGeometry, text: str) -> str | None:
    """None when the fact holds clearly, else what is wrong. Facts:
    ``A <relation> B``, ``not A <relation> B``, and ``only A, B <relation> C among <kinds>``
    where kinds are type names, ``objects`` (every object) or ``*`` (objects and people):
    exactly the listed entities of those kinds stand in the relation to C, none borderline."""
    text = text.strip()
    m = _ONLY.match(text)
    if m:
        listed = {x.strip() for x in m.group(1).split(",")}
        rel, ref = m.group(2), m.group(3)
        kinds = {k.strip() for k in m.group(4).split(",")}
        pool = [e for e, ent in geo.entities.items() if e != ref and (
            "*" in kinds or ("objects" in kinds and isinstance(ent, SceneObject)) or ent.type in kinds)]
        answers = {e: geo.answer(e, rel, ref) for e in pool}
        border = sorted(e for e, a in answers.items() if a.borderline)
        holding = {e for e, a in answers.items() if a.holds and not a.borderline}
        if border or holding != listed:
            return f"{text!r}: holds for {sorted(holding)}, borderline for {border}"
        return None
    m = _FACT.match(text)
    assert m, f"geometry fact {text!r} is not '[not] A <relation> B' or 'only A, B <relation> C among ...'"
    expected, a, rel, b = m.group(1) is None, m.group(2), m.group(3), m.group(4)
    ans = geo.answer(a, rel, b)
    if ans.borderline or ans.holds != expected:
        return f"{text!r}: holds={ans.holds} borderline={ans.borderline} {ans.evidence}"
    return None


def _names(world) -> set[str]:
    out = set()
    for e in world.entities:
        out |= {stem_key(e.type), stem_key(e.id)}
        if isinstance(e, Person) and e.name:
            out.add(stem_key(e.name))
    return out


@pytest.mark.parametrize("key", sorted(CASES), ids=lambda k: "/".join(k))
def test_case_labels_hold_on_the_oracle(key):
    case = CASES[key]
    world, geo, pixels = _world_of(key[0], case)
    reach = world.robot.reach
    problems: list[str] = []
    targets = [g for g in (case.grounding or ()) if g != world.robot.holding]

    for g in targets:
        if world.get(g) is None:
            problems.append(f"{g}: not in the world")
    targets = [g for g in targets if world.get(g) is not None]

    for g in targets:
        need = MIN_PIXELS_BLOCKED if case.category == "IU2" else MIN_PIXELS
        if pixels.get(g, 0) < need:
            problems.append(f"{g}: only {pixels.get(g, 0)} visible pixels")
        d = geo.distance(g)
        if reach - NEAR_MARGIN < d < reach + FAR_MARGIN:
            problems.append(f"{g}: distance {d:.2f} m is too close to the reach {reach} m")
        far = d >= reach + FAR_MARGIN
        if far and case.category not in ("IU1", "IA"):   # an ambiguity comes before reach
            problems.append(f"{g}: out of reach ({d:.2f} m) in a {case.category} case")
    if case.category == "IU1" and not any(geo.distance(g) >= reach + FAR_MARGIN for g in targets):
        problems.append("IU1 case without a target out of reach")

    for i, g in enumerate(targets):
        ent = world.get(g)
        support = isinstance(ent, SceneObject) and ent.has("receptacle") and not ent.has("pickupable")
        blocking, borderline = _blockers(geo, g, skip_carried=support)
        if borderline:
            problems.append(f"{g}: borderline blocking answers: {borderline}")
        if case.category == "IU2" and i == 0:
            if not blocking:
                problems.append(f"IU2 case but nothing blocks {g}")
        elif blocking:
            problems.append(f"{g} is blocked by {blocking} in a {case.category} case")

    for fact in case.extra.get("geometry", []) or []:
        wrong = _check_fact(geo, fact)
        if wrong:
            problems.append(f"geometry {wrong}")
    if case.abstraction == "AR" and not any(f.startswith("only ") for f in case.extra.get("geometry", []) or []):
        problems.append("AR case without an 'only ... among ...' geometry fact")

    if case.category == "IU3":
        assert not case.grounding, "IU3 cases name nothing that exists"
        absent = {stem_key(w) for w in case.mentions[0]}
        clash = absent & _names(world)
        if clash:
            problems.append(f"IU3 target words {sorted(clash)} match something in the world")
    if case.category == "IA" and len(case.grounding or ()) < 2:
        problems.append("IA case with fewer than two candidates")
    if case.query_type == "QS" and case.category != "IU3":
        m = re.match(r"^\s*(\w+)\((.*)\)\s*$", case.query)
        assert m, f"QS query {case.query!r} is not action(args)"
        forms = set().union(*(text_forms(e.type) | {stem_key(e.id)} for e in world.entities))
        held = world.get(world.robot.holding) if world.robot.holding else None
        for arg in filter(None, (a.strip() for a in m.group(2).split(","))):
            if stem_key(arg) not in forms and not (held and stem_key(arg) == stem_key(held.type)):
                problems.append(f"QS argument {arg!r} names nothing in the world")
    assert not problems, f"{case.id} ({case.source}):\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("key", sorted({(name, c.scene, json.dumps(c.setup, sort_keys=True))
                                        for (name, _), c in CASES.items()}),
                         ids=lambda k: f"{k[0]}/{k[1]}/{k[2]}")
def test_no_solid_entities_interpenetrate(key):
    world, geo, _ = _world(*key)
    ids = list(geo.entities)
    clashes = []
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            (alo, ahi), (blo, bhi) = geo.boxes[a], geo.boxes[b]
            overlap = np.clip(np.minimum(ahi, bhi) - np.maximum(alo, blo), 0, None)
            if float(np.prod(overlap)) <= 2e-5:
                continue
            if _contains(geo.entities[b], (alo, ahi), (blo, bhi)) or _contains(geo.entities[a], (blo, bhi), (alo, ahi)):
                continue
            clashes.append(f"{a} / {b}: {float(np.prod(overlap)) * 1e6:.0f} cm^3")
    assert not clashes, f"{world.name} {key[1]}: {clashes}"


def _contains(container, inner_box, outer_box) -> bool:
    """``inner_box`` lies in an open container or a box with a door."""
    if not isinstance(container, SceneObject) or not (container.open_top or container.door):
        return False
    c = (inner_box[0] + inner_box[1]) / 2
    return bool(np.all(c >= outer_box[0]) and np.all(c <= outer_box[1]))
