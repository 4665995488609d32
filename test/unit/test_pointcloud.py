"""Point clouds from depth and masks: bad depth, empty masks, unseen objects, distances."""
import numpy as np
import pytest

from raider_ros.sim.camera import CameraModel
from raider_ros.sim.scene import Camera, Robot
from raider_ros.perception.pointcloud import CloudParams, build_object, build_objects
from raider_ros.perception.types import Detection

CAM = CameraModel.from_parts(Robot(), Camera(pitch_deg=0.0, width=80, height_px=60))


def det(mask, name="Box_1", label="Box"):
    ys, xs = np.nonzero(mask) if mask.any() else (np.array([0]), np.array([0]))
    return Detection(label=label, name=name, instance_id=1, bbox=(int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())),
                     mask=mask)


def square(v0=20, v1=40, u0=30, u1=50):
    m = np.zeros((60, 80), bool)
    m[v0:v1, u0:u1] = True
    return m


def test_a_plane_gives_its_points_box_and_distance():
    depth = np.full((60, 80), 2.0, np.float32)
    o = build_object(det(square()), depth, CAM)
    assert o.status == "ok" and o.has_points and o.valid_depth_pixels == 400 and o.invalid_depth_pixels == 0
    # optical z = world x for a level camera: every point lies 2 m ahead
    assert np.allclose(o.points[:, 0], 2.0, atol=1e-6)
    assert o.aabb_min[0] == pytest.approx(2.0) and o.aabb_max[0] == pytest.approx(2.0)
    # nearest pixel: the one closest to the principal point (39.5, 29.5) -> ray almost straight ahead
    u, v = 39.0, 29.0
    expect = 2.0 * np.sqrt(((u - CAM.cx) / CAM.fx) ** 2 + ((v - CAM.cy) / CAM.fy) ** 2 + 1)
    assert o.distance_m == pytest.approx(expect, rel=1e-6)
    assert len(o.pixels) == 400 and o.pixels.shape[1] == 3


def test_nan_inf_and_non_positive_depth_are_dropped_and_counted():
    depth = np.full((60, 80), 1.5, np.float32)
    depth[20, 30:34] = np.nan
    depth[21, 30:33] = np.inf
    depth[22, 30:32] = 0.0
    depth[23, 30] = -1.0
    o = build_object(det(square()), depth, CAM)
    assert o.invalid_depth_pixels == 10 and o.valid_depth_pixels == 390 and o.pixel_count == 400
    assert np.isfinite(o.points).all() and o.distance_m < 2.0


def test_no_valid_depth_gives_an_empty_flagged_object():
    depth = np.full((60, 80), np.nan, np.float32)
    o = build_object(det(square()), depth, CAM)
    assert o.status == "no_valid_depth" and not o.has_points
    assert o.distance_m == float("inf") and o.invalid_depth_pixels == 400 and o.pixel_count == 400
    assert np.isnan(o.aabb_min).all()


def test_an_empty_mask_gives_an_empty_flagged_object():
    depth = np.full((60, 80), 1.0, np.float32)
    o = build_object(det(np.zeros((60, 80), bool)), depth, CAM)
    assert o.status == "empty_mask" and not o.has_points and o.distance_m == float("inf")
    assert o.pixel_count == 0


def test_people_are_flagged_and_an_empty_scene_gives_nothing():
    depth = np.full((60, 80), 3.0, np.float32)
    objs = build_objects([det(square(), "Person_1", "Person"), det(square(0, 10, 0, 10), "Cup_1", "Cup")], depth, CAM)
    assert objs["Person_1"].is_person and not objs["Cup_1"].is_person
    assert build_objects([], depth, CAM) == {}


def test_outliers_are_removed_and_clouds_downsampled():
    depth = np.full((60, 80), 2.0, np.float32)
    depth[25, 35] = 9.0        # a flying pixel far behind the plane
    for method in ("statistical", "radius"):
        o = build_object(det(square()), depth, CAM, CloudParams(outlier=method, voxel_size=0.02))
        assert o.aabb_max[0] < 2.1, method
        assert len(o.points) < 400
    raw = build_object(det(square()), depth, CAM, CloudParams(outlier="none", voxel_size=0.0))
    assert raw.aabb_max[0] == pytest.approx(9.0) and len(raw.points) == 400


def test_bad_input_is_a_clear_error():
    depth = np.full((60, 80), 1.0, np.float32)
    with pytest.raises(ValueError, match="depth image has shape"):
        build_objects([det(square())], depth[:10], CAM)
    with pytest.raises(ValueError, match="two detections are named"):
        build_objects([det(square()), det(square())], depth, CAM)
    with pytest.raises(ValueError, match="unknown outlier method"):
        CloudParams(outlier="median")
