"""Direct LTLf semantics over a finite trace (ROS-free): the reference the automata are tested
against, written independently of them (no automaton, no MONA).

A trace is a non-empty sequence of positions; each position is the set of atoms true there
(atoms not in the set are false). With n positions and 0 <= i < n:

=============  ==============================================================================
``a``          a is in position i
``X f``        i + 1 < n and f holds at i + 1 (strong next: false at the last position)
``WX f``       i + 1 = n or f holds at i + 1 (weak next: true at the last position)
``F f``        f holds at some j, i <= j < n
``G f``        f holds at every j, i <= j < n
``f U g``      g holds at some j >= i and f at every k with i <= k < j
``f W g``      f U g, or f holds at every j >= i
``f R g``      g holds at every j >= i up to and including the first k where f holds (if any)
=============  ==============================================================================

A trace satisfies a formula when it holds at position 0. The empty trace is not a trace.
"""
from __future__ import annotations

from functools import lru_cache
from typing import AbstractSet, Sequence

from .ltl import Atom, Binary, Const, Formula, Not, Unary


def holds(f: Formula, trace: Sequence[AbstractSet[Atom]], i: int = 0) -> bool:
    """Does ``f`` hold at position ``i`` of the finite, non-empty ``trace``?"""
    n = len(trace)
    if n == 0:
        raise ValueError("LTLf is defined over non-empty traces")
    if not 0 <= i < n:
        raise IndexError(f"position {i} outside a trace of length {n}")
    frozen = tuple(frozenset(p) for p in trace)

    @lru_cache(maxsize=None)
    def at(g: Formula, k: int) -> bool:
        if isinstance(g, Const):
            return g.value
        if isinstance(g, Atom):
            return g in frozen[k]
        if isinstance(g, Not):
            return not at(g.f, k)
        if isinstance(g, Unary):
            if g.op == "X":
                return k + 1 < n and at(g.f, k + 1)
            if g.op == "WX":
                return k + 1 >= n or at(g.f, k + 1)
            if g.op == "F":
                return any(at(g.f, j) for j in range(k, n))
            if g.op == "G":
                return all(at(g.f, j) for j in range(k, n))
        if isinstance(g, Binary):
            op, a, b = g.op, g.left, g.right
            if op == "&":
                return at(a, k) and at(b, k)
            if op == "|":
                return at(a, k) or at(b, k)
            if op == "->":
                return (not at(a, k)) or at(b, k)
            if op == "<->":
                return at(a, k) == at(b, k)
            if op in ("U", "W"):
                for j in range(k, n):
                    if at(b, j):
                        return True
                    if not at(a, j):
                        return False
                return op == "W"          # b never held, a held throughout
            if op == "R":
                for j in range(k, n):
                    if not at(b, j):
                        return False
                    if at(a, j):
                        return True
                return True
        raise TypeError(f"not a formula: {g!r}")

    return at(f, i)
