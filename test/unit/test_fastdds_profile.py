"""config/fastdds.xml, the DDS profile every node of the graph loads (scripts/env.sh): the short
lease, and a shared-memory segment that holds camera images (with Fast DDS's 512 kB default, a
killed node left the simulator's large images undelivered for good)."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from raider_ros.common.paths import config_dir
from raider_ros.sim.scene import Camera

NS = {"d": "http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles"}
UDP_ONLY = Path(__file__).resolve().parents[1] / "data" / "fastdds_udp_only.xml"


def profile(path: Path):
    root = ET.parse(path).getroot()
    transports = {t.findtext("d:transport_id", namespaces=NS): t
                  for t in root.iterfind(".//d:transport_descriptor", NS)}
    part = root.find(".//d:participant", NS)
    assert part is not None and part.get("is_default_profile") == "true"
    used = [e.text for e in part.iterfind("d:rtps/d:userTransports/d:transport_id", NS)]
    assert set(used) <= set(transports), f"{path.name}: a participant uses an undeclared transport"
    lease = part.find("d:rtps/d:builtin/d:discovery_config/d:leaseDuration", NS)
    return transports, used, part, int(lease.findtext("d:sec", namespaces=NS))


def test_the_graph_profile_has_a_shared_memory_segment_for_many_camera_images():
    transports, used, part, lease = profile(config_dir() / "fastdds.xml")
    assert lease == 4
    assert part.findtext("d:rtps/d:useBuiltinTransports", namespaces=NS) == "false"
    kinds = {transports[t].findtext("d:type", namespaces=NS) for t in used}
    assert kinds == {"SHM", "UDPv4"}          # UDP: discovery and other machines
    shm = next(transports[t] for t in used if transports[t].findtext("d:type", namespaces=NS) == "SHM")
    cam = Camera()
    image_bytes = cam.width * cam.height_px * 4          # depth (32FC1) and instance ids (32SC1)
    assert int(shm.findtext("d:segment_size", namespaces=NS)) >= 16 * image_bytes


@pytest.mark.parametrize("path", [UDP_ONLY], ids=["two-host test"])
def test_the_two_host_profile_is_udp_only_with_the_same_lease(path):
    transports, used, part, lease = profile(path)
    assert lease == profile(config_dir() / "fastdds.xml")[3]
    assert [transports[t].findtext("d:type", namespaces=NS) for t in used] == ["UDPv4"]


@pytest.mark.parametrize("path", [config_dir() / "fastdds.xml", UDP_ONLY], ids=["graph", "two-host test"])
def test_writers_wait_seconds_for_a_clients_reply_reader(path):
    """rmw_fastrtps waits the response writer's max_blocking_time for the client's reply reader
    before it sends a service reply; Fast DDS's 100 ms lost replies to new servers."""
    root = ET.parse(path).getroot()
    writer = root.find(".//d:data_writer[@is_default_profile='true']", NS)
    assert writer is not None
    wait = writer.find("d:qos/d:reliability/d:max_blocking_time", NS)
    assert int(wait.findtext("d:sec", namespaces=NS)) >= 2
