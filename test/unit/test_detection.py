"""The sim detector on synthetic instance images, and the backend registry."""
import numpy as np
import pytest

from raider_ros.perception.detection import (DetectionError, SimInstanceDetector, detector_names, make_detector,
                                             register_detector)


def image():
    inst = np.zeros((40, 60), np.int32)
    inst[5:15, 10:30] = 1          # 200 px
    inst[20:22, 40:43] = 2         # 6 px
    inst[30:35, 50:55] = 7         # no label: ignored
    labels = {1: ("Mug_1", "Mug"), 2: ("Apple_1", "Apple"), 3: ("Bowl_1", "Bowl")}
    return np.zeros((40, 60, 3), np.uint8), inst, labels


def test_one_detection_per_labelled_instance():
    rgb, inst, labels = image()
    dets = {d.name: d for d in SimInstanceDetector().detect(rgb, instance=inst, labels=labels)}
    assert set(dets) == {"Mug_1", "Apple_1"}           # floor (0), unlabelled (7), absent (3) skipped
    mug = dets["Mug_1"]
    assert (mug.label, mug.instance_id, mug.score) == ("Mug", 1, 1.0)
    assert mug.bbox == (10, 5, 29, 14)
    assert mug.pixel_count == 200 and mug.mask.shape == inst.shape


def test_min_pixels_drops_small_instances():
    rgb, inst, labels = image()
    dets = make_detector("sim", min_pixels=10).detect(rgb, instance=inst, labels=labels)
    assert [d.name for d in dets] == ["Mug_1"]
    with pytest.raises(ValueError, match="min_pixels"):
        SimInstanceDetector(min_pixels=0)


def test_an_empty_image_gives_no_detections():
    assert SimInstanceDetector().detect(None, instance=np.zeros((4, 4), np.int32), labels={}) == []


def test_bad_input_is_a_clear_error():
    rgb, inst, labels = image()
    with pytest.raises(DetectionError, match="instance-id image"):
        SimInstanceDetector().detect(rgb)
    with pytest.raises(DetectionError, match="sizes differ"):
        SimInstanceDetector().detect(rgb[:10], instance=inst, labels=labels)
    with pytest.raises(DetectionError, match=r"\(H, W\)"):
        SimInstanceDetector().detect(None, instance=np.zeros(5, np.int32), labels=labels)


def test_registry_names_the_known_backends():
    with pytest.raises(ValueError, match="unknown detector backend 'yolo'; known: .*sim"):
        make_detector("yolo")
    with pytest.raises(ValueError, match="bad parameters"):
        make_detector("sim", threshold=3)

    class Fixed:
        name = "fixed"

        def detect(self, rgb, *, instance=None, labels=None):
            return []

    register_detector("fixed-test", Fixed)
    assert "fixed-test" in detector_names()
    assert make_detector("fixed-test").detect(None) == []
