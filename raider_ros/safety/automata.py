"""LTLf formulas to deterministic finite automata through MONA (ROS-free).

Compilation: the formula's atoms are renamed ``p0, p1, ...`` (so formulas that differ only in
their atoms share one automaton), the PyPI package ``ltlf2dfa`` encodes it as a MONA program
(first-order logic over the positions of a finite trace), and the MONA binary (Debian package
``mona``) builds the minimal DFA. MONA runs in a private temporary directory with a time
limit; its textual output is read into a :class:`DFA` whose transitions are guards over the
atoms (``mask``/``value`` bit patterns, one bit per atom). ``docs/safety.md`` has the
measurements that chose this tool chain over ``flloat``.

MONA's automaton starts in a state that reads one dummy letter before the trace; the
:class:`DFA` here starts after that letter, so its initial state stands for the empty prefix and
each letter is one position of the trace.

Compiled automata are cached in memory, keyed by the normal text of the renamed formula, and
optionally on disk (JSON files, :class:`Compiler` ``cache_dir``).

:func:`equivalent` decides language equivalence of two formulas on the product of their
automata (and returns a distinguishing trace when they differ); :func:`joint_live` tells
whether several automata, each in a given state, can still accept one common continuation.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from . import ltl
from .ltl import Atom, Binary, Const, Formula, LTLError, Not, Unary
from raider_ros.common.shared import Shared

MONA_TIMEOUT_S = 30.0


class CompileError(LTLError):
    """The tool chain could not build an automaton (MONA missing, timed out or failed)."""


# --------------------------------------------------------------------------- automaton
@dataclass(frozen=True)
class DFA:
    """A complete DFA over valuations of ``atoms`` (bit i of a letter = atom i is true).

    ``transitions[q]`` is a tuple of ``(mask, value, target)``: a letter ``v`` takes the edge
    when ``v & mask == value``; the guards of one state are disjoint and cover every letter.
    """
    atoms: tuple[Atom, ...]
    initial: int
    accepting: frozenset[int]
    transitions: tuple[tuple[tuple[int, int, int], ...], ...]
    live: frozenset[int] = field(default=frozenset())   # states from which acceptance is reachable

    @property
    def n_states(self) -> int:
        return len(self.transitions)

    def step(self, q: int, letter: int) -> int:
        for mask, value, target in self.transitions[q]:
            if letter & mask == value:
                return target
        raise RuntimeError(f"state {q} has no edge for letter {letter:b}")  # complete DFA: never

    def letter(self, true_atoms: Iterable[Atom] | Mapping[Atom, bool]) -> int:
        if isinstance(true_atoms, Mapping):
            true_atoms = [a for a, v in true_atoms.items() if v]
        s = set(true_atoms)
        return sum(1 << i for i, a in enumerate(self.atoms) if a in s)

    def run(self, word: Sequence[int], q: int | None = None) -> int:
        q = self.initial if q is None else q
        for letter in word:
            q = self.step(q, letter)
        return q

    def accepts_trace(self, trace: Sequence[Iterable[Atom]]) -> bool:
        return self.run([self.letter(p) for p in trace]) in self.accepting

    def is_dead(self, q: int) -> bool:
        return q not in self.live

    def with_atoms(self, atoms: tuple[Atom, ...]) -> "DFA":
        """The same automaton over other atoms (position by position)."""
        if len(atoms) != len(self.atoms):
            raise ValueError(f"expected {len(self.atoms)} atoms, got {len(atoms)}")
        return DFA(atoms, self.initial, self.accepting, self.transitions, self.live)

    # serialisation (disk cache) ------------------------------------------------------
    def to_json(self) -> dict:
        return {"atoms": [str(a) for a in self.atoms], "initial": self.initial,
                "accepting": sorted(self.accepting), "live": sorted(self.live),
                "transitions": [[list(e) for e in row] for row in self.transitions]}

    @classmethod
    def from_json(cls, d: dict, atoms: tuple[Atom, ...]) -> "DFA":
        return cls(atoms, int(d["initial"]), frozenset(d["accepting"]),
                   tuple(tuple((int(m), int(v), int(t)) for m, v, t in row) for row in d["transitions"]),
                   frozenset(d["live"]))


def live_states(transitions: Sequence[Sequence[tuple[int, int, int]]], accepting: Iterable[int]) -> frozenset[int]:
    """States from which some accepting state is reachable (reverse search)."""
    preds: dict[int, set[int]] = {}
    for q, row in enumerate(transitions):
        for _m, _v, t in row:
            preds.setdefault(t, set()).add(q)
    live = set(accepting)
    todo = list(live)
    while todo:
        t = todo.pop()
        for q in preds.get(t, ()):
            if q not in live:
                live.add(q)
                todo.append(q)
    return frozenset(live)


# --------------------------------------------------------------------------- MONA back end
def to_ltlf2dfa(f: Formula):
    """The formula as an ``ltlf2dfa`` syntax tree (``W`` expanded to ``(a U b) | G a``)."""
    from ltlf2dfa import ltlf as L

    def go(g: Formula):
        if isinstance(g, Const):
            return L.LTLfTrue() if g.value else L.LTLfFalse()
        if isinstance(g, Atom):
            if g.args or not re.fullmatch(r"[a-z][a-z0-9_]*", g.name):
                raise CompileError(f"atom {g} must be renamed to a proposition before compiling")
            return L.LTLfAtomic(g.name)
        if isinstance(g, Not):
            return L.LTLfNot(go(g.f))
        if isinstance(g, Unary):
            cls = {"X": L.LTLfNext, "WX": L.LTLfWeakNext, "F": L.LTLfEventually, "G": L.LTLfAlways}[g.op]
            return cls(go(g.f))
        if isinstance(g, Binary):
            a, b = go(g.left), go(g.right)
            if g.op == "W":
                return L.LTLfOr([L.LTLfUntil([a, b]), L.LTLfAlways(go(g.left))])
            cls = {"&": L.LTLfAnd, "|": L.LTLfOr, "->": L.LTLfImplies, "<->": L.LTLfEquivalence,
                   "U": L.LTLfUntil, "R": L.LTLfRelease}[g.op]
            return cls([a, b])
        raise TypeError(f"not a formula: {g!r}")

    return go(f)


def mona_program(f: Formula) -> str:
    """The MONA program ``ltlf2dfa`` writes for a formula over propositions ``p0, p1, ...``."""
    from ltlf2dfa.base import MonaProgram
    return MonaProgram(to_ltlf2dfa(f)).mona_program()


_STATE_LINE = re.compile(r"^State (\d+): ([01X]*) -> state (\d+)\s*$")


def parse_mona_output(text: str, n_atoms: int, names: Sequence[str]) -> tuple[int, frozenset[int], tuple]:
    """(initial, accepting, transitions) from ``mona -w`` output; bit i <-> ``names[i]``."""
    free: list[str] = []
    accepting: set[int] = set()
    edges: dict[int, list[tuple[int, int, int]]] = {}
    found_header = False
    for line in text.splitlines():
        if line.startswith("DFA for formula with free variables:"):
            free = line.split(":", 1)[1].split()
            found_header = True
        elif line.startswith("Accepting states:"):
            accepting = {int(x) for x in line.split(":", 1)[1].split()}
        else:
            m = _STATE_LINE.match(line)
            if m:
                src, guard, dst = int(m.group(1)), m.group(2), int(m.group(3))
                if free and len(guard) != len(free):
                    raise CompileError(f"MONA guard {guard!r} does not fit the variables {free}")
                bit_of = {v.lower(): i for i, v in enumerate(names)}
                mask = value = 0
                for var, ch in zip(free, guard):
                    bit = bit_of.get(var.lower())
                    if bit is None:
                        raise CompileError(f"MONA reported an unknown variable {var!r}")
                    if ch != "X":
                        mask |= 1 << bit
                        if ch == "1":
                            value |= 1 << bit
                edges.setdefault(src, []).append((mask, value, dst))
    if not found_header or 0 not in edges:
        raise CompileError(f"cannot read MONA's automaton from its output: {text[:300]!r}")
    n = max(max(edges), *(t for row in edges.values() for _, _, t in row)) + 1
    transitions = tuple(tuple(edges.get(q, [(0, 0, q)])) for q in range(n))
    # MONA's state 0 reads one dummy letter; all its edges lead to one state: the real start.
    starts = {t for _, _, t in transitions[0]}
    if len(starts) != 1:
        raise CompileError(f"unexpected MONA start state with edges to {sorted(starts)}")
    return starts.pop(), frozenset(accepting), transitions


class Compiler:
    """Compiles formulas to :class:`DFA` with MONA; caches by formula shape.

    ``cache=False`` turns the in-memory cache off (the cold-compile benchmark);
    ``cache_dir`` adds an on-disk cache of JSON files (kept across processes).
    Thread-safe: MONA runs outside the lock, each call in its own temporary directory.
    """

    def __init__(self, *, mona: str | None = None, timeout_s: float = MONA_TIMEOUT_S,
                 cache: bool = True, cache_dir: str | Path | None = None):
        self.mona = mona or shutil.which("mona") or "mona"
        self.timeout_s = timeout_s
        self.cache_enabled = cache
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self._cache: dict[str, DFA] = {}
        self._lock = threading.Lock()
        self.compiled = 0          # MONA runs (cache misses)
        self.compile_ms_total = 0.0

    def compile(self, f: Formula | str) -> DFA:
        """The DFA of a formula over its own atoms (in order of first appearance)."""
        if isinstance(f, str):
            f = ltl.parse(f)
        key, ats = ltl.shape_key(f)
        shape = self._shape(key)
        return shape.with_atoms(ats)

    def cache_size(self) -> int:
        return len(self._cache)

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    # ------------------------------------------------------------------ internals
    def _shape(self, key: str) -> DFA:
        if self.cache_enabled:
            with self._lock:
                hit = self._cache.get(key)
            if hit is not None:
                return hit
            hit = self._disk_get(key)
            if hit is not None:
                with self._lock:
                    self._cache[key] = hit
                return hit
        dfa = self._run_mona(key)
        if self.cache_enabled:
            with self._lock:
                self._cache[key] = dfa
            self._disk_put(key, dfa)
        return dfa

    def _run_mona(self, key: str) -> DFA:
        shape = ltl.parse(key)
        names = tuple(a.name for a in ltl.atoms(shape))
        # positions of p0, p1, ... as bits 0, 1, ...: sort the names by their index
        order = sorted(names, key=lambda s: int(s[1:]))
        program = mona_program(shape)
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="raider_ltl_") as tmp:
            path = os.path.join(tmp, "formula.mona")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(program)
            try:
                proc = subprocess.run([self.mona, "-q", "-u", "-w", path], capture_output=True,
                                      text=True, timeout=self.timeout_s)
            except FileNotFoundError:
                raise CompileError(f"the MONA binary {self.mona!r} is not installed "
                                   "(Debian package 'mona'; scripts/setup.sh installs it)") from None
            except subprocess.TimeoutExpired:
                raise CompileError(f"MONA did not finish within {self.timeout_s:g} s for {key}") from None
        if proc.returncode != 0 or "DFA for formula" not in proc.stdout:
            err = (proc.stderr or proc.stdout).strip().splitlines()
            raise CompileError(f"MONA failed on {key}: {err[-1] if err else 'no output'}")
        initial, accepting, transitions = parse_mona_output(proc.stdout, len(order), order)
        self.compiled += 1
        self.compile_ms_total += (time.perf_counter() - t0) * 1000.0
        atoms = tuple(Atom(n) for n in order)
        return DFA(atoms, initial, accepting, transitions, live_states(transitions, accepting))

    def _disk_path(self, key: str) -> Path | None:
        if self.cache_dir is None:
            return None
        digest = hashlib.sha256(("ltlf2dfa-mona/1\n" + key).encode()).hexdigest()[:32]
        return self.cache_dir / f"{digest}.json"

    def _disk_get(self, key: str) -> DFA | None:
        p = self._disk_path(key)
        if p is None or not p.is_file():
            return None
        try:
            d = json.loads(p.read_text(encoding="utf-8"))
            if d.get("key") != key:
                return None
            return DFA.from_json(d["dfa"], tuple(Atom(a) for a in d["dfa"]["atoms"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None            # a damaged cache file is rebuilt

    def _disk_put(self, key: str, dfa: DFA) -> None:
        p = self._disk_path(key)
        if p is None:
            return
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            tmp = p.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"key": key, "dfa": dfa.to_json()}), encoding="utf-8")
            tmp.replace(p)
        except OSError:
            pass                   # the cache is an optimisation only


_default = Shared(Compiler)


def default_compiler() -> Compiler:
    """The process's compiler (one cache of compiled automata)."""
    return _default()


def compile_formula(f: Formula | str, compiler: Compiler | None = None) -> DFA:
    return (compiler or default_compiler()).compile(f)


# --------------------------------------------------------------------------- products
def _letters_union(dfas: Sequence[DFA]) -> tuple[tuple[Atom, ...], list[list[int]]]:
    """Union of the automata's atoms and, per automaton, its atom index -> union bit."""
    union: dict[Atom, int] = {}
    maps: list[list[int]] = []
    for d in dfas:
        maps.append([union.setdefault(a, len(union)) for a in d.atoms])
    return tuple(union), maps


def _lift(mask: int, value: int, bitmap: list[int]) -> tuple[int, int]:
    m = v = 0
    for i, bit in enumerate(bitmap):
        if mask >> i & 1:
            m |= 1 << bit
            if value >> i & 1:
                v |= 1 << bit
    return m, v


def _joint_edges(dfas: Sequence[DFA], maps: list[list[int]], states: Sequence[int]):
    """Every combination of one edge per automaton whose guards agree on shared atoms:
    yields (mask, value, targets) with the combined guard."""
    lifted = [[(*_lift(m, v, maps[k]), t) for m, v, t in dfas[k].transitions[q]]
              for k, q in enumerate(states)]

    def rec(k: int, mask: int, value: int, targets: tuple[int, ...]):
        if k == len(lifted):
            yield mask, value, targets
            return
        for m, v, t in lifted[k]:
            common = mask & m
            if (value & common) != (v & common):
                continue
            yield from rec(k + 1, mask | m, value | v, targets + (t,))

    yield from rec(0, 0, 0, ())


def _witness(mask: int, value: int, atoms: tuple[Atom, ...]) -> frozenset[Atom]:
    """A letter matching the guard (atoms the guard leaves open are false)."""
    return frozenset(a for i, a in enumerate(atoms) if value >> i & 1)


def joint_live(dfas: Sequence[DFA], states: Sequence[int] | None = None, *,
               max_states: int = 200_000) -> bool | None:
    """Can every automaton (in ``states``) accept one common continuation? Atoms are treated
    as independent. With ``states`` given the continuation may be empty (a trace was read
    already); from the initial states (``states=None``) it needs at least one position, as
    LTLf traces are non-empty. None: undecided within ``max_states`` product states."""
    if not dfas:
        return True
    need_letter = states is None
    states = tuple(d.initial for d in dfas) if states is None else tuple(states)
    if any(q not in d.live for d, q in zip(dfas, states)):
        return False
    _, maps = _letters_union(dfas)
    if need_letter:
        first = {nxt for _m, _v, nxt in _joint_edges(dfas, maps, states)
                 if all(q in d.live for d, q in zip(dfas, nxt))}
    else:
        first = {states}
    seen = set(first)
    todo = deque(first)
    while todo:
        cur = todo.popleft()
        if all(q in d.accepting for d, q in zip(dfas, cur)):
            return True
        for _m, _v, nxt in _joint_edges(dfas, maps, cur):
            if nxt in seen or any(q not in d.live for d, q in zip(dfas, nxt)):
                continue
            if len(seen) >= max_states:
                return None
            seen.add(nxt)
            todo.append(nxt)
    return False


@dataclass(frozen=True)
class Equivalence:
    equivalent: bool
    counterexample: tuple[frozenset[Atom], ...] | None = None   # a trace accepted by exactly one
    accepted_by: str | None = None                              # 'first' or 'second'

    def __bool__(self) -> bool:
        return self.equivalent


def equivalent(f: Formula | str, g: Formula | str, compiler: Compiler | None = None) -> Equivalence:
    """Are two formulas equivalent over non-empty finite traces? Decided on the product of their
    minimal DFAs: a breadth-first search for a reachable pair of states where exactly one
    accepts; the shortest such trace is returned as the counterexample."""
    fa = compile_formula(f, compiler)
    ga = compile_formula(g, compiler)
    atoms_u, maps = _letters_union([fa, ga])
    start = (fa.initial, ga.initial)
    # pairs reached by NON-EMPTY words (LTLf has no empty trace): the start pair itself is
    # only visited when some word leads back to it
    parent: dict[tuple[int, int], tuple[tuple[int, int] | None, frozenset[Atom]]] = {}
    todo: deque[tuple[int, int]] = deque()

    def visit(prev, m, v, nxt) -> Equivalence | None:
        if nxt in parent:
            return None
        parent[nxt] = (prev, _witness(m, v, atoms_u))
        if (nxt[0] in fa.accepting) != (nxt[1] in ga.accepting):
            word: list[frozenset[Atom]] = []
            node: tuple[int, int] | None = nxt
            while node is not None:
                prev_node, letter = parent[node]
                word.append(letter)
                node = prev_node
            return Equivalence(False, tuple(reversed(word)), "first" if nxt[0] in fa.accepting else "second")
        todo.append(nxt)
        return None

    for m, v, nxt in _joint_edges([fa, ga], maps, start):
        found = visit(None, m, v, nxt)
        if found is not None:
            return found
    while todo:
        cur = todo.popleft()
        for m, v, nxt in _joint_edges([fa, ga], maps, cur):
            found = visit(cur, m, v, nxt)
            if found is not None:
                return found
    return Equivalence(True)


def satisfiable(f: Formula | str, compiler: Compiler | None = None) -> bool:
    """Is some non-empty finite trace a model of the formula?"""
    d = compile_formula(f, compiler)
    return any(t in d.live for _m, _v, t in d.transitions[d.initial])
