"""Conversions between core values (numpy images, camera model, truth dicts) and ROS messages."""
from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Pose, PoseStamped, Quaternion, Vector3
from sensor_msgs.msg import CameraInfo, Image, LaserScan

from raider_ros.msg import SceneGraphStatus
from raider_ros.ros.goal_queue import GraphStatus
from raider_ros.perception.base_scan import BaseScan
from raider_ros.sim.camera import CameraModel, quaternion_to_rotation, rotation_to_quaternion
from raider_ros.sim.scan import ScanData

# encoding -> (dtype, channels)
_ENCODINGS = {
    "rgb8": (np.uint8, 3),
    "bgr8": (np.uint8, 3),
    "mono8": (np.uint8, 1),
    "32FC1": (np.float32, 1),
    "32SC1": (np.int32, 1),
    "16UC1": (np.uint16, 1),
}


class ConversionError(ValueError):
    """A message that cannot be turned into the value asked for (names the field)."""


def image_to_msg(array: np.ndarray, encoding: str, header=None) -> Image:
    if encoding not in _ENCODINGS:
        raise ConversionError(f"unsupported image encoding {encoding!r}")
    dtype, channels = _ENCODINGS[encoding]
    a = np.ascontiguousarray(array, dtype=dtype)
    msg = Image()
    if header is not None:
        msg.header = header
    msg.height, msg.width = int(a.shape[0]), int(a.shape[1])
    msg.encoding = encoding
    msg.is_bigendian = 0
    msg.step = int(msg.width * channels * a.itemsize)
    msg.data = a.tobytes()
    return msg


def msg_to_image(msg: Image) -> np.ndarray:
    if msg.encoding not in _ENCODINGS:
        raise ConversionError(f"unsupported image encoding {msg.encoding!r}")
    dtype, channels = _ENCODINGS[msg.encoding]
    itemsize = np.dtype(dtype).itemsize
    expected = msg.height * msg.width * channels * itemsize
    if msg.step != msg.width * channels * itemsize or len(msg.data) != expected:
        raise ConversionError(
            f"image {msg.width}x{msg.height} {msg.encoding}: step {msg.step} / {len(msg.data)} data bytes "
            f"do not match (expected {expected} bytes)")
    a = np.frombuffer(msg.data, dtype=dtype)
    if msg.is_bigendian:
        a = a.byteswap()
    shape = (msg.height, msg.width, channels) if channels > 1 else (msg.height, msg.width)
    return a.reshape(shape)


def camera_info_msg(cam: CameraModel, header=None) -> CameraInfo:
    f = cam.camera_info_fields()
    msg = CameraInfo()
    if header is not None:
        msg.header = header
    msg.width, msg.height = f["width"], f["height"]
    msg.distortion_model = f["distortion_model"]
    msg.d = [float(x) for x in f["d"]]
    msg.k = [float(x) for x in f["k"]]
    msg.r = [float(x) for x in f["r"]]
    msg.p = [float(x) for x in f["p"]]
    return msg


def camera_pose_msg(cam: CameraModel, header=None) -> PoseStamped:
    """world_from_optical as a PoseStamped (frame_id = the world frame)."""
    msg = PoseStamped()
    if header is not None:
        msg.header = header
    msg.pose = pose_msg(cam.position, rotation_to_quaternion(cam.rotation))
    return msg


def camera_model_from_msgs(info: CameraInfo, pose: PoseStamped) -> CameraModel:
    k = list(info.k)
    if len(k) != 9 or k[0] <= 0 or k[4] <= 0 or info.width == 0 or info.height == 0:
        raise ConversionError(f"camera_info has no usable intrinsics (k={k}, {info.width}x{info.height})")
    p, q = pose.pose.position, pose.pose.orientation
    return CameraModel.from_camera_info(info.width, info.height, k, np.array([p.x, p.y, p.z]),
                                        quaternion_to_rotation(q.x, q.y, q.z, q.w))


def pose_msg(position, quat_xyzw) -> Pose:
    pose = Pose()
    pose.position = Point(x=float(position[0]), y=float(position[1]), z=float(position[2]))
    x, y, z, w = quat_xyzw
    pose.orientation = Quaternion(x=float(x), y=float(y), z=float(z), w=float(w))
    return pose


def yaw_quaternion(yaw_deg: float) -> tuple[float, float, float, float]:
    h = math.radians(yaw_deg) / 2.0
    return (0.0, 0.0, math.sin(h), math.cos(h))


def quaternion_yaw_deg(q) -> float:
    """Yaw (about z) of a geometry_msgs/Quaternion, in degrees."""
    return math.degrees(math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z)))


# --------------------------------------------------------------------------- base laser
def scan_to_msgs(scan: ScanData, scan_time_s: float = 0.0) -> tuple[LaserScan, PoseStamped]:
    """A simulated base laser scan -> sensor_msgs/LaserScan (in the laser's frame: on the base's
    axis, ``height_m`` up, x along the base yaw) and the laser's pose in the world frame (a
    PoseStamped, like camera/pose). Headers are the caller's."""
    m = scan.model
    msg = LaserScan(angle_min=float(m.angle_min), angle_max=float(m.angle_min + m.angle_increment * (m.beams - 1)),
                    angle_increment=float(m.angle_increment), time_increment=0.0, scan_time=float(scan_time_s),
                    range_min=float(m.range_min_m), range_max=float(m.range_max_m))
    msg.ranges = np.asarray(scan.ranges, np.float32).tolist()
    x, y, yaw = scan.pose
    pose = PoseStamped()
    pose.pose = pose_msg((x, y, m.height_m), yaw_quaternion(yaw))
    return msg, pose


def msgs_to_base_scan(msg: LaserScan, pose: PoseStamped) -> BaseScan:
    """sensor_msgs/LaserScan + the laser's world pose -> the scan the perception tools use."""
    p = pose.pose.position
    return BaseScan(ranges=np.asarray(msg.ranges, np.float32), angle_min=float(msg.angle_min),
                    angle_increment=float(msg.angle_increment), range_min=float(msg.range_min),
                    range_max=float(msg.range_max), pose=(float(p.x), float(p.y), quaternion_yaw_deg(pose.pose.orientation)),
                    stamp=msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9, height_m=float(p.z))


def point(v) -> Point:
    return Point(x=float(v[0]), y=float(v[1]), z=float(v[2]))


def vector3(v) -> Vector3:
    return Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2]))


def robot_state_fields(robot: Mapping[str, Any]) -> dict:
    """Truth-dict robot entry -> keyword fields of raider_ros/msg/RobotState (without header)."""
    x, y, yaw = robot["pose"]
    return {"pose": pose_msg((x, y, 0.0), yaw_quaternion(yaw)), "yaw_deg": float(yaw),
            "reach": float(robot["reach"]), "holding": robot.get("holding") or ""}


# --------------------------------------------------------------------------- scene graph status
def status_to_msg(status: GraphStatus) -> SceneGraphStatus:
    sec = int(math.floor(status.frame_stamp))
    return SceneGraphStatus(frame_stamp=Time(sec=sec, nanosec=int(round((status.frame_stamp - sec) * 1e9)) % 1_000_000_000),
                            world_version=int(status.world_version), truth_version=int(status.truth_version),
                            objects=int(status.objects), people=int(status.people))


def msg_to_status(msg: SceneGraphStatus) -> GraphStatus:
    return GraphStatus(frame_stamp=msg.frame_stamp.sec + msg.frame_stamp.nanosec * 1e-9,
                       world_version=int(msg.world_version), truth_version=int(msg.truth_version),
                       objects=int(msg.objects), people=int(msg.people))
