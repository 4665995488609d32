"""``run_node``: the body of every node's main()."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor

from raider_ros.ros.graph import SPINNING


def run_node(factory: Callable[[], "rclpy.node.Node"], args=None, threads: int = 4) -> int:
    """Init rclpy, build the node, spin it on a MultiThreadedExecutor until shutdown.

    ``--help`` (before any ``--ros-args``) prints what the node does and its parameters
    (name, default, description) and exits 0. A node that cannot start (bad parameter, scene
    that does not load, ...) raises in its constructor; the message is printed and the
    process exits with status 1.
    """
    argv = list(args if args is not None else sys.argv)
    own = argv[1:argv.index("--ros-args")] if "--ros-args" in argv else argv[1:]
    if "--help" in own or "-h" in own:
        print(node_help(factory, argv[0] if argv else ""))
        return 0
    rclpy.init(args=argv)
    node = None
    try:
        node = factory()
        executor = MultiThreadedExecutor(num_threads=threads)
        executor.add_node(node)
        # the line NodeGraph.wait_up looks for: this process's node is built and serving
        node.get_logger().info(f"{SPINNING} (pid {os.getpid()})")
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except StartupError as exc:
        print(f"[{exc.node_name}] cannot start: {exc}", file=sys.stderr)
        return 1
    finally:
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return 0


def node_help(factory: Callable, program: str = "") -> str:
    """Usage, the node module's summary and its parameter table (from the module's PARAMS)."""
    module = sys.modules.get(getattr(factory, "__module__", ""), None)
    name = Path(program).name or getattr(factory, "__name__", "node")
    doc = (getattr(module, "__doc__", "") or "").strip()
    summary = doc.split("\n\n")[0] if doc else ""
    params = list(getattr(module, "PARAMS", ()))
    lines = [f"usage: {name} [--help] [--ros-args -p NAME:=VALUE ... --params-file FILE]", ""]
    if summary:
        lines += [summary, ""]
    lines.append(f"parameters (defaults; share/raider_ros/config/{name}.yaml holds the same):")
    width = max((len(p.name) for p in params), default=0)
    for p in params:
        lines.append(f"  {p.name:<{width}}  {p.default!r:<24}  {p.description}")
    if not params:
        lines.append("  (none)")
    return "\n".join(lines)


class StartupError(RuntimeError):
    def __init__(self, node_name: str, message: str):
        super().__init__(message)
        self.node_name = node_name
