"""object_detector: RGB (+ the simulator's instance ids for backend "sim") -> detections.

Publishes raider_ros/Detections (label, instance name, 2-D box, mask, score) on
``perception/detections`` with the stamp of the image it came from. The backend is chosen
by name (``raider_ros.perception.detection.make_detector``) so a learned detector can be
plugged in without touching this node.
"""
from __future__ import annotations

from rclpy.node import Node
from sensor_msgs.msg import Image

from raider_ros.msg import Detections, InstanceLabels
from raider_ros.perception.detection import DetectionError, make_detector
from raider_ros.ros.conversions import ConversionError, msg_to_image
from raider_ros.ros.params import Param, declare
from raider_ros.ros.perception_msgs import content_key, detections_to_msg, subscribe_frame
from raider_ros.ros.spin import StartupError, run_node

PARAMS = (
    Param("backend", "sim", "Detector backend: sim (the simulator's instance masks) or a registered learned detector"),
    Param("min_pixels", 20, "Detections with fewer mask pixels are dropped"),
)


class ObjectDetectorNode(Node):
    def __init__(self, **kwargs):
        super().__init__("object_detector", **kwargs)
        self.p = declare(self, PARAMS)
        try:
            self.detector = make_detector(self.p["backend"], min_pixels=self.p["min_pixels"])
        except (ValueError, TypeError) as exc:
            raise StartupError(self.get_name(), str(exc)) from None
        self.pub = self.create_publisher(Detections, "perception/detections", 2)
        topics = {"rgb": ("camera/color/image_raw", Image)}
        if self.p["backend"] == "sim":
            topics |= {"ids": ("camera/instance_ids", Image), "labels": ("camera/instance_labels", InstanceLabels)}
        self.sync = subscribe_frame(self, topics, self._on_frame)
        self.frames = 0
        self._last: tuple[bytes, Detections] | None = None   # (input key, output) of the last frame

    def _on_frame(self, g: dict) -> None:
        key = content_key(g["rgb"].data, *((g["ids"].data, repr(g["labels"])) if "ids" in g else ()))
        if self._last is not None and self._last[0] == key:   # same images: same detections
            msg = self._last[1]
            msg.header = g["rgb"].header
            msg.instance_mask.header = g["rgb"].header
            self.pub.publish(msg)
            return
        try:
            rgb = msg_to_image(g["rgb"])
            kwargs = {}
            version = 0
            if "ids" in g:
                lab = g["labels"]
                kwargs = {"instance": msg_to_image(g["ids"]),
                          "labels": {int(i): (o, t) for i, o, t in zip(lab.instance_ids, lab.object_ids, lab.types)}}
                version = lab.world_version
            dets = self.detector.detect(rgb, **kwargs)
        except (ConversionError, DetectionError) as exc:
            self.get_logger().warning(f"frame skipped: {exc}", throttle_duration_sec=5.0)
            return
        msg = detections_to_msg(dets, rgb.shape[:2], g["rgb"].header, self.p["backend"], version)
        self._last = (key, msg)
        self.pub.publish(msg)
        self.frames += 1


def main(args=None) -> int:
    return run_node(ObjectDetectorNode, args=args)
