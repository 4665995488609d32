"""Colour from the image (perception/colour.py): the table loads, names survive the light, the
pipeline measures each object's colour from its mask and get_obj_properties reports it."""
import numpy as np
import pytest

from raider_ros.common.paths import data_dir
from raider_ros.evaluation.cases import Case, load_benchmark
from raider_ros.perception.colour import (ColourError, colour_words, load_colours, measure_rgb,
                                          name_colour)
from raider_ros.perception.pipeline import PerceptionPipeline
from raider_ros.perception.provider import TruthProvider
from raider_ros.perception.scene_graph import SceneGraph
from raider_ros.perception.toolbox import ToolBox
from raider_ros.sim.world import SimWorld


def test_every_reference_colour_names_itself_in_light_and_shade():
    for c in load_colours():
        for light in (0.6, 0.8, 1.0):
            assert name_colour(np.asarray(c.rgb) * light) in (c.name, *c.near), (c.name, light)


@pytest.mark.parametrize("rgb, name", [
    ((0.76, 0.68, 0.16), "yellow"), ((0.64, 0.08, 0.08), "red"), ((0.16, 0.32, 0.64), "blue"),
    ((0.05, 0.05, 0.05), "black"), ((0.78, 0.78, 0.78), "white"), ((0.16, 0.5, 0.2), "green"),
])
def test_shaded_colours_keep_their_name(rgb, name):
    assert name_colour(rgb) == name


def test_words_map_to_names():
    words = colour_words()
    assert words["gray"] == "grey" and words["yellow"] == "yellow"


def test_measure_uses_the_lit_pixels_under_the_mask():
    img = np.zeros((4, 4, 3), np.uint8)
    img[:2, :2] = (200, 20, 20)              # lit face
    img[2:, :2] = (100, 10, 10)              # shaded face
    img[:, 2:] = (0, 200, 0)                 # another object
    mask = np.zeros((4, 4), bool)
    mask[:, :2] = True
    rgb = measure_rgb(img, mask)
    assert rgb == pytest.approx((200 / 255, 20 / 255, 20 / 255), abs=1e-3)
    assert name_colour(rgb) == "red"
    assert measure_rgb(img, np.zeros((4, 4), bool)) is None          # nothing to measure
    assert measure_rgb(img, np.zeros((3, 3), bool)) is None          # a mask of another size
    assert name_colour(None) is None and name_colour((np.nan, 0, 0)) is None


def test_a_bad_table_is_named(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("colours:\n  red: {rgb: [1, 0], words: [red]}\n")
    with pytest.raises(ColourError, match=r"colours.red.rgb"):
        load_colours(str(f))
    f.write_text("colours:\n  red: {rgb: [1, 0, 0], near: [crimson]}\n")
    with pytest.raises(ColourError, match=r"unknown colour"):
        load_colours(str(f))


def test_the_pipeline_measures_colours_and_the_tool_reports_them():
    bench = load_benchmark(data_dir() / "benchmark" / "dev")
    case = Case(id="-", scene="kitchen_island", query="-", query_type="QS", abstraction="AS",
                expected_issue="none", category="IN", setup={})
    world = SimWorld()
    world.load(bench.scene_for(case))
    frame = world.frame()
    provider = TruthProvider()
    provider.update(world.truth())
    result = PerceptionPipeline("sim").process(frame.rgb, frame.depth, frame.instance, frame.labels, frame.camera)
    graph = SceneGraph()
    graph.update(result, provider)
    tools = ToolBox(graph, provider)
    colours = {}
    for obj in ("Apple_1", "Banana_1", "Mug_1", "Mug_2", "Plate_1"):
        res = tools.call("get_obj_properties", [obj])
        assert res.success, res.error
        colours[obj] = res.data["colour"]
    assert colours == {"Apple_1": "red", "Banana_1": "yellow", "Mug_1": "blue", "Mug_2": "brown",
                       "Plate_1": "white"}
