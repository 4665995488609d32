"""Two 'hosts' on one machine: two network namespaces joined by a veth pair, each with its own
address on one subnet (10.231.<k>.1 and .2 /24), loopback up and a multicast route, so DDS
discovers across them as between two machines on one LAN (issue 11, README "Two machines").

Needs the privilege to create namespaces (root or CAP_NET_ADMIN); :func:`unavailable` says why
not, for the test to skip with that reason.
"""
from __future__ import annotations

import os
from pathlib import Path
import shutil
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Host:
    netns: str
    iface: str
    address: str

    def prefix(self) -> list[str]:
        """Command prefix that runs a program inside this host's namespace."""
        return ["ip", "netns", "exec", self.netns]


def _ip(*args: str) -> None:
    r = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)
    if r.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {r.stderr.strip() or r.stdout.strip()}")


def unavailable() -> str | None:
    """Why two namespaces cannot be made here, or None when they can (tried, then removed)."""
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    probe = f"raider_probe_{os.getpid()}"
    try:
        _ip("netns", "add", probe)
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        return f"cannot create a network namespace (needs root or CAP_NET_ADMIN): {e}"
    try:
        _ip("netns", "del", probe)
    except RuntimeError:
        pass
    return None


@contextmanager
def two_hosts(tag: str | None = None):
    """Yield (host_a, host_b) joined by a veth pair; everything is removed afterwards."""
    tag = tag or str(os.getpid() % 100000)
    k = os.getpid() % 200 + 20
    a = Host(f"raider_a_{tag}", f"rva{tag}"[:15], f"10.231.{k}.1")
    b = Host(f"raider_b_{tag}", f"rvb{tag}"[:15], f"10.231.{k}.2")
    made: list[str] = []
    try:
        for h in (a, b):
            _ip("netns", "add", h.netns)
            made.append(h.netns)
        _ip("link", "add", a.iface, "type", "veth", "peer", "name", b.iface)
        for h in (a, b):
            _ip("link", "set", h.iface, "netns", h.netns)
            _ip("-n", h.netns, "addr", "add", f"{h.address}/24", "dev", h.iface)
            _ip("-n", h.netns, "link", "set", "lo", "up")
            _ip("-n", h.netns, "link", "set", h.iface, "up", "multicast", "on")
            _ip("-n", h.netns, "route", "add", "224.0.0.0/4", "dev", h.iface)
        yield a, b
    finally:
        for ns in made:      # deleting a namespace deletes its end of the veth pair, and so both
            try:
                _ip("netns", "del", ns)
            except RuntimeError:
                pass


def host_env(base: dict | None = None) -> dict:
    """DDS settings of a node on one of the two hosts: discovery beyond localhost, UDP only
    (shared memory would cross the namespaces through /dev/shm and hide a network fault)."""
    env = dict(os.environ if base is None else base)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "SUBNET"
    env.pop("ROS_LOCALHOST_ONLY", None)
    env.pop("ROS_STATIC_PEERS", None)
    env["FASTDDS_BUILTIN_TRANSPORTS"] = "UDPv4"
    # config/fastdds.xml turns the built-in transports off (it sets its own shared-memory and
    # UDP transports), so the variable above alone would not keep shared memory out
    env["FASTRTPS_DEFAULT_PROFILES_FILE"] = str(Path(__file__).resolve().parents[1] / "data" / "fastdds_udp_only.xml")
    return env
