"""Shared test set-up: every test session talks on its own ROS domain, so parallel runs and
other ROS graphs on the machine never cross-talk."""
import atexit
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path

# test helpers import as `support.<module>` (test/support/)
TEST_DIR = Path(__file__).resolve().parent
if str(TEST_DIR) not in sys.path:
    sys.path.insert(0, str(TEST_DIR))

# a ROS domain per process; pytest-xdist workers (gw0, gw1, ...) get distinct ones
_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
_domain = random.Random(os.getpid()).randint(1, 90)
if _worker.startswith("gw") and _worker[2:].isdigit():
    _domain = 91 + int(_worker[2:]) % 10
os.environ.setdefault("ROS_DOMAIN_ID", str(_domain))
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# a memory node started by a test (directly or in a node graph) keeps its default database in a
# throw-away folder, never in the user's ~/.local/share/raider_ros
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="raider-test-data-")
atexit.register(shutil.rmtree, os.environ["XDG_DATA_HOME"], True)


import pytest  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _close_leftover_graph_clients():
    """A test module's GraphClients end with the module: their nodes (fake services included)
    would otherwise stay on the domain and answer the next module's calls."""
    yield
    from support.graph import OPEN_CLIENTS
    for client in list(OPEN_CLIENTS):
        client.close()
