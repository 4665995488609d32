"""Start the whole node graph without launch_ros: the same nodes, parameter files and launch
arguments as `ros2 launch raider_ros raider.launch.py` (both read launch/graph.yaml).

    raider_graph [ARG:=VALUE ...] [--log-dir DIR]
    python -m raider_ros.cli.graph sim:=false backend:=openai

Prints every node it started (pid, parameter overrides, log file), restarts nodes marked
respawn when they exit, and stops them all on Ctrl-C. ``--help`` lists the arguments.
"""
from __future__ import annotations

import argparse
import sys
import time

from raider_ros.common.graph_spec import GraphSpecError, load_graph_spec


def _parser(spec) -> argparse.ArgumentParser:
    lines = [f"  {a.name + ':=' + a.default:<20} {a.description}" for a in spec.arguments.values()]
    p = argparse.ArgumentParser(
        prog="raider_graph", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Start the raider_ros node graph (the nodes of launch/graph.yaml) without launch_ros.",
        epilog="launch arguments (ARG:=VALUE):\n" + "\n".join(lines))
    p.add_argument("assignments", nargs="*", metavar="ARG:=VALUE")
    p.add_argument("--log-dir", default=None, help="where each node's log goes (default: a new temporary folder)")
    p.add_argument("--dry-run", action="store_true", help="print what would start, start nothing")
    return p


def parse_assignments(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition(":=")
        if not sep or not name:
            raise GraphSpecError(f"expected ARG:=VALUE, got {item!r}")
        out[name] = value
    return out


def main(argv: list[str] | None = None) -> int:
    try:
        spec = load_graph_spec()
    except GraphSpecError as exc:
        print(f"raider_graph: {exc}", file=sys.stderr)
        return 2
    args = _parser(spec).parse_args(argv)
    try:
        planned = spec.plan(parse_assignments(args.assignments))
    except GraphSpecError as exc:
        print(f"raider_graph: {exc}", file=sys.stderr)
        return 2
    for n in planned:
        extra = " ".join(f"{k}:={v}" for k, v in n.overrides.items())
        print(f"{'would start' if args.dry_run else 'starting'} {n.executable:<18} config/{n.config}"
              f"{'  ' + extra if extra else ''}{'  (respawn)' if n.respawn else ''}", flush=True)
    if args.dry_run:
        return 0
    from raider_ros.ros.graph import NodeGraph
    graph = NodeGraph(args.log_dir)
    try:
        for n in planned:
            proc = graph.start(n.executable, n.overrides)
            print(f"  {n.executable}: pid {proc.process.pid}, log {proc.log_path}", flush=True)
        print("graph running; Ctrl-C stops it", flush=True)
        respawn = {n.executable: n for n in planned if n.respawn}
        while True:
            time.sleep(0.5)
            for name, node in list(graph.nodes.items()):
                if node.alive():
                    continue
                code = node.process.returncode
                if name in respawn:
                    print(f"{name} exited with status {code}; restarting in 2 s", flush=True)
                    graph.stop(name)
                    time.sleep(2.0)
                    n = respawn[name]
                    graph.start(n.executable, n.overrides)
                else:
                    print(f"{name} exited with status {code}:\n{node.log_tail()}", file=sys.stderr, flush=True)
                    return 1
    except KeyboardInterrupt:
        print("stopping the graph", flush=True)
        return 0
    finally:
        graph.stop_all()


if __name__ == "__main__":
    sys.exit(main())
