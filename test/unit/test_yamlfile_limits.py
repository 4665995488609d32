"""YAML from outside (scenes, case files, constraint files) is read bounded: expansion bombs,
recursive aliases and deep nesting - in flow style ([[[...]]]) and in block style (- - - ...) -
are refused with a reason before anything is built from them, and a scene's error message
never recurses through the value it quotes."""
from __future__ import annotations

import pytest

from raider_ros.common.yamlfile import MAX_YAML_DEPTH, YAMLSizeError, safe_load_bounded
from raider_ros.sim.scene import SceneError, load_scene_text


def test_ordinary_documents_load():
    assert safe_load_bounded("a: [1, [2, [3]]]\nb: {c: {d: 1}}\n") == {"a": [1, [2, [3]]], "b": {"c": {"d": 1}}}
    assert safe_load_bounded("x:\n  " + "- " * (MAX_YAML_DEPTH - 2) + "1\n")["x"] is not None


@pytest.mark.parametrize("text, reason", [
    ("x:\n  " + "- " * 900 + "1\n", "nested more than"),                       # block style
    ("x: " + "[" * 200 + "]" * 200 + "\n", "nested more than"),                # flow style
    ("a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{k}: &a{k} [{', '.join(['*a' if k == 0 else f'*a{k - 1}'] * 10)}]\n" for k in range(9)), "expands to"),
    ("a: &a [1, *a]\n", ""),                                                   # recursive alias
])
def test_hostile_documents_are_refused_with_a_reason(text, reason):
    with pytest.raises((YAMLSizeError, ValueError)) as e:
        safe_load_bounded(text)
    assert reason in str(e.value)


def test_a_scene_nested_deep_in_block_style_names_the_problem():
    """The fuzz bench found this shape: a person's centre nested ~900 levels deep in block style
    (it ended in a RecursionError while the error message quoted the value)."""
    text = ("format: raider-scene/1\nname: fz\nrobot: {pose: [0, 0, 0], reach: 1.1, holding: null}\n"
            "objects: []\npeople:\n- id: Person_1\n  center:\n  - 2.0\n  - 1.0\n  " + "- " * 900 + "0.85\n")
    with pytest.raises(SceneError) as e:
        load_scene_text(text, "deep.scene.yaml")
    assert "deep.scene.yaml" in str(e.value) and "nested" in str(e.value)
