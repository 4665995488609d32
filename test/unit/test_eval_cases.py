"""Loading benchmark directories: every problem is reported with file, case and field, and
the rest of the directory still loads."""
from pathlib import Path

import pytest

from raider_ros.evaluation.cases import Case, filter_cases, load_benchmark
from support.shared import EXAMPLES, requires_shared

MINI = Path(__file__).resolve().parents[1] / "data" / "mini_benchmark"

SCENE = """\
format: raider-scene/1
name: {name}
robot: {{pose: [0, 0, 0], reach: 1.1, holding: null}}
objects:
  - {{id: Table_1, type: Table, shape: box, center: [1.0, 0, 0.4], size: [0.8, 1.0, 0.8], properties: [receptacle]}}
  - {{id: Apple_1, type: Apple, shape: sphere, center: [0.8, 0.1, 0.84], size: [0.08, 0.08, 0.08],
      properties: [pickupable, sliceable], state: {{sliced: false}}}}
  - {{id: Knife_1, type: Knife, shape: box, center: [0.8, -0.2, 0.81], size: [0.2, 0.03, 0.02], properties: [pickupable]}}
"""

GOOD_CASE = """\
  - id: {id}
    query: "pick(Apple)"
    query_type: QS
    abstraction: AS
    expected: {{issue: none, category: IN, grounding: [Apple_1], mentions: [[apple]]}}
"""


def _write(d: Path, name: str, text: str) -> Path:
    p = d / name
    p.write_text(text, encoding="utf-8")
    return p


def _cases(scene: str, body: str) -> str:
    return f"format: raider-cases/1\nscene: {scene}\ncases:\n{body}"


def _check_example_directory(b, scene, prefix):
    assert not b.errors and len(b.cases) == 10 and set(b.scenes) == {scene}
    iu3 = next(c for c in b.cases if c.id == f"{prefix}-05")
    assert iu3.grounding is None and iu3.category == "IU3"
    assert "no" in iu3.mentions[1]
    sliced = next(c for c in b.cases if c.id == f"{prefix}-06")
    assert b.scene_for(sliced).object("Apple_1").state["sliced"] is True


def test_mini_benchmark_directory_loads():
    _check_example_directory(load_benchmark(MINI), "mini_kitchen", "mk")


@requires_shared
def test_shared_examples_directory_loads():
    _check_example_directory(load_benchmark(EXAMPLES), "kitchen_example", "kx")


def test_missing_directory_raises(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_benchmark(tmp_path / "nope")


def test_broken_yaml_is_reported_and_other_files_still_load(tmp_path):
    _write(tmp_path, "k.scene.yaml", SCENE.format(name="k"))
    _write(tmp_path, "a.cases.yaml", _cases("k", GOOD_CASE.format(id="a-1")))
    _write(tmp_path, "b.cases.yaml", "format: raider-cases/1\nscene: k\ncases: [\n  - id: x\n")
    b = load_benchmark(tmp_path)
    assert [c.id for c in b.cases] == ["a-1"]
    assert len(b.errors) == 1 and "b.cases.yaml" in b.errors[0].file
    assert "not valid YAML" in b.errors[0].message and "line" in str(b.errors[0])


def test_broken_scene_file_is_reported_with_its_field(tmp_path):
    _write(tmp_path, "bad.scene.yaml", SCENE.format(name="bad").replace("size: [0.8, 1.0, 0.8]", "size: [0.8, -1, 0.8]"))
    _write(tmp_path, "k.scene.yaml", SCENE.format(name="k"))
    _write(tmp_path, "a.cases.yaml", _cases("k", GOOD_CASE.format(id="a-1")))
    _write(tmp_path, "b.cases.yaml", _cases("bad", GOOD_CASE.format(id="b-1")))
    b = load_benchmark(tmp_path)
    assert [c.id for c in b.cases] == ["a-1"]
    msgs = [str(e) for e in b.errors]
    assert any("bad.scene.yaml" in m and "Table_1" in m and "size" in m for m in msgs), msgs
    assert any("b.cases.yaml" in m and "no scene named 'bad'" in m and "failed to load: bad.scene.yaml" in m
               for m in msgs), msgs


def test_unknown_scene_and_duplicate_names_and_ids(tmp_path):
    _write(tmp_path, "k.scene.yaml", SCENE.format(name="k"))
    _write(tmp_path, "k2.scene.yaml", SCENE.format(name="k"))      # same scene name again
    _write(tmp_path, "a.cases.yaml", _cases("k", GOOD_CASE.format(id="dup") + GOOD_CASE.format(id="a-2")))
    _write(tmp_path, "b.cases.yaml", _cases("k", GOOD_CASE.format(id="dup")))
    _write(tmp_path, "c.cases.yaml", _cases("ghost", GOOD_CASE.format(id="c-1")))
    b = load_benchmark(tmp_path)
    assert sorted(c.id for c in b.cases) == ["a-2", "dup"]
    assert next(c for c in b.cases if c.id == "dup").source.endswith("a.cases.yaml")
    by_file = {Path(e.file).name: e for e in b.errors}
    assert by_file["k2.scene.yaml"].field == "name" and "k.scene.yaml" in by_file["k2.scene.yaml"].message
    assert by_file["b.cases.yaml"].case_id == "dup" and by_file["b.cases.yaml"].field == "id"
    assert by_file["c.cases.yaml"].field == "scene" and "'ghost'" in by_file["c.cases.yaml"].message


@pytest.mark.parametrize("patch, field, words", [
    ("query_type: QS", "query_type: QX", ["query_type", "QS, QU", "QX"]),
    ("abstraction: AS", "abstraction: AZ", ["abstraction", "AS, AN, AR, AC"]),
    ("issue: none", "issue: maybe", ["expected.issue", "none, ambiguity, unfeasibility"]),
    ("category: IN", "category: IU7", ["expected.category", "IU1"]),
    ("issue: none", "issue: unfeasibility", ["expected.issue", "category IN means issue 'none'"]),
    ("grounding: [Apple_1]", "grounding: Apple_1", ["expected.grounding", "list of ids"]),
    ("mentions: [[apple]]", "mentions: [[apple], []]", ["expected.mentions[1]", "non-empty list"]),
    ("mentions: [[apple]]", "mentions: apple", ["expected.mentions", "list of word groups"]),
    ('query: "pick(Apple)"', "query: ''", ["query", "non-empty string"]),
])
def test_bad_fields_are_reported_per_case(tmp_path, patch, field, words):
    _write(tmp_path, "k.scene.yaml", SCENE.format(name="k"))
    bad = GOOD_CASE.format(id="bad-1").replace(patch, field)
    assert bad != GOOD_CASE.format(id="bad-1")
    _write(tmp_path, "a.cases.yaml", _cases("k", GOOD_CASE.format(id="ok-1") + bad + GOOD_CASE.format(id="ok-2")))
    b = load_benchmark(tmp_path)
    assert [c.id for c in b.cases] == ["ok-1", "ok-2"]
    (err,) = b.errors
    text = str(err)
    assert err.case_id == "bad-1" and "a.cases.yaml" in text
    for w in words:
        assert w in text, (w, text)


def test_missing_expected_and_missing_id(tmp_path):
    _write(tmp_path, "k.scene.yaml", SCENE.format(name="k"))
    body = ("  - id: e-1\n    query: q\n    query_type: QU\n    abstraction: AS\n"
            "  - query: q\n    query_type: QU\n    abstraction: AS\n    expected: {issue: none, category: IN}\n")
    _write(tmp_path, "a.cases.yaml", _cases("k", body))
    b = load_benchmark(tmp_path)
    assert not b.cases
    assert [(e.case_id, e.field) for e in b.errors] == [("e-1", "expected"), ("#2", "id")]


def test_setup_blocks_are_checked_against_the_scene(tmp_path):
    _write(tmp_path, "k.scene.yaml", SCENE.format(name="k"))
    body = (GOOD_CASE.format(id="s-1").replace("    expected:", "    setup: {remove: [Pear_1]}\n    expected:")
            + GOOD_CASE.format(id="s-2").replace("    expected:", "    setup: {robot: {holding: Knife_1}}\n    expected:")
            + GOOD_CASE.format(id="s-3").replace("    expected:", "    setup: {objects: {Apple_1: {state: {sliced: yes}}}}\n    expected:"))
    _write(tmp_path, "a.cases.yaml", _cases("k", body))
    b = load_benchmark(tmp_path)
    assert [c.id for c in b.cases] == ["s-2", "s-3"]
    (err,) = b.errors
    assert err.case_id == "s-1" and err.field == "setup" and "Pear_1" in err.message
    s3 = next(c for c in b.cases if c.id == "s-3")
    assert b.scene_for(s3).object("Apple_1").state["sliced"] is True    # `yes` is still a boolean there


def test_unquoted_yes_no_words_stay_words_in_mentions(tmp_path):
    _write(tmp_path, "k.scene.yaml", SCENE.format(name="k"))
    _write(tmp_path, "a.cases.yaml", _cases("k", GOOD_CASE.format(id="w-1").replace(
        "mentions: [[apple]]", "mentions: [[apple], [no, off, On, 2]]")))
    (case,) = load_benchmark(tmp_path).cases
    assert case.mentions == (("apple",), ("no", "off", "On", "2"))


def test_grounding_ids_not_in_the_world_are_warnings_and_extra_keys_are_kept(tmp_path):
    _write(tmp_path, "k.scene.yaml", SCENE.format(name="k"))
    body = GOOD_CASE.format(id="g-1").replace("grounding: [Apple_1]", "grounding: [Pear_1]").replace(
        "    query_type", "    context: likes apples\n    geometry: [Apple_1 on top of Table_1]\n    query_type")
    _write(tmp_path, "a.cases.yaml", _cases("k", body))
    b = load_benchmark(tmp_path)
    (case,) = b.cases
    assert not b.errors and len(b.warnings) == 1 and "Pear_1" in str(b.warnings[0])
    assert case.extra == {"context": "likes apples", "geometry": ["Apple_1 on top of Table_1"]}


def test_wrong_format_and_non_mapping_files(tmp_path):
    _write(tmp_path, "k.scene.yaml", SCENE.format(name="k"))
    _write(tmp_path, "a.cases.yaml", _cases("k", GOOD_CASE.format(id="a")).replace("raider-cases/1", "raider-cases/2"))
    _write(tmp_path, "b.cases.yaml", "- just\n- a list\n")
    _write(tmp_path, "c.cases.yaml", "format: raider-cases/1\nscene: k\ncases: {}\n")
    b = load_benchmark(tmp_path)
    assert not b.cases
    fields = {Path(e.file).name: e.field for e in b.errors}
    assert fields == {"a.cases.yaml": "format", "b.cases.yaml": None, "c.cases.yaml": "cases"}


def test_filter_and_limit():
    cases = [Case(id=f"x-{i}", scene="s", query=q, query_type="QU", abstraction="AS", expected_issue="none",
                  category=cat) for i, (q, cat) in enumerate([("pick apple", "IN"), ("open fridge", "IU1"),
                                                             ("pick mug", "IU2")])]
    assert [c.id for c in filter_cases(cases, "IU1")] == ["x-1"]
    assert [c.id for c in filter_cases(cases, "pick")] == ["x-0", "x-2"]
    assert [c.id for c in filter_cases(cases, None, 2)] == ["x-0", "x-1"]
    assert filter_cases(cases, "nothing-matches") == []
