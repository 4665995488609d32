"""A lesson acknowledged by EpisodicMemory.add survives the process being killed (SIGKILL)
right after the acknowledgement, even while the process is busy writing more."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from raider_ros.memory.store import EpisodicMemory
from test_memory_store import WordEncoder

REPO = Path(__file__).resolve().parents[2]
UNIT = Path(__file__).resolve().parent

CHILD = textwrap.dedent("""
    import sys, time
    sys.path[:0] = [{repo!r}, {unit!r}]
    from raider_ros.memory.episode import Episode
    from raider_ros.memory.store import EpisodicMemory
    from test_memory_store import WordEncoder
    m = EpisodicMemory({db!r}, encoder=WordEncoder(), seeds=None)
    ep = m.add(Episode(scope="task", kind="lesson", task="deliver",
                       instructions=("bring me my medicine", "next time bring a glass of water with it"),
                       plan="move_to(SideTable_1)\\npick(Glass_1)"))
    print("ACK", ep.id, flush=True)
    i = 0
    while {keep_writing}:            # more lessons, to be killed in the middle of one
        m.add(Episode(scope="task", kind="lesson", task="fetch", instructions=(f"filler {{i}}",),
                      plan="pick(Apple_1)"))
        i += 1
    time.sleep(60)
""")


@pytest.mark.parametrize("keep_writing", [False, True], ids=["idle", "writing"])
def test_acknowledged_lesson_survives_sigkill(tmp_path, keep_writing):
    db = tmp_path / "episodes.db"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(repo=str(REPO), unit=str(UNIT), db=str(db), keep_writing=keep_writing)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = child.stdout.readline()
        assert line.startswith("ACK "), child.stderr.read()
        os.kill(child.pid, signal.SIGKILL)            # right after the acknowledgement
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    lesson_id = int(line.split()[1])
    with EpisodicMemory(db, encoder=WordEncoder(), seeds=None) as m:   # "after a restart"
        got = m.get(lesson_id)
        assert got.instructions[1] == "next time bring a glass of water with it"
        assert got.plan == "move_to(SideTable_1)\npick(Glass_1)"
        assert m.retrieve("bring me my medicine", k=1)[0].episode.id == lesson_id
        # every other lesson is complete: an episode and all its instructions, or nothing
        for e in m.list():
            assert e.instructions and e.plan
