"""Scoring retrieval (evaluation/retrieval_check.py): a needed object the scene graph never held
(perception never saw it) is listed as unperceived and left out of ``recall`` but counted by
``recall_incl_unperceived``; one the graph held but the subgraph left out is a miss of both."""
from types import SimpleNamespace

import pytest

from raider_ros.evaluation import retrieval_check
from raider_ros.evaluation.retrieval_check import score_retrieval, summarize_retrieval


@pytest.fixture
def needs(monkeypatch):
    monkeypatch.setattr(retrieval_check, "needed_objects", lambda case, world: ["Mug_1", "Stool_1"])


def row(retrieved, graph_ids, case="c1"):
    info = {"case": case, "mode": "rag", "retrieved": retrieved, "scene_tokens": 10, "first_message_tokens": 20}
    if graph_ids is not None:
        info["graph_ids"] = graph_ids
    return score_retrieval(SimpleNamespace(), SimpleNamespace(), info)


def test_an_object_the_graph_never_held_is_unperceived_not_missing(needs):
    r = row(["Mug_1", "Table_1"], ["Mug_1", "Table_1"])
    assert r["missing"] == [] and r["unperceived"] == ["Stool_1"]
    assert r["recall"] is True and r["recall_incl_unperceived"] is False
    assert "graph_ids" not in r                      # the graph's ids do not go into report.json


def test_an_object_the_graph_held_but_the_subgraph_left_out_is_missing(needs):
    r = row(["Mug_1"], ["Mug_1", "Stool_1", "Table_1"])
    assert r["missing"] == ["Stool_1"] and r["unperceived"] == []
    assert r["recall"] is False and r["recall_incl_unperceived"] is False


def test_without_the_graph_ids_every_needed_object_counts(needs):
    r = row(["Mug_1"], None)
    assert r["missing"] == ["Stool_1"] and r["unperceived"] == [] and r["recall"] is False


def test_the_summary_reports_both_recalls(needs):
    rows = [row(["Mug_1", "Stool_1"], ["Mug_1", "Stool_1"], "a"), row(["Mug_1"], ["Mug_1"], "b"),
            row(["Mug_1"], ["Mug_1", "Stool_1"], "c"), row(["Mug_1", "Stool_1"], ["Mug_1", "Stool_1"], "d")]
    s = summarize_retrieval(rows)
    assert s["recall"] == 0.75 and s["recall_incl_unperceived"] == 0.5
    assert s["unperceived"] == {"b": ["Stool_1"]} and s["missing"] == {"c": ["Stool_1"]}
