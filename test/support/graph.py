"""Integration-tier helpers: the node graph as separate processes, and a client node in this
process (its own rclpy Context, spun in a thread) to talk to it over DDS."""
from __future__ import annotations

import json
import threading
import time

import rclpy
from rclpy.context import Context
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import String

from raider_ros.ros.graph import NodeGraph, wait_for_services
from raider_ros.srv import ApplySetup, CallTool, GetGroundTruth, LoadScene
from raider_ros.ros.qos import LATCHED

PERCEPTION = ("object_detector", "depth_distance", "spatial_relations", "scene_graph")

# every client still open; test/conftest.py closes what a test module left open, so that a node
# of one module (a fake detect_issue, say) can never answer the calls of a later module
OPEN_CLIENTS: "set[GraphClient]" = set()


class GraphClient:
    """A test-side node with blocking helpers (calls are made from the test thread)."""

    def __init__(self, graph: NodeGraph | None = None, name: str = "integration_client"):
        self.graph = graph
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = Node(name, context=self.context)
        self.executor = MultiThreadedExecutor(num_threads=2, context=self.context)
        self.executor.add_node(self.node)
        self.status: dict = {}
        self._cond = threading.Condition()
        self.node.create_subscription(String, "scene_graph/json", self._on_graph, LATCHED)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()
        self._clients: dict = {}
        OPEN_CLIENTS.add(self)

    def __enter__(self) -> "GraphClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _on_graph(self, msg: String) -> None:
        doc = json.loads(msg.data)
        with self._cond:
            self.status = doc
            self._cond.notify_all()

    def client(self, srv_type, name: str):
        key = (srv_type, name)
        if key not in self._clients:
            self._clients[key] = self.node.create_client(srv_type, name)
        return self._clients[key]

    def action_client(self, action_type, name: str):
        """Action clients live as long as this client: destroying one while the executor
        thread waits on it is a race in rclpy."""
        from raider_ros.ros.actions import ActionClient
        key = (action_type, name)
        if key not in self._clients:
            self._clients[key] = ActionClient(self.node, action_type, name)
        return self._clients[key]

    def call(self, srv_type, name: str, timeout: float = 30.0, **fields):
        c = self.client(srv_type, name)
        wait_for_services(self.node, [c], timeout, self.graph)
        future = c.call_async(srv_type.Request(**fields))
        done = threading.Event()
        future.add_done_callback(lambda _f: done.set())
        if not done.wait(timeout):
            raise TimeoutError(f"{name}: no answer within {timeout} s")
        return future.result()

    def tool(self, tool: str, *args: str, timeout: float = 10.0):
        """Call a tool on its own service; returns (success, data or error)."""
        r = self.call(CallTool, f"scene_graph/tools/{tool}", timeout, args=list(args))
        return r.success, (json.loads(r.result) if r.success else (r.error, json.loads(r.result) if r.result else None))

    def wait_refreshed(self, version: int, timeout: float = 30.0) -> dict:
        end = time.monotonic() + timeout
        with self._cond:
            while not (self.status.get("world_version", -1) >= version and self.status.get("truth_version", -1) >= version):
                if self.graph is not None:
                    self.graph.check_alive()
                left = end - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"scene graph did not reach world version {version}: {self.status.get('world_version')}")
                self._cond.wait(min(left, 0.5))
            return self.status

    def load(self, path: str) -> int:
        r = self.call(LoadScene, "sim/load_scene", path=str(path))
        assert r.success, r.message
        return r.world_version

    def apply(self, setup_yaml: str, reset: bool = True) -> int:
        r = self.call(ApplySetup, "sim/apply_setup", setup_yaml=setup_yaml, reset=reset)
        assert r.success, r.message
        return r.world_version

    def truth(self) -> dict:
        return json.loads(self.call(GetGroundTruth, "sim/get_ground_truth").truth_json)

    def close(self) -> None:
        if self not in OPEN_CLIENTS:
            return
        OPEN_CLIENTS.discard(self)
        self.executor.shutdown(timeout_sec=2.0)
        self.node.destroy_node()
        self.context.try_shutdown()
