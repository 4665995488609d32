"""camera_report: print what the robot's camera sees right now.

Subscribes to one complete camera frame (RGB, depth, instance ids, CameraInfo, camera pose,
instance labels), then prints one row per visible object or person: id, type, visible
pixels and the distance from the camera's optical centre to its nearest visible point,
measured from the depth image. Exits after one frame, or with an error naming the topics
that stayed silent.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import rclpy
from geometry_msgs.msg import PoseStamped
from rclpy.node import Node
from sensor_msgs.msg import CameraInfo, Image

from raider_ros.ros.stamp_sync import StampSync
from raider_ros.msg import InstanceLabels
from raider_ros.ros import conversions as conv

TOPICS = {
    "rgb": ("camera/color/image_raw", Image),
    "depth": ("camera/depth/image_raw", Image),
    "ids": ("camera/instance_ids", Image),
    "info": ("camera/camera_info", CameraInfo),
    "pose": ("camera/pose", PoseStamped),
    "labels": ("camera/instance_labels", InstanceLabels),
}


def summarize(depth: np.ndarray, ids: np.ndarray, labels: dict[int, tuple[str, str]], camera) -> list[dict]:
    """Per instance: visible pixels and nearest visible point distance [m] (NaN depth ignored)."""
    rows = []
    valid = np.isfinite(depth) & (depth > 0)
    flat_ids = ids.ravel()
    counts = np.bincount(flat_ids[flat_ids > 0], minlength=max(labels, default=0) + 1)
    vv, uu = np.nonzero(valid & (ids > 0))
    if len(vv):
        z = depth[vv, uu].astype(float)
        x = (uu - camera.cx) / camera.fx * z
        y = (vv - camera.cy) / camera.fy * z
        rng = np.sqrt(x * x + y * y + z * z)
        inst = ids[vv, uu]
    else:
        rng, inst = np.empty(0), np.empty(0, dtype=int)
    for iid, (entity, etype) in sorted(labels.items()):
        px = int(counts[iid]) if iid < len(counts) else 0
        if px == 0:
            continue
        sel = rng[inst == iid]
        rows.append({"id": entity, "type": etype, "pixels": px,
                     "distance_m": float(sel.min()) if len(sel) else float("nan")})
    rows.sort(key=lambda r: r["distance_m"])
    return rows


def format_table(rows: list[dict]) -> str:
    lines = [f"{'object':<20} {'type':<16} {'visible px':>10} {'distance':>9}", "-" * 58]
    for r in rows:
        lines.append(f"{r['id']:<20} {r['type']:<16} {r['pixels']:>10d} {r['distance_m']:>8.2f}m")
    return "\n".join(lines)


class CameraReport(Node):
    def __init__(self, **kwargs):
        super().__init__("camera_report", **kwargs)
        self.frame: dict | None = None
        self.seen: set[str] = set()
        self.sync = StampSync(TOPICS, self._on_frame)
        for key, (topic, mtype) in TOPICS.items():
            self.create_subscription(mtype, topic, lambda m, k=key: self._add(k, m), 2)

    def _add(self, key: str, msg) -> None:
        self.seen.add(key)
        self.sync.add(key, (msg.header.stamp.sec, msg.header.stamp.nanosec), msg)

    def _on_frame(self, group: dict) -> None:
        if self.frame is None:
            self.frame = group

    def report(self) -> list[dict]:
        g = self.frame
        camera = conv.camera_model_from_msgs(g["info"], g["pose"])
        labels = {int(i): (o, t) for i, o, t in zip(g["labels"].instance_ids, g["labels"].object_ids, g["labels"].types)}
        return summarize(conv.msg_to_image(g["depth"]), conv.msg_to_image(g["ids"]), labels, camera)


def main(args=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds to wait for a frame")
    ns, ros_args = parser.parse_known_args(args if args is not None else sys.argv[1:])
    rclpy.init(args=["camera_report", *ros_args])
    node = CameraReport()
    try:
        end = time.monotonic() + ns.timeout
        while node.frame is None and time.monotonic() < end and rclpy.ok():
            rclpy.spin_once(node, timeout_sec=0.1)
        if node.frame is None:
            silent = sorted(TOPICS[k][0] for k in set(TOPICS) - node.seen)
            print(f"camera_report: no complete camera frame within {ns.timeout:.0f} s; "
                  f"silent topics: {', '.join(silent) or 'none (stamps never matched)'}", file=sys.stderr)
            return 1
        labels = node.frame["labels"]
        print(f"Camera view (world version {labels.world_version}):")
        print(format_table(node.report()))
        return 0
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
