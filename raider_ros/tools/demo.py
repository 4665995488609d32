"""make demo: start the simulated world on the default scene and report what the camera sees."""
from __future__ import annotations

import sys
import time

from raider_ros.ros.graph import NodeGraph


def main(args=None) -> int:
    from raider_ros.tools import camera_report

    with NodeGraph() as graph:
        print("Starting sim_world (scene: kitchen, offline, no LLM needed) ...", flush=True)
        graph.start("sim_world")
        time.sleep(0.5)
        graph.check_alive()
        status = camera_report.main(["--timeout", "30"])
        if status != 0:
            print(graph.nodes["sim_world"].log_tail(), file=sys.stderr)
        return status


if __name__ == "__main__":
    sys.exit(main())
