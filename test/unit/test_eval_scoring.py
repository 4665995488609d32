"""Scoring rules of benchmark format v1 and the stem matcher behind Expl."""
import math

import pytest

from raider_ros.sim.scene import load_scene_text
from raider_ros.evaluation.cases import Case
from raider_ros.evaluation.scoring import CaseResult, breakdown, missed_mentions, score_case, summarize
from raider_ros.evaluation.stem import stem_key, stem, text_forms, mention_words

SCENE = load_scene_text("""\
format: raider-scene/1
name: s
robot: {pose: [0, 0, 0]}
objects:
  - {id: CounterTop_1, type: CounterTop, shape: box, center: [1, 0, 0.45], size: [1, 1, 0.9]}
  - {id: Apple_1, type: Apple, shape: sphere, center: [0.6, 0.2, 0.94], size: [0.08, 0.08, 0.08]}
  - {id: Fruit_7, type: Banana, shape: box, center: [0.6, -0.2, 0.92], size: [0.19, 0.05, 0.04]}
people:
  - {id: Person_1, name: Adriana, center: [2, 1, 0.85]}
""")


def case(category="IN", issue="none", grounding=("Apple_1",), mentions=(("apple",),)):
    return Case(id="c", scene="s", query="q", query_type="QU", abstraction="AS", expected_issue=issue,
                category=category, grounding=None if grounding is None else tuple(grounding),
                mentions=tuple(tuple(g) for g in mentions))


# --------------------------------------------------------------------------- stems
@pytest.mark.parametrize("group", [
    ["block", "blocks", "blocked", "blocking"],
    ["reach", "reaches", "reachable", "reaching", "reached"],
    ["slice", "sliced", "slicing", "slices"],
    ["obstruct", "obstructed", "obstruction", "obstructs"],
    ["open", "opened", "opening", "opens"],
    ["close", "closed", "closing"],
    ["switch", "switches", "switched"],
    ["box", "boxes"], ["glass", "glasses"], ["tomato", "tomatoes"], ["knife", "knives"],
    ["battery", "batteries"], ["empty", "emptied"], ["stop", "stopped", "stopping"],
    ["move", "movable", "moveable", "moved"],
])
def test_word_families_share_a_stem(group):
    assert len({stem(w) for w in group}) == 1, {w: stem(w) for w in group}


@pytest.mark.parametrize("a, b", [("counter", "count"), ("table", "tab"), ("fill", "full"), ("not", "note"),
                                  ("reach", "unreachable"), ("is", "it")])
def test_different_words_keep_different_stems(a, b):
    assert stem(a) != stem(b)


def test_tokens_split_identifiers_and_contractions():
    assert mention_words("CounterTop_1 isn't here") == ["counter", "top", "1", "is", "not", "here"]
    assert mention_words("The TVStand can't") == ["the", "tv", "stand", "can", "not"]
    assert stem_key("counter top") == stem_key("CounterTop") == stem_key("countertops")
    assert "countertop" in text_forms("the counter top is big")


# --------------------------------------------------------------------------- Det / Expl
def test_det_and_expl():
    c = case(category="IU1", issue="unfeasibility", mentions=[["apple"], ["reach", "far"]])
    s = score_case(c, "unfeasibility", "The apple is out of REACH.", ["Apple_1"], SCENE)
    assert (s.grnd, s.det, s.expl) == (True, True, True)
    s = score_case(c, "unfeasibility", "The apple is too heavy.", ["Apple_1"], SCENE)
    assert (s.det, s.expl) == (True, False) and s.missed_mentions == (("reach", "far"),)
    s = score_case(c, "none", "The apple is unreachable and far away.", ["Apple_1"], SCENE)
    assert (s.det, s.expl) == (False, False)          # Expl needs Det
    assert score_case(c, " Unfeasibility ", "apple: reaching it is impossible", [], SCENE).expl


def test_expl_without_mentions_follows_det_and_none_reports_fail():
    c = case(mentions=())
    assert score_case(c, "none", "", ["Apple_1"]).expl
    s = score_case(c, None, "", None)
    assert (s.grnd, s.det, s.expl) == (False, False, False)


def test_stemmed_mentions_match_inflected_explanations():
    c = case(category="IU2", issue="unfeasibility",
             mentions=[["mug"], ["block", "obstruct"]])
    assert score_case(c, "unfeasibility", "Mugs: the cereal box is blocking it", ["Apple_1"]).expl
    assert score_case(c, "unfeasibility", "The mug's view is obstructed.", ["Apple_1"]).expl
    assert not score_case(c, "unfeasibility", "The mug is fine.", ["Apple_1"]).expl


def test_object_ids_match_by_type_name_and_camel_case():
    assert missed_mentions("The counter top cannot be lifted", [["CounterTop_1"], ["lift"]], SCENE) == []
    assert missed_mentions("the countertop is fixed", [["CounterTop_1"]], SCENE) == []
    assert missed_mentions("CounterTop_1 is fixed", [["counter"]], SCENE) == []
    assert missed_mentions("Apple_1 is too far", [["apple"], ["far"]], SCENE) == []
    assert missed_mentions("I see an apple", [["Apple_1"]]) == []            # no scene: the id's prefix
    assert missed_mentions("I see a banana", [["Fruit_7"]], SCENE) == []     # the scene's type wins
    assert missed_mentions("I see a banana", [["Fruit_7"]]) == [("Fruit_7",)]
    assert missed_mentions("Adriana is far away", [["Person_1"]], SCENE) == []
    assert missed_mentions("the counter is fixed", [["CounterTop_1"]], SCENE) == [("CounterTop_1",)]


def test_multi_word_mentions():
    assert missed_mentions("It must be picked up first", [["picked up"]]) == []
    assert missed_mentions("It must be picking up first", [["picked up"]]) == []
    assert missed_mentions("It must be picked first", [["picked up"]]) == [("picked up",)]
    assert missed_mentions("the robot is not holding it", [["not on", "not holding"]]) == []


# --------------------------------------------------------------------------- Grnd
def test_grnd_only_for_cases_with_grounding_and_as_a_set():
    assert score_case(case(grounding=None), "none", "", ["Apple_1"]).grnd is None
    c = case(grounding=["Apple_1", "Fruit_7"])
    assert score_case(c, "none", "", ["fruit_7", "Apple_1"]).grnd is True
    assert score_case(c, "none", "", ["Apple_1"]).grnd is False
    assert score_case(c, "none", "", ["Apple_1", "Fruit_7", "CounterTop_1"]).grnd is False
    assert score_case(case(grounding=[]), "unfeasibility", "", []).grnd is True


def test_grnd_for_ia_when_every_candidate_is_named():
    c = case(category="IA", issue="ambiguity", grounding=["Apple_1", "Fruit_7"], mentions=[["apple"], ["banana"]])
    # the exact set always counts
    assert score_case(c, "ambiguity", "", ["Apple_1", "Fruit_7"], SCENE).grnd
    # ambiguity and every candidate named: in the grounding or in the explanation
    s = score_case(c, "ambiguity", "Do you mean the apple or the banana?", [], SCENE)
    assert s.grnd and s.det and s.expl
    assert score_case(c, "ambiguity", "the banana or something else?", ["Apple_1", "Mug_1"], SCENE).grnd
    s = score_case(c, "ambiguity", "Which apple?", ["Apple_1"], SCENE)
    assert s.grnd is False and s.unnamed_candidates == ("Fruit_7",)
    # naming both without reporting ambiguity is not enough
    assert score_case(c, "none", "the apple or the banana", [], SCENE).grnd is False


# --------------------------------------------------------------------------- aggregates
def _result(cat, *, grnd, det, expl, t, qt="QU", ab="AS", turns=2, calls=3, pt=100, ct=10, status="ok"):
    return CaseResult(id=f"{cat}-{t}", scene="s", category=cat, query_type=qt, abstraction=ab, query="q",
                      expected_issue="none", reported_issue="none", grnd=grnd, det=det, expl=expl, time_s=t,
                      llm_turns=turns, tool_calls=calls, prompt_tokens=pt, completion_tokens=ct, status=status)


def test_summarize_fractions_time_and_costs():
    rs = [_result("IN", grnd=True, det=True, expl=True, t=1.0),
          _result("IN", grnd=None, det=True, expl=False, t=2.0, turns=4, pt=300),
          _result("IU1", grnd=False, det=False, expl=False, t=3.0, ct=30, status="error"),
          _result("IA", grnd=True, det=True, expl=True, t=10.0, qt="QS", ab="AN")]
    s = summarize(rs)
    assert s["cases"] == 4 and s["grnd_cases"] == 3 and s["errors"] == 1
    assert s["grnd"] == pytest.approx(2 / 3) and s["det"] == 0.75 and s["expl"] == 0.5
    assert s["time_mean_s"] == 4.0 and math.isclose(s["time_p95_s"], 8.95)
    assert s["llm_turns_mean"] == 2.5 and s["tool_calls_mean"] == 3.0
    assert s["prompt_tokens_mean"] == 150.0 and s["completion_tokens_mean"] == 15.0
    by_cat = breakdown(rs, "category", ("IA", "IN", "IU1"))
    assert list(by_cat) == ["IA", "IN", "IU1"]
    assert by_cat["IN"]["grnd"] == 1.0 and by_cat["IN"]["expl"] == 0.5 and by_cat["IU1"]["grnd"] == 0.0
    assert list(breakdown(rs, "query_type", ("QS", "QU"))) == ["QS", "QU"]
    empty = summarize([])
    assert empty["cases"] == 0 and empty["grnd"] is None and empty["time_p95_s"] is None


def test_an_inventory_of_visible_ids_is_no_reason():
    from raider_ros.evaluation.scoring import missed_mentions, reason_text
    inventory = "There is no pear. I can see Apple_1, Mug_1, Knife_1 and Bowl_1."
    assert "Apple_1" not in reason_text(inventory)
    assert missed_mentions(inventory, [["pear"], ["apple"]]) == [("apple",)]
    # the candidates of an ambiguity are one type: they stay a reason
    amb = "Mug_1, Mug_2 and Mug_3 all match 'the mug'."
    assert reason_text(amb) == amb and missed_mentions(amb, [["mug"]]) == []
    # two ids are a comparison, not an inventory
    assert missed_mentions("Apple_1 is closer than Banana_1.", [["banana"]]) == []
