"""``run_node``: the body of every node's main()."""
from __future__ import annotations

import sys
from typing import Callable

import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor


def run_node(factory: Callable[[], "rclpy.node.Node"], args=None, threads: int = 4) -> int:
    """Init rclpy, build the node, spin it on a MultiThreadedExecutor until shutdown.

    A node that cannot start (bad parameter, scene that does not load, ...) raises in its
    constructor; the message is printed and the process exits with status 1.
    """
    rclpy.init(args=args if args is not None else sys.argv)
    node = None
    try:
        node = factory()
        executor = MultiThreadedExecutor(num_threads=threads)
        executor.add_node(node)
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


class StartupError(RuntimeError):
    def __init__(self, node_name: str, message: str):
        super().__init__(message)
        self.node_name = node_name
