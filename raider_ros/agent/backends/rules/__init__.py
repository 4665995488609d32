"""The ``rules`` LLM backend: an offline reasoner that follows the agent procedure (Ground,
Ask & Answer, Issue) with the same tool-call text protocol as a language model, from
knowledge files in data/knowledge/ (categories, verbs and qualifiers, preconditions).

``from raider_ros.agent.backends.rules import RulesReasoner``; importing this package also registers
the backend as ``make_llm("rules", ...)``.
"""
from .reasoner import RulesReasoner

try:  # the backend registry is optional for users of the class itself
    from raider_ros.agent.backends import register_llm
except ImportError:  # pragma: no cover - registry module missing in a partial install
    register_llm = None
if register_llm is not None:
    register_llm("rules", RulesReasoner)

__all__ = ["RulesReasoner"]
