"""Fakes shared by the rules reasoner's unit tests: a Grounder over a plain pool of ids with an
empty conversation, and get_obj_properties answers with measured colours."""
from __future__ import annotations

import time
from types import SimpleNamespace

from raider_ros.agent.backends.rules.grounding import Grounder, Pool
from raider_ros.agent.backends.rules.transcript import Observations, read_conversation


def grounder(kb, ids, people=None, obs=None) -> Grounder:
    """A Grounder for the objects ``ids`` (and ``people``: id -> recognised name); ``obs``
    replaces its observations (a fake answering perception tools)."""
    conv = read_conversation([{"role": "system", "content": ""}, {"role": "user", "content": "Query: x"}])
    g = Grounder(Observations(conv), kb, Pool(list(ids), None, dict(people or {})), deadline=time.monotonic() + 60)
    if obs is not None:
        g.obs = obs
    return g


class Props:
    """get_obj_properties answers: id -> (colour name, measured RGB)."""

    def __init__(self, seen):
        self.seen = seen

    def get(self, tool, obj):
        colour, rgb = self.seen[obj]
        return SimpleNamespace(pending=False, ok=True, data={"object": obj, "colour": colour, "rgb": rgb})
