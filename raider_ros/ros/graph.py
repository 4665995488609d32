"""Run the node graph with the project's own executables (where ``ros2 launch`` is absent).

``NodeGraph`` starts each node as its own process from ``<prefix>/lib/raider_ros/<name>``
with ``config/<name>.yaml`` and parameter overrides, keeps each node's log in a file, and
stops them with SIGINT (then SIGTERM/SIGKILL). Used by the demo, the evaluation command and
the integration tests; launch/raider.launch.py describes the same graph for robots.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# what raider_ros.ros.spin.run_node logs once a node is built and spins: "spinning (pid N)"
SPINNING = "spinning"


def executable_path(name: str) -> Path:
    from ament_index_python.packages import get_package_prefix
    path = Path(get_package_prefix("raider_ros")) / "lib" / "raider_ros" / name
    if not path.is_file():
        raise FileNotFoundError(f"no executable {path}: is the package built (scripts/setup.sh)?")
    return path


def config_file(name: str) -> Path | None:
    from raider_ros.common.paths import config_dir
    p = config_dir() / f"{name}.yaml"
    return p if p.is_file() else None


def _param_arg(name: str, value: Any) -> str:
    if isinstance(value, bool):
        value = "true" if value else "false"
    elif isinstance(value, (list, tuple)):
        value = "[" + ",".join(str(v) for v in value) + "]"
    return f"{name}:={value}"


@dataclass
class NodeProcess:
    name: str
    process: subprocess.Popen
    log_path: Path
    extra: dict = field(default_factory=dict)

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class NodeGraph:
    def __init__(self, log_dir: str | Path | None = None, env: dict | None = None,
                 prefix: list[str] | None = None, placement: dict[str, list[str]] | None = None):
        """``prefix``: a command every node is started through, e.g. ``ip netns exec <ns>``
        to run the graph in a network namespace (test/integration/test_two_hosts.py).
        ``placement``: a prefix per executable that overrides ``prefix`` for it: part of the
        graph on another host (``raider_demo --robot-prefix``)."""
        self.prefix = list(prefix or [])
        self.placement = {k: list(v) for k, v in (placement or {}).items()}
        self.log_dir = Path(log_dir) if log_dir else Path(tempfile.mkdtemp(prefix="raider_graph_"))
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.env = {**os.environ, **(env or {})}
        self.env.setdefault("PYTHONUNBUFFERED", "1")
        self.nodes: dict[str, NodeProcess] = {}

    def start(self, executable: str, params: dict | None = None, name: str | None = None,
              args: list[str] | None = None, namespace: str | None = None) -> NodeProcess:
        name = name or executable
        cmd = [*self.placement.get(executable, self.prefix), sys.executable, str(executable_path(executable)),
               *(args or []), "--ros-args"]
        cfg = config_file(executable)
        if cfg is not None:
            cmd += ["--params-file", str(cfg)]
        if name != executable:
            cmd += ["-r", f"__node:={name}"]
        if namespace:
            cmd += ["-r", f"__ns:={namespace}"]
        for k, v in (params or {}).items():
            cmd += ["-p", _param_arg(k, v)]
        log_path = self.log_dir / f"{name}.log"
        log = open(log_path, "wb")  # noqa: SIM115 - owned by the process record
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                start_new_session=True)
        node = NodeProcess(name, proc, log_path, {"log": log, "cmd": cmd, "log_from": 0})
        self.nodes[name] = node
        return node

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` (default SIGKILL: no goodbye, no clean shutdown) to a node's process
        group; the record stays so :meth:`restart` can start it again."""
        n = self.nodes[name]
        try:
            os.killpg(n.process.pid, sig)
        except ProcessLookupError:
            pass
        try:
            n.process.wait(5.0)
        except subprocess.TimeoutExpired:
            pass

    def restart(self, name: str) -> NodeProcess:
        """Start a node again with the command it was started with (what respawn does); its log
        continues in the same file."""
        old = self.nodes[name]
        if old.alive():
            self.stop(name)
        else:
            self.nodes.pop(name, None)
            old.extra["log"].close()
        log = open(old.log_path, "ab")  # noqa: SIM115 - owned by the process record
        log_from = log.tell()
        proc = subprocess.Popen(old.extra["cmd"], stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                start_new_session=True)
        node = NodeProcess(name, proc, old.log_path, {"log": log, "cmd": old.extra["cmd"], "log_from": log_from})
        self.nodes[name] = node
        return node

    def wait_up(self, name: str, timeout: float = 60.0) -> None:
        """Wait until the node's current process has built its node and spins (its log says so).
        After a SIGKILL, DDS lists the dead node and its services for a while (until its lease
        runs out): the graph's names cannot tell a restarted node from the dead one."""
        n = self.nodes[name]
        end = time.monotonic() + timeout
        while True:
            try:
                with open(n.log_path, "rb") as f:
                    f.seek(n.extra.get("log_from", 0))
                    if f"{SPINNING} (pid ".encode() in f.read():
                        return
            except OSError:
                pass
            if not n.alive():
                raise RuntimeError(f"node {name} exited with status {n.process.returncode}:\n{n.log_tail()}")
            if time.monotonic() > end:
                raise TimeoutError(f"node {name} did not start within {timeout:.0f} s:\n{n.log_tail()}")
            time.sleep(0.1)

    def check_alive(self) -> None:
        for n in self.nodes.values():
            if not n.alive():
                raise RuntimeError(f"node {n.name} exited with status {n.process.returncode}:\n{n.log_tail()}")

    def stop(self, name: str, timeout: float = 5.0) -> int | None:
        n = self.nodes.pop(name, None)
        if n is None:
            return None
        for sig, wait in ((signal.SIGINT, timeout), (signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0)):
            if n.process.poll() is not None:
                break
            try:
                os.killpg(n.process.pid, sig)
            except ProcessLookupError:
                break
            try:
                n.process.wait(wait)
            except subprocess.TimeoutExpired:
                continue
        n.extra["log"].close()
        return n.process.returncode

    def stop_all(self) -> None:
        for name in list(self.nodes)[::-1]:
            self.stop(name)

    def __enter__(self) -> "NodeGraph":
        return self

    def __exit__(self, *exc) -> None:
        self.stop_all()


def wait_for_services(node, clients, timeout: float, graph: NodeGraph | None = None) -> None:
    """Wait until every client's service is available (checking the processes are alive)."""
    end = time.monotonic() + timeout
    pending = list(clients)
    while pending:
        if graph is not None:
            graph.check_alive()
        pending = [c for c in pending if not c.service_is_ready()]
        if not pending:
            return
        if time.monotonic() > end:
            names = ", ".join(c.srv_name for c in pending)
            raise TimeoutError(f"services not available after {timeout:.0f} s: {names}")
        time.sleep(0.05)
