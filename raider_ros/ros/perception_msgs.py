"""Perception values <-> raider_ros messages (Detections, Objects3D, SpatialRelations)."""
from __future__ import annotations

import json
import math

import numpy as np

from raider_ros.msg import Detections, Object3D, ObjectDetection, Objects3D, SpatialRelation, SpatialRelations
from raider_ros.perception.scene_graph import jsonable
from raider_ros.perception.types import Detection, PerceivedObject, Relation
from raider_ros.ros.conversions import image_to_msg, msg_to_image, point


def detections_to_msg(dets: list[Detection], shape: tuple[int, int], header, backend: str,
                      world_version: int) -> Detections:
    mask = np.zeros(shape, np.int32)
    out = []
    for i, d in enumerate(dets, start=1):
        mask[d.mask] = i
        out.append(ObjectDetection(label=d.label, name=d.name, mask_id=i, bbox=[int(x) for x in d.bbox],
                                   score=float(d.score), pixel_count=int(d.pixel_count)))
    return Detections(header=header, detections=out, instance_mask=image_to_msg(mask, "32SC1", header),
                      backend=backend, world_version=int(world_version))


def msg_to_detections(msg: Detections) -> list[Detection]:
    mask_img = msg_to_image(msg.instance_mask)
    return [Detection(label=d.label, name=d.name, instance_id=int(d.mask_id), bbox=tuple(int(x) for x in d.bbox),
                      mask=(mask_img == d.mask_id), score=float(d.score))
            for d in msg.detections]


def objects_to_msg(objects: dict[str, PerceivedObject], header, world_version: int) -> Objects3D:
    out = []
    for o in objects.values():
        pts = np.asarray(o.points, np.float32).reshape(-1, 3)
        lo = o.aabb_min if len(pts) else np.full(3, np.nan)
        hi = o.aabb_max if len(pts) else np.full(3, np.nan)
        out.append(Object3D(
            name=o.name, label=o.label, is_person=bool(o.is_person), aabb_min=point(lo), aabb_max=point(hi),
            centroid=point(o.centroid if len(pts) else np.full(3, np.nan)),
            distance_m=float(o.distance_m), pixel_count=int(o.pixel_count),
            valid_depth_pixels=int(o.valid_depth_pixels), bbox=[int(x) for x in o.bbox],
            points=pts.ravel().tolist()))
    return Objects3D(header=header, objects=out, world_version=int(world_version))


def msg_to_objects(msg: Objects3D) -> dict[str, PerceivedObject]:
    out = {}
    for m in msg.objects:
        pts = np.asarray(m.points, np.float64).reshape(-1, 3)
        lo = np.array([m.aabb_min.x, m.aabb_min.y, m.aabb_min.z])
        hi = np.array([m.aabb_max.x, m.aabb_max.y, m.aabb_max.z])
        status = "ok" if len(pts) else ("empty_mask" if m.pixel_count == 0 else "no_valid_depth")
        out[m.name] = PerceivedObject(
            name=m.name, label=m.label, points=pts, aabb_min=lo, aabb_max=hi,
            distance_m=float(m.distance_m) if not math.isnan(m.distance_m) else math.inf,
            pixel_count=int(m.pixel_count), bbox=tuple(int(x) for x in m.bbox),
            valid_depth_pixels=int(m.valid_depth_pixels), is_person=bool(m.is_person), status=status)
    return out


def attach_pixels(objects: dict[str, PerceivedObject], detections: list[Detection], depth: np.ndarray) -> None:
    """Give each object the (u, v, depth) of its valid mask pixels (needed for occlusion tests)."""
    valid = np.isfinite(depth) & (depth > 0)
    for d in detections:
        o = objects.get(d.name)
        if o is None:
            continue
        vv, uu = np.nonzero(d.mask & valid)
        o.pixels = np.stack([uu, vv, depth[vv, uu]], axis=1).astype(np.float32)


def relations_to_msg(relations: list[Relation], header, world_version: int) -> SpatialRelations:
    return SpatialRelations(header=header, world_version=int(world_version), relations=[
        SpatialRelation(subject=r.subject, relation=r.relation, object=r.object,
                        evidence_json=json.dumps(jsonable(r.evidence))) for r in relations])


def msg_to_relations(msg: SpatialRelations) -> list[Relation]:
    return [Relation(r.subject, r.relation, r.object, json.loads(r.evidence_json or "{}")) for r in msg.relations]



def subscribe_frame(node, topics: dict, callback, qos=2, callback_group=None):
    """Subscribe to several topics and call ``callback(group)`` with one message per key once
    all have arrived with the same header stamp (one camera frame)."""
    from raider_ros.ros.stamp_sync import StampSync

    sync = StampSync(topics, callback)
    for key, (topic, mtype) in topics.items():
        node.create_subscription(
            mtype, topic, lambda m, k=key: sync.add(k, (m.header.stamp.sec, m.header.stamp.nanosec), m),
            qos, callback_group=callback_group)
    return sync


def content_key(*parts) -> bytes:
    """Digest of message contents (image bytes, arrays, strings): a frame whose inputs are
    byte-identical to the previous one gives the same outputs, so a node can republish its
    last result under the new stamp instead of recomputing it."""
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    for p in parts:
        if isinstance(p, str):
            p = p.encode()
        elif not isinstance(p, (bytes, bytearray, memoryview)):
            p = memoryview(p) if hasattr(p, "__buffer__") or hasattr(p, "tobytes") else repr(p).encode()
        h.update(p)
        h.update(b"\x00")
    return h.digest()
