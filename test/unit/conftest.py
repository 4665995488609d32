"""Fixtures shared by the unit tests of the rules reasoner (a module may define its own)."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def kb():
    from raider_ros.agent.backends.rules.knowledge import load_knowledge
    return load_knowledge()


@pytest.fixture(scope="module")
def reasoner():
    from raider_ros.agent.backends.rules import RulesReasoner
    r = RulesReasoner()
    assert r.warm_up(), "the packaged embedding model does not load"
    return r
