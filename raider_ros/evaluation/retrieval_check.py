"""Scoring retrieval on benchmark cases (docs/retrieval.md "Evaluation").

:func:`needed_objects`: what a case's verdict rests on, so what a retrieved subgraph must hold:
the expected grounding (for an ambiguity, every candidate), the entities of the case's
``geometry`` facts (the relations its label rests on), for an obstruction (IU2) whatever the
oracle finds blocking a grounded target, and for a case about the robot itself (IU6) the
object in its gripper. Recall is per case: every needed object is in the subgraph.

Retrieval can only return what the scene graph holds. A needed object that perception never
saw (a stool on the floor right in front of the robot, below the camera's view) is missing from
every subgraph, the whole graph included: such objects are listed as ``unperceived`` and
counted apart. ``recall`` is over the needed objects the graph holds (what retrieval is
answerable for); ``recall_incl_unperceived`` counts every needed object, as the first figures
did. Both are reported.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

import numpy as np

from raider_ros.sim.scene import Scene

from .cases import Case

_ID = re.compile(r"[A-Za-z][A-Za-z0-9]*_\d+")


def needed_objects(case: Case, world: Scene) -> list[str]:
    ids = {e.id for e in world.entities}
    need: list[str] = [g for g in (case.grounding or ()) if g in ids]
    for fact in case.extra.get("geometry") or ():
        need += [t for t in _ID.findall(str(fact)) if t in ids]
    if case.category == "IU2":
        from raider_ros.perception.oracle import oracle_relation
        for target in list(case.grounding or ()):
            if target not in ids or target == world.robot.holding:
                continue
            for e in world.entities:
                if e.id not in (target, world.robot.holding) and oracle_relation(world, e.id, "blocking", target):
                    need.append(e.id)
    if case.category == "IU6" and world.robot.holding:
        need.append(world.robot.holding)
    return list(dict.fromkeys(need))


def score_retrieval(case: Case, world: Scene, info: dict[str, Any]) -> dict[str, Any]:
    """The per-case retrieval row of report.json: ``info`` as the pipeline reported it, plus
    the needed objects, those missing from the subgraph and whether recall holds."""
    retrieved = set(info.get("retrieved") or [])
    need = needed_objects(case, world)
    out = dict(info)
    graph = out.pop("graph_ids", None)
    held = set(graph) if graph is not None else None
    unperceived = [i for i in need if held is not None and i not in held and i not in retrieved]
    missing = [i for i in need if i not in retrieved and i not in unperceived]
    out.update(needed=need, missing=missing, unperceived=unperceived, recall=not missing,
               recall_incl_unperceived=not missing and not unperceived)
    return out


def summarize_retrieval(rows: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Overall figures over the cases' retrieval rows (None when no case retrieved)."""
    rows = [r for r in rows if r]
    if not rows:
        return None

    def mean(key: str) -> float | None:
        vals = [float(r[key]) for r in rows if r.get(key) is not None]
        return float(np.mean(vals)) if vals else None

    with_need = [r for r in rows if r.get("needed")]
    agree = [bool(r["agrees_with_full"]) for r in rows if r.get("agrees_with_full") is not None]
    ms = [float(r["retrieve_ms"]) for r in rows if r.get("retrieve_ms") is not None]
    full_tokens = [float(r["full_scene_tokens"]) for r in rows if r.get("full_scene_tokens")]
    ratio = [float(r["full_scene_tokens"]) / max(1.0, float(r["scene_tokens"])) for r in rows
             if r.get("full_scene_tokens") and r.get("scene_tokens")]
    return {
        "mode": rows[0].get("mode"), "cases": len(rows), "total_objects_mean": mean("total_objects"),
        "recall": sum(1 for r in with_need if r["recall"]) / len(with_need) if with_need else None,
        "recall_incl_unperceived": sum(1 for r in with_need if r.get("recall_incl_unperceived", r["recall"]))
        / len(with_need) if with_need else None,
        "recall_cases": len(with_need),
        "missing": {r.get("case", "?"): r["missing"] for r in with_need if r.get("missing")},
        "unperceived": {r.get("case", "?"): r["unperceived"] for r in with_need if r.get("unperceived")},
        "retrieved_mean": float(np.mean([len(r.get("retrieved") or []) for r in rows])),
        "scene_tokens_mean": mean("scene_tokens"), "first_message_tokens_mean": mean("first_message_tokens"),
        "conversation_tokens_mean": mean("conversation_tokens"),
        "full_scene_tokens_mean": float(np.mean(full_tokens)) if full_tokens else None,
        "scene_tokens_ratio_mean": float(np.mean(ratio)) if ratio else None,
        "agreement_with_full": sum(agree) / len(agree) if agree else None, "agreement_cases": len(agree),
        "retrieve_ms_p95": float(np.percentile(ms, 95)) if ms else None,
        "self_queried_mean": float(np.mean([len(r.get("self_queried") or []) for r in rows])),
    }

