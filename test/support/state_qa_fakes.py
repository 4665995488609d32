"""State-QA test helpers: a selector that always picks the given modules, and a summary built
from keyword facts (``object__Mug_1="..."`` is the fact ``object:Mug_1``)."""
from __future__ import annotations

from raider_ros.state_qa.selector import Selection
from raider_ros.state_qa.summary import StateSummary


class FixedSelector:
    config = None

    def __init__(self, *labels):
        self.labels = labels

    def select(self, q):
        return Selection(self.labels)


def S(module, t, text, **facts):
    return StateSummary(module, t, text, tuple((k.replace("__", ":"), v) for k, v in facts.items()))
