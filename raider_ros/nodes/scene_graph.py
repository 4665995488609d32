"""scene_graph: the robot's 3-D scene graph and the agent's tools.

Folds each perceived frame (3-D objects + spatial relations) into a networkx graph of
objects, people and the robot, with ids stable across frames; states, properties, names,
gaze and hands come from a provider (backend "sim": the simulator's truth, fetched whenever
the world version on ``robot_state`` changes). Publishes the graph as JSON on the latched
``scene_graph/json`` and as a visualization_msgs/MarkerArray on ``scene_graph/markers``.
Serves every tool on ``scene_graph/tools/<name>`` and all of them on ``scene_graph/call_tool``.

Base laser: with ``use_scan``, the sensor_msgs/LaserScan on ``scan`` and the laser's world pose
on ``scan/pose`` (paired by stamp) go to the tools, which report the floor obstacles it sees
on the path to a target (raider_ros/perception/base_scan.py). A frame takes the scan of its
own stamp (sim_world stamps camera and laser alike; once scans have come that way, a frame
waits up to ``scan_wait_s`` for its own, so a new world is never answered with the last
one's scan), else the newest earlier one at most ``scan_max_age_s`` old; with none, the
tools answer from the camera alone.

Retrieval (EmbodiedRAG, raider_ros/retrieval): ``scene_graph/retrieve`` (raider_ros/Retrieve)
answers a task text with the task-relevant subgraph and its scores; each answer is published
as JSON on ``scene_graph/retrieved`` (for transcripts) and as markers on
``scene_graph/retrieved_markers`` (RViz). Memory: ``scene_graph/remember`` (std_msgs/String,
JSON entries of ``SceneGraph.remember``) adds objects seen earlier elsewhere, e.g. a house's
other rooms.
"""
from __future__ import annotations

import json
import threading
import time

from collections import OrderedDict

import numpy as np
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import PoseStamped
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import LaserScan
from std_msgs.msg import ColorRGBA, String
from visualization_msgs.msg import Marker, MarkerArray

from raider_ros.common.limits import MAX_TOOL_ARG_CHARS
from raider_ros.msg import Objects3D, RobotState, SceneGraphStatus, SpatialRelations
from raider_ros.perception.pipeline import PerceptionResult
from raider_ros.perception.provider import TruthProvider
from raider_ros.perception.scene_graph import SceneGraph
from raider_ros.perception.toolbox import TOOL_PARAMS, ToolBox
from raider_ros.ros import conversions as conv
from raider_ros.ros.params import Param, declare
from raider_ros.ros.perception_msgs import content_key, msg_to_objects, msg_to_relations, subscribe_frame
from raider_ros.ros.spin import StartupError, run_node
from raider_ros.srv import CallTool, GetGroundTruth, Retrieve
from raider_ros.retrieval.retriever import RetrievalSettings, Retriever
from raider_ros.retrieval.scene_text import scene_text
from raider_ros.ros.state_summary import StateSummaryPublisher
from raider_ros.state_qa.summarizers import summarize_people, summarize_world_model
from raider_ros.ros.goal_queue import GraphStatus
from raider_ros.ros.qos import LATCHED, SENSOR
from raider_ros.perception.base_scan import BaseScan

PARAMS = (
    Param("provider", "sim", "Where states, properties, names, gaze and hands come from: sim (simulator truth)"),
    Param("forget_after_s", 30.0, "Objects not seen for this long are dropped from the graph [s]"),
    Param("path_clearance_m", 0.3, "check_free_path: an obstacle closer than this to the floor path blocks it [m]"),
    Param("user_info_corpus", "", "Corpus for retrieve_user_information ('' = data/user_info/corpus.yaml)"),
    Param("world_frame", "map", "Frame id of the markers"),
    Param("preload_user_info", True, "Load the sentence-embedding model for retrieve_user_information at start, "
                                     "in the background"),
    Param("user_info_wait_s", 3.0, "A retrieve_user_information call made while the model still loads waits "
                                   "this long, then answers 'loading' (below the agent's 5 s per-tool timeout) [s]"),
    Param("max_tool_arg_chars", MAX_TOOL_ARG_CHARS, "Longest tool argument accepted; a longer one is refused "
                                                    "without being echoed"),
    Param("retrieval_mode", "rag", "scene_graph/retrieve default mode: full | rag | rag-strict"),
    Param("retrieval_index", "faiss-flat", "Vector index of the scene-graph documents: faiss-flat | exact | hnswlib | usearch | faiss | annoy"),
    Param("retrieval_threshold", 0.5, "Entry points: cosine similarity at least this (objects seen earlier)"),
    Param("retrieval_k_memory", 3, "Entry points per entity among the objects seen earlier"),
    Param("use_scan", False, "Use the base laser ('scan' with its pose on 'scan/pose') for floor obstacles the camera "
                            "cannot see; without a scan the tools use the camera only. Off by default in the graph: "
                             "in the learning demo it reports a person and an unidentified cluster on the straight "
                             "path to the side table that the camera-only check does not (under study); "
                             "evaluate --mode local uses the laser"),
    Param("scan_max_age_s", 1.0, "A frame with no scan of its own stamp takes the newest earlier scan at most this "
                                 "old; none: camera only [s]"),
    Param("scan_wait_s", 0.5, "Once scans have come with the camera's stamps, a frame whose scan has not arrived yet "
                              "waits this long for it before it is folded in without it [s]"),
)



class SceneGraphNode(Node):
    def __init__(self, **kwargs):
        super().__init__("scene_graph", **kwargs)
        self.p = declare(self, PARAMS)
        if self.p["provider"] != "sim":
            raise StartupError(self.get_name(), f"unknown provider {self.p['provider']!r}; known: sim")
        self.provider = TruthProvider()
        self.graph = SceneGraph(forget_after_s=self.p["forget_after_s"])
        try:
            self.tools = ToolBox(self.graph, self.provider, {"path_clearance_m": self.p["path_clearance_m"],
                                                             "user_info_corpus": self.p["user_info_corpus"],
                                                             "user_info_wait_s": self.p["user_info_wait_s"],
                                                             "max_arg_chars": self.p["max_tool_arg_chars"]})
        except ValueError as exc:
            raise StartupError(self.get_name(), str(exc)) from None
        self.frame_version = -1        # world version of the last folded-in frame
        self.truth_version = -1        # world version of the provider's truth
        self._truth_pending = -1
        self._truth_asked = 0.0
        self.robot_version = -1        # newest world version announced on robot_state
        self._last_key: bytes | None = None
        self._last_update = 0.0
        self._lock = threading.Lock()
        tools_group = ReentrantCallbackGroup()
        self.pub_json = self.create_publisher(String, "scene_graph/json", LATCHED)
        self.pub_markers = self.create_publisher(MarkerArray, "scene_graph/markers", 2)
        self.pub_status = self.create_publisher(SceneGraphStatus, "scene_graph/status", LATCHED)
        self.summaries = StateSummaryPublisher(self, min_interval_s=1.0)   # world model and people for state_qa
        self.frame_stamp = 0.0         # header stamp [s] of the newest frame the graph reflects
        self.create_service(CallTool, "scene_graph/call_tool", self._on_call_tool, callback_group=tools_group)
        for name in TOOL_PARAMS:
            self.create_service(CallTool, f"scene_graph/tools/{name}",
                                lambda req, res, n=name: self._answer(n, list(req.args), res),
                                callback_group=tools_group)
        self.truth_client = self.create_client(GetGroundTruth, "sim/get_ground_truth",
                                               callback_group=MutuallyExclusiveCallbackGroup())
        self.create_subscription(RobotState, "robot_state", self._on_robot_state, LATCHED)
        self.create_timer(0.25, self._fetch_truth, callback_group=MutuallyExclusiveCallbackGroup())
        if self.p["preload_user_info"]:  # the first query would otherwise wait for the model to load
            self.tools.preload_user_info()
        try:
            self.retriever = Retriever(self.graph, RetrievalSettings(
                mode=self.p["retrieval_mode"], index=self.p["retrieval_index"],
                threshold=self.p["retrieval_threshold"], k_memory=self.p["retrieval_k_memory"]))
        except (ValueError, RuntimeError) as exc:
            raise StartupError(self.get_name(), f"retrieval: {exc}") from None
        self.pub_retrieved = self.create_publisher(String, "scene_graph/retrieved", 10)
        self.pub_retrieved_markers = self.create_publisher(MarkerArray, "scene_graph/retrieved_markers", 2)
        self.create_service(Retrieve, "scene_graph/retrieve", self._on_retrieve, callback_group=tools_group)
        self.create_subscription(String, "scene_graph/remember", self._on_remember, 10)
        self.sync = subscribe_frame(self, {"objects": ("perception/objects3d", Objects3D),
                                           "relations": ("perception/relations", SpatialRelations)}, self._on_frame)
        self._scans: OrderedDict[float, BaseScan] = OrderedDict()     # stamp -> scan, newest last
        self._scan_synced = False      # a scan has come with a frame's stamp: frames wait for theirs
        self._waiting: tuple[dict, float, float] | None = None      # (frame, its stamp, since)
        if self.p["use_scan"]:
            self.scan_sync = subscribe_frame(self, {"scan": ("scan", LaserScan), "pose": ("scan/pose", PoseStamped)},
                                             self._on_scan, qos=SENSOR)
            self.create_timer(0.1, self._on_wait_timer)

    # ------------------------------------------------------------------ inputs
    def _on_robot_state(self, msg: RobotState) -> None:
        self.robot_version = max(self.robot_version, int(msg.world_version))
        self._fetch_truth()

    def _fetch_truth(self) -> None:
        """Ask the simulator for its truth when the world moved past the provider's copy; a
        request that failed or went unanswered for 2 s is sent again (timer)."""
        if self.robot_version <= self.truth_version:
            return
        if self._truth_pending >= 0 and time.monotonic() - self._truth_asked < 2.0:
            return
        if not self.truth_client.service_is_ready():
            self.get_logger().warning("sim/get_ground_truth not available: states and people unknown",
                                      throttle_duration_sec=10.0)
            return
        self._truth_pending, self._truth_asked = self.robot_version, time.monotonic()
        future = self.truth_client.call_async(GetGroundTruth.Request())
        future.add_done_callback(self._on_truth)

    def _on_truth(self, future) -> None:
        res = future.result()
        self._truth_pending = -1
        if res is None or not res.success:
            return
        try:
            truth = json.loads(res.truth_json)
            self.provider.update(truth)
            self.truth_version = max(self.truth_version, int(truth.get("version", res.robot.world_version)))
        except ValueError as exc:
            self.get_logger().error(f"simulator truth rejected: {exc}")

    def _on_scan(self, g: dict) -> None:
        try:
            scan = conv.msgs_to_base_scan(g["scan"], g["pose"])
        except (ValueError, TypeError) as exc:
            self.get_logger().warning(f"base laser scan rejected: {exc}", throttle_duration_sec=10.0)
            return
        with self._lock:
            self._scans[scan.stamp] = scan
            while len(self._scans) > 16:
                self._scans.popitem(last=False)
            if scan.stamp == self.frame_stamp:      # the scan of the frame the graph shows came late
                self._scan_synced = True
                self._take_scan(scan)
        if self._waiting is not None and self._waiting[1] == scan.stamp:   # the frame waiting for it
            frame, self._waiting = self._waiting[0], None
            self._fold(frame)

    def _on_wait_timer(self) -> None:
        """A frame whose scan does not come is folded in without it after scan_wait_s."""
        if self._waiting is not None and time.monotonic() - self._waiting[2] >= self.p["scan_wait_s"]:
            frame, self._waiting = self._waiting[0], None
            self._fold(frame)

    def _take_scan(self, scan: BaseScan | None) -> None:
        """Hand a scan to the tools unless they have the same one already (caller holds the lock)."""
        cur = self.graph.snapshot().scan
        if scan is None or (cur is not None and cur.pose == scan.pose and np.array_equal(cur.ranges, scan.ranges)):
            return
        self.graph.set_scan(scan)

    def _scan_for(self, stamp: float) -> BaseScan | None:
        """The scan of this frame's stamp, else the newest earlier one within scan_max_age_s."""
        if stamp in self._scans:
            self._scan_synced = True
            return self._scans[stamp]
        earlier = [s for t, s in self._scans.items() if t <= stamp and stamp - t <= self.p["scan_max_age_s"]]
        return earlier[-1] if earlier else None

    def _on_frame(self, g: dict) -> None:
        """Fold in a frame; with scans that come with the camera's stamps, first wait (at most
        scan_wait_s) for the frame's own scan, so the tools never answer a new world with the
        last one's scan. A frame still waiting when the next arrives is folded in first."""
        stamp = g["objects"].header.stamp.sec + g["objects"].header.stamp.nanosec * 1e-9
        if self._waiting is not None:
            frame, self._waiting = self._waiting[0], None
            self._fold(frame)
        if self.p["use_scan"] and self._scan_synced and stamp not in self._scans:
            self._waiting = (g, stamp, time.monotonic())
            return
        self._fold(g)

    def _fold(self, g: dict) -> None:
        # An unchanged frame (same objects, relations, world and truth) is folded in at most
        # once a second, which keeps last_seen fresh without redoing the work at camera rate.
        key = content_key(g["objects"].world_version, self.truth_version,
                          repr([(o.name, o.distance_m, o.pixel_count) for o in g["objects"].objects]),
                          repr([(r.subject, r.relation, r.object) for r in g["relations"].relations]))
        now = time.monotonic()
        stamp = g["objects"].header.stamp
        self.frame_stamp = stamp.sec + stamp.nanosec * 1e-9
        if key == self._last_key and now - self._last_update < 1.0:
            with self._lock:         # the laser may see a change the camera does not
                self._take_scan(self._scan_for(self.frame_stamp))
            self._publish_status()   # the graph already reflects this (identical) frame
            return
        self._last_key, self._last_update = key, now
        objects = msg_to_objects(g["objects"])
        relations = msg_to_relations(g["relations"])
        with self._lock:
            self.graph.update(PerceptionResult(objects, relations), self.provider if self.provider.version else None,
                              scan=self._scan_for(self.frame_stamp))
            self.frame_version = int(g["objects"].world_version)
        self._sync_index()
        self._publish()

    # ------------------------------------------------------------------ outputs
    def status(self) -> GraphStatus:
        snap = self.graph.snapshot()
        return GraphStatus(frame_stamp=self.frame_stamp, world_version=self.frame_version,
                           truth_version=self.truth_version, objects=len(snap.ids("object")),
                           people=len(snap.ids("person")))

    def _publish_status(self) -> None:
        self.pub_status.publish(conv.status_to_msg(self.status()))

    def _publish(self) -> None:
        self._publish_status()
        snap = self.graph.snapshot()
        self.summaries.publish(lambda: [summarize_world_model(snap), summarize_people(snap)])
        st = self.status()
        self.pub_json.publish(String(data=json.dumps({"world_version": st.world_version, "truth_version": st.truth_version,
                                                      "frame_stamp": st.frame_stamp,
                                                      "graph": json.loads(snap.to_json())})))
        arr = MarkerArray()
        stamp = self.get_clock().now().to_msg()
        for m in snap.markers():
            for kind in ("box", "text"):
                mk = Marker()
                mk.header.frame_id, mk.header.stamp = self.p["world_frame"], stamp
                mk.ns, mk.id = f"{m['ns']}_{kind}", int(m["marker_id"])
                mk.type = Marker.CUBE if kind == "box" else Marker.TEXT_VIEW_FACING
                mk.action = Marker.ADD
                center = list(m["center"])
                if kind == "text":
                    center[2] += m["size"][2] / 2 + 0.08
                mk.pose = conv.pose_msg(center, (0.0, 0.0, 0.0, 1.0))
                mk.scale = conv.vector3(m["size"] if kind == "box" else (0.05, 0.05, 0.05))
                r, g_, b, a = m["color"]
                mk.color = ColorRGBA(r=float(r), g=float(g_), b=float(b), a=float(a) if kind == "box" else 1.0)
                mk.text = m["text"] if kind == "text" else ""
                mk.lifetime = Duration(sec=2)
                arr.markers.append(mk)
        self.pub_markers.publish(arr)

    # ------------------------------------------------------------------ retrieval
    def _sync_index(self) -> None:
        """The documents and their vector index follow the graph (changed documents only)."""
        try:
            self.retriever.sync()
        except (RuntimeError, OSError) as exc:     # no embedding model: retrieval answers with the error
            self.get_logger().warning(f"retrieval index not updated: {exc}", throttle_duration_sec=30.0)

    def _on_remember(self, msg: String) -> None:
        try:
            entries = json.loads(msg.data)
            n = self.graph.remember(entries if isinstance(entries, list) else [])
        except ValueError as exc:
            self.get_logger().error(f"scene_graph/remember rejected: {exc}")
            return
        self.get_logger().info(f"remembered {n} objects seen earlier")
        self._sync_index()
        self._publish()

    def _on_retrieve(self, req, res):
        try:
            sub = self.retriever.retrieve(req.task, req.context, mode=req.mode or None, full=bool(req.full_graph))
            if req.self_query and not sub.full:
                self.retriever.self_query(sub, list(req.self_query))
        except (ValueError, RuntimeError, OSError) as exc:
            res.success, res.error = False, str(exc)
            return res
        st = scene_text(sub)
        res.success, res.mode = True, sub.mode
        res.ids = sub.ids
        res.scores = [float(n.score) for n in sub.nodes.values()]
        res.reasons = ["; ".join(n.reasons) for n in sub.nodes.values()]
        res.subgraph_json = json.dumps(sub.to_dict(), default=str)
        res.scene_text, res.scene_tokens = st.text, int(st.tokens)
        res.total_objects, res.elapsed_ms = int(sub.total_objects), float(sub.elapsed_ms)
        self.pub_retrieved.publish(String(data=json.dumps({"task": sub.task, "mode": sub.mode, "ids": sub.ids,
                                                           "scene_tokens": st.tokens, "elapsed_ms": sub.elapsed_ms})))
        self._publish_retrieved_markers(set(sub.ids))
        return res

    def _publish_retrieved_markers(self, ids: set[str]) -> None:
        arr = MarkerArray()
        clear = Marker()
        clear.action = Marker.DELETEALL
        arr.markers.append(clear)
        stamp = self.get_clock().now().to_msg()
        for m in self.graph.snapshot().markers():
            if m["id"] not in ids:
                continue
            mk = Marker()
            mk.header.frame_id, mk.header.stamp = self.p["world_frame"], stamp
            mk.ns, mk.id, mk.type, mk.action = "retrieved", int(m["marker_id"]), Marker.CUBE, Marker.ADD
            mk.pose = conv.pose_msg(list(m["center"]), (0.0, 0.0, 0.0, 1.0))
            mk.scale = conv.vector3([s + 0.04 for s in m["size"]])
            mk.color = ColorRGBA(r=1.0, g=0.85, b=0.1, a=0.5)
            arr.markers.append(mk)
        self.pub_retrieved_markers.publish(arr)

    # ------------------------------------------------------------------ tools
    def _on_call_tool(self, req, res):
        return self._answer(req.tool, list(req.args), res)

    def _answer(self, tool: str, args: list, res):
        r = self.tools.call(tool, args, deadline=float("inf"))
        res.success = bool(r.success)
        res.result = r.text if r.success else (json.dumps(r.data) if r.data is not None else "")
        res.error = "" if r.success else (r.error or "tool call failed")
        return res


def main(args=None) -> int:
    return run_node(SceneGraphNode, args=args)
