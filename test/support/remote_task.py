"""Run the faults task (support/faults.py) from wherever this process runs - inside the second
network namespace for test_two_hosts.py - and print its outcome as one JSON line.

    python test/support/remote_task.py [timeout_s]
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.faults import SETUP, run_task, task_done  # noqa: E402
from support.graph import GraphClient  # noqa: E402


def main(timeout_s: float) -> dict:
    client = GraphClient(None, name="remote_task_client")
    t0 = time.monotonic()
    try:
        end = t0 + timeout_s
        while True:      # the simulator across the link: discovery takes a few seconds
            try:
                client.wait_refreshed(client.apply(SETUP), timeout=max(1.0, end - time.monotonic()))
                break
            except (TimeoutError, AssertionError):
                if time.monotonic() > end:
                    raise
        ready_s = time.monotonic() - t0
        run = run_task(client, max(30.0, end - time.monotonic()))
        return {"success": run.success, "message": run.message, "stages": run.stages,
                "task_done": task_done(client), "ready_s": round(ready_s, 1),
                "task_s": round(time.monotonic() - t0 - ready_s, 1)}
    finally:
        client.close()


if __name__ == "__main__":
    print(json.dumps(main(float(sys.argv[1]) if len(sys.argv) > 1 else 240.0)), flush=True)
    # The outcome is printed; leave without the interpreter's teardown, where DDS threads still
    # running in this namespace have aborted the process ("terminate called without an active
    # exception") after a task that had succeeded.
    sys.stderr.flush()
    os._exit(0)
