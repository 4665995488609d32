"""sim_world: the simulated household that plays the robot's camera and skills.

Publishes RGB, depth (32FC1, metres) and per-pixel instance ids rendered with open3d's
RaycastingScene, with CameraInfo, the camera pose and the instance labels, at ``rate_hz``;
with the same stamps, the base laser's sensor_msgs/LaserScan on ``scan`` (frame
``laser_frame``: on the base's axis ``scan_height_m`` up, x along the base yaw; see
raider_ros/sim/scan.py) and that frame's pose in the world on ``scan/pose``; the robot state
on ``robot_state``. Serves ``sim/load_scene``, ``sim/apply_setup``,
``sim/get_ground_truth`` and the ``execute_skill`` action. A thin adapter over
:class:`raider_ros.sim.world.SimWorld`. World versions count on from the node's start time in
milliseconds, so a restarted simulator never publishes a version below one it published before.
"""
from __future__ import annotations

import json
import threading
import time

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import CameraInfo, Image, LaserScan
from geometry_msgs.msg import PoseStamped
from std_msgs.msg import Header

from raider_ros.action import ExecuteSkill
from raider_ros.common.paths import resolve_scene
from raider_ros.sim.scan import LaserModel
from raider_ros.sim.scene import SceneError, load_scene, load_scene_text, load_yaml_text
from raider_ros.sim.world import SimWorld
from raider_ros.msg import InstanceLabels, ObjectTruth, PersonTruth, RobotState
from raider_ros.ros import conversions as conv
from raider_ros.ros.params import Param, declare
from raider_ros.ros.spin import StartupError, run_node
from raider_ros.ros.state_summary import StateSummaryPublisher
from raider_ros.srv import ApplySetup, GetGroundTruth, LoadScene
from raider_ros.state_qa.summarizers import summarize_sim_robot
from raider_ros.state_qa.trackers import SkillLog
from raider_ros.ros.qos import LATCHED, SENSOR

PARAMS = (
    Param("scene", "kitchen", "Scene to load at start: a path, or a scene name/file under share/raider_ros/data/scenes"),
    Param("rate_hz", 5.0, "Camera and robot-state publishing rate [Hz]"),
    Param("world_frame", "map", "Frame id of the world frame"),
    Param("camera_frame", "camera_optical_frame", "Frame id of the camera's optical frame"),
    Param("skill_duration_s", 0.5, "Simulated duration of one skill; feedback is sent during it [s]"),
    Param("handover_distance_m", 0.5, "A handover needs the person within this distance of the camera's optical centre [m]"),
    Param("approach_standoff_m", 0.45, "move_to stops this far in front of the target's box [m]"),
    Param("publish_scan", True, "Publish the base laser's scan on 'scan' and its pose on 'scan/pose'"),
    Param("laser_frame", "base_laser", "Frame id of the base laser (on the base's axis, x along the base yaw)"),
    Param("scan_height_m", LaserModel().height_m, "Base laser: height of the scan plane above the floor [m]"),
    Param("scan_fov_deg", LaserModel().fov_deg, "Base laser: field of view, centred on the base yaw [deg]"),
    Param("scan_resolution_deg", LaserModel().resolution_deg, "Base laser: angle between beams [deg]"),
    Param("scan_range_min_m", LaserModel().range_min_m, "Base laser: shortest range reported [m]"),
    Param("scan_range_max_m", LaserModel().range_max_m, "Base laser: longest range reported; no return reads inf [m]"),
)



class SimWorldNode(Node):
    def __init__(self, **kwargs):
        super().__init__("sim_world", **kwargs)
        self.p = declare(self, PARAMS)
        if self.p["rate_hz"] <= 0:
            raise StartupError(self.get_name(), f"parameter rate_hz must be positive, got {self.p['rate_hz']}")
        try:
            laser = LaserModel(height_m=self.p["scan_height_m"], fov_deg=self.p["scan_fov_deg"],
                               resolution_deg=self.p["scan_resolution_deg"], range_min_m=self.p["scan_range_min_m"],
                               range_max_m=self.p["scan_range_max_m"])
        except ValueError as exc:
            raise StartupError(self.get_name(), f"base laser parameters: {exc}") from None
        # versions count on from the start time (ms): a restarted simulator's versions stay above
        # the ones it published before, which the scene graph and the checks compare against
        self.world = SimWorld(skill_duration_s=self.p["skill_duration_s"],
                              handover_distance_m=self.p["handover_distance_m"],
                              approach_standoff_m=self.p["approach_standoff_m"], laser=laser,
                              first_version=time.time_ns() // 1_000_000)
        try:
            self.world.load(load_scene(resolve_scene(self.p["scene"])))
        except SceneError as exc:
            raise StartupError(self.get_name(), str(exc)) from None

        self._skill_lock = threading.Lock()
        self._published_version = -1
        self._msgs: dict[str, object] = {}
        services = ReentrantCallbackGroup()
        timer_group = MutuallyExclusiveCallbackGroup()

        self.pub_rgb = self.create_publisher(Image, "camera/color/image_raw", SENSOR)
        self.pub_depth = self.create_publisher(Image, "camera/depth/image_raw", SENSOR)
        self.pub_ids = self.create_publisher(Image, "camera/instance_ids", SENSOR)
        self.pub_info = self.create_publisher(CameraInfo, "camera/camera_info", SENSOR)
        self.pub_pose = self.create_publisher(PoseStamped, "camera/pose", SENSOR)
        self.pub_labels = self.create_publisher(InstanceLabels, "camera/instance_labels", SENSOR)
        self.pub_robot = self.create_publisher(RobotState, "robot_state", LATCHED)
        self.pub_scan = self.create_publisher(LaserScan, "scan", SENSOR) if self.p["publish_scan"] else None
        self.pub_scan_pose = self.create_publisher(PoseStamped, "scan/pose", SENSOR) if self.p["publish_scan"] else None
        self.summaries, self.skill_log = StateSummaryPublisher(self), SkillLog()   # robot state for state_qa

        self.create_service(LoadScene, "sim/load_scene", self._on_load_scene, callback_group=services)
        self.create_service(ApplySetup, "sim/apply_setup", self._on_apply_setup, callback_group=services)
        self.create_service(GetGroundTruth, "sim/get_ground_truth", self._on_truth, callback_group=services)
        self._action = ActionServer(
            self, ExecuteSkill, "execute_skill", execute_callback=self._on_execute,
            goal_callback=self._on_goal, cancel_callback=lambda _g: CancelResponse.ACCEPT,
            callback_group=services)
        self.create_timer(1.0 / self.p["rate_hz"], self._publish, callback_group=timer_group)
        self.get_logger().info(f"world '{self.world.scene.name}' loaded: {len(self.world.scene.objects)} objects, "
                               f"{len(self.world.scene.people)} people; publishing at {self.p['rate_hz']} Hz")

    # ------------------------------------------------------------------ publishing
    def _publish(self) -> None:
        frame, scan = self.world.sensors()        # one world version for both
        header = Header(stamp=self.get_clock().now().to_msg(), frame_id=self.p["camera_frame"])
        if frame.world_version != self._published_version:
            self._msgs = {
                "rgb": conv.image_to_msg(frame.rgb, "rgb8"),
                "depth": conv.image_to_msg(frame.depth, "32FC1"),
                "ids": conv.image_to_msg(frame.instance, "32SC1"),
                "info": conv.camera_info_msg(frame.camera),
                "pose": conv.camera_pose_msg(frame.camera),
                "labels": InstanceLabels(
                    instance_ids=list(frame.labels.keys()),
                    object_ids=[v[0] for v in frame.labels.values()],
                    types=[v[1] for v in frame.labels.values()],
                    world_version=frame.world_version),
            }
            if self.pub_scan is not None:
                self._msgs["scan"], self._msgs["scan_pose"] = conv.scan_to_msgs(scan, 1.0 / self.p["rate_hz"])
            self._published_version = frame.world_version
            self._publish_robot_state()
        world_header = Header(stamp=header.stamp, frame_id=self.p["world_frame"])
        for key, pub in (("rgb", self.pub_rgb), ("depth", self.pub_depth), ("ids", self.pub_ids),
                         ("info", self.pub_info), ("pose", self.pub_pose), ("labels", self.pub_labels)):
            msg = self._msgs[key]
            msg.header = world_header if key == "pose" else header
            pub.publish(msg)
        if self.pub_scan is not None:
            self._msgs["scan"].header = Header(stamp=header.stamp, frame_id=self.p["laser_frame"])
            self._msgs["scan_pose"].header = world_header
            self.pub_scan.publish(self._msgs["scan"])
            self.pub_scan_pose.publish(self._msgs["scan_pose"])

    def _robot_state_msg(self) -> RobotState:
        truth = self.world.truth()
        msg = RobotState(**conv.robot_state_fields(truth["robot"]))
        msg.header = Header(stamp=self.get_clock().now().to_msg(), frame_id=self.p["world_frame"])
        msg.scene = truth["name"]
        msg.world_version = self.world.version
        return msg

    def _publish_robot_state(self) -> None:
        self.pub_robot.publish(self._robot_state_msg())
        self.summaries.publish(lambda: summarize_sim_robot(self.world, self.skill_log))

    # ------------------------------------------------------------------ services
    def _on_load_scene(self, req, res):
        try:
            if req.yaml_text.strip():
                scene = load_scene_text(req.yaml_text, "<sim/load_scene yaml_text>")
            elif req.path.strip():
                scene = load_scene(resolve_scene(req.path.strip()))
            else:
                raise SceneError("sim/load_scene: give a path or yaml_text")
            with self._skill_lock:
                self.world.load(scene)
            res.success, res.message = True, f"loaded scene '{scene.name}'"
            self.get_logger().info(res.message)
        except SceneError as exc:
            res.success, res.message = False, str(exc)
            self.get_logger().warning(f"load_scene refused: {exc}")
        res.scene_name = self.world.scene.name
        res.world_version = self.world.version
        return res

    def _on_apply_setup(self, req, res):
        try:
            setup = load_yaml_text(req.setup_yaml, "<sim/apply_setup setup_yaml>") if req.setup_yaml.strip() else None
            with self._skill_lock:
                self.world.apply_setup(setup, reset=req.reset)
            res.success, res.message = True, "setup applied" if setup else ("scene reset" if req.reset else "nothing to apply")
        except SceneError as exc:
            res.success, res.message = False, str(exc)
            self.get_logger().warning(f"apply_setup refused: {exc}")
        res.world_version = self.world.version
        return res

    def _on_truth(self, _req, res):
        truth = self.world.truth()
        res.success, res.message = True, ""
        res.scene_name = truth["name"]
        res.robot = self._robot_state_msg()
        for o in truth["objects"]:
            state = o.get("state") or {}
            res.objects.append(ObjectTruth(
                id=o["id"], type=o["type"], shape=o["shape"], center=conv.point(o["center"]),
                size=conv.vector3(o["size"]), yaw_deg=float(o.get("yaw_deg") or 0.0),
                open_top=bool(o.get("open_top")), door=o.get("door") or "",
                properties=list(o.get("properties") or []),
                state_keys=list(state.keys()), state_values=[bool(v) for v in state.values()]))
        for p in truth["people"]:
            st = p.get("state") or {}
            res.people.append(PersonTruth(
                id=p["id"], name=p.get("name") or "", center=conv.point(p["center"]), size=conv.vector3(p["size"]),
                looking_at_robot=bool(st.get("looking_at_robot", False)), hands_free=bool(st.get("hands_free", True))))
        res.truth_json = json.dumps(truth)
        return res

    # ------------------------------------------------------------------ skills
    def _on_goal(self, goal):
        if self._skill_lock.locked():
            self.get_logger().warning(f"rejected skill {goal.skill}{list(goal.args)}: another skill is running")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_execute(self, goal_handle):
        req = goal_handle.request
        result = ExecuteSkill.Result()
        if not self._skill_lock.acquire(blocking=False):
            goal_handle.abort()
            result.success, result.message = False, "another skill is running"
            return result
        try:
            def feedback(stage: str, progress: float, message: str) -> None:
                goal_handle.publish_feedback(ExecuteSkill.Feedback(stage=stage, progress=float(progress), message=message))

            outcome = self.world.execute(req.skill, list(req.args), feedback=feedback,
                                         cancel=lambda: goal_handle.is_cancel_requested)
        finally:
            self._skill_lock.release()
        result.success, result.message = bool(outcome.success), outcome.message
        self.skill_log.record(req.skill, list(req.args), outcome.success, outcome.message)
        result.robot = self._robot_state_msg()
        self._publish_robot_state()
        if goal_handle.is_cancel_requested and not outcome.success:
            goal_handle.canceled()
        elif outcome.success:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        self.get_logger().info(f"skill {req.skill}{list(req.args)}: {'ok' if outcome.success else 'failed'} - {outcome.message}")
        return result


def main(args=None) -> int:
    return run_node(SimWorldNode, args=args)
