"""Camera model (spec's pinhole camera) and exact-time frame grouping."""
from __future__ import annotations

import math

import numpy as np
import pytest

from raider_ros.sim.camera import CameraModel, quaternion_to_rotation, rotation_to_quaternion
from raider_ros.sim.scene import Camera, Robot
from raider_ros.ros.stamp_sync import StampSync


def test_camera_looks_along_yaw_tilted_down():
    cam = CameraModel.from_parts(Robot(x=1.0, y=2.0, yaw_deg=90.0), Camera(height=1.3, pitch_deg=30.0))
    assert np.allclose(cam.position, [1.0, 2.0, 1.3])
    forward = cam.rotation[:, 2]
    assert np.allclose(forward, [0.0, math.cos(math.radians(30)), -math.sin(math.radians(30))], atol=1e-9)
    right = cam.rotation[:, 0]
    assert np.allclose(right, [1.0, 0.0, 0.0], atol=1e-9)  # facing +y, the right hand points to +x
    assert np.allclose(cam.rotation.T @ cam.rotation, np.eye(3))


def test_focal_length_from_hfov_and_principal_point():
    cam = CameraModel.from_parts(Robot(), Camera(hfov_deg=90.0, width=640, height_px=480))
    assert cam.fx == pytest.approx(320.0)
    assert (cam.cx, cam.cy) == (319.5, 239.5)


def test_project_backproject_round_trip():
    cam = CameraModel.from_parts(Robot(yaw_deg=20), Camera())
    pts = np.array([[1.5, 0.3, 0.9], [2.0, -0.5, 0.2], [0.8, 0.1, 1.0]])
    uvz = cam.project(pts)
    assert np.all(uvz[:, 2] > 0)
    back = cam.backproject(uvz[:, 0], uvz[:, 1], uvz[:, 2])
    assert np.allclose(back, pts)


def test_rays_have_unit_optical_z_so_t_is_depth():
    cam = CameraModel.from_parts(Robot(yaw_deg=-35), Camera(width=64, height_px=48))
    rays = cam.rays()
    assert rays.shape == (48, 64, 6)
    d_opt = rays[..., 3:].reshape(-1, 3).astype(float) @ cam.rotation
    assert np.allclose(d_opt[:, 2], 1.0, atol=1e-5)
    # the centre ray points along the optical axis
    centre = cam.rotation.T @ rays[24, 32, 3:]
    assert abs(centre[0]) < 0.02 and abs(centre[1]) < 0.02


def test_quaternion_round_trip():
    cam = CameraModel.from_parts(Robot(yaw_deg=123), Camera(pitch_deg=25))
    q = rotation_to_quaternion(cam.rotation)
    assert np.allclose(quaternion_to_rotation(*q), cam.rotation, atol=1e-9)


def test_stamp_sync_groups_by_stamp_and_drops_stale():
    got = []
    sync = StampSync(["a", "b"], got.append)
    sync.add("a", 1, "a1")
    sync.add("a", 2, "a2")
    sync.add("b", 2, "b2")
    assert got == [{"a": "a2", "b": "b2"}]
    sync.add("b", 1, "b1")  # stamp 1 was dropped as stale: no group
    assert len(got) == 1 and sync.dropped >= 1
    with pytest.raises(KeyError):
        sync.add("c", 3, "x")
