"""Words with one meaning across the project: the spatial relations of benchmark format v1
that the tools, the perception pipeline, the oracle and the rules reasoner use."""
from __future__ import annotations

# The spatial relations the tools, the perception pipeline and the oracle answer (paper §3.4).
RELATIONS = ("inside", "on top of", "above", "below", "on the left of", "on the right of", "blocking", "near")


def check_relation(name: str) -> str:
    """Return ``name`` if it is a known relation, else raise ValueError naming the allowed ones."""
    if name not in RELATIONS:
        raise ValueError(f"unknown relation {name!r}; allowed: {', '.join(RELATIONS)}")
    return name
