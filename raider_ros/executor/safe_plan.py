"""PDDL planning that respects the Safety Chip's constraints: plan, check, and when the plan is
unsafe, re-plan by searching the product of the task's states and the constraint automata.

Why not compile the constraints into the PDDL problem: an LTLf constraint becomes an automaton
whose state must advance with every action; in STRIPS without conditional effects (what
pyperplan plans) that needs one copy of each action per automaton transition, and the atoms
(``agent_at(bathroom)`` for a thing in the bathroom, a type standing for all its instances) are
about the scene, not the PDDL facts. So the planner asks the monitor instead:

1. plan as usual (pyperplan, :func:`raider_ros.executor.pddl_plan.plan`) and check the mapped
   skill calls (``check``); a plan that is safe and leaves no obligation open is kept as it is;
2. otherwise A* search (g = steps, h = pyperplan's FF heuristic on the PDDL facts) over
   (PDDL state, automaton states): every applicable ground action is mapped to its skill call
   and stepped on the automata (``look``); a step after which a constraint can no longer be
   satisfied is pruned. The first goal state whose trace satisfies every constraint wins; a
   goal state with obligations still open is kept as a fallback (and searched on from) while
   the search goes a little further. When no safe plan exists, the search runs until its
   limits (time, states): "no safe plan" can only be said within them.

A skill call the monitor cannot read before the issue check grounds it (``pick(medicine)`` with
two medicines) is allowed here and checked by the executor before it is dispatched. The search
is exact for what the monitor predicts; it is bounded by a time limit and a number of states.
"""
from __future__ import annotations

import heapq
import itertools
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Protocol, Sequence

from raider_ros.executor.mapping import ActionMapping, MappingError
from raider_ros.executor.pddl_plan import GroundAction, PddlError, PddlTask, ground, ground_action, solve

MAX_STATES = 50_000


@dataclass
class Look:
    """The monitor's answer on one more step (or on a whole plan, for ``check``)."""
    verdict: str                              # safe | pending | unsafe | error
    key: Hashable = ()                        # automaton states after it (two equal keys: same future)
    handle: Any = None                        # what ``step`` continues from
    violated: Sequence[str] = ()              # the constraints an unsafe step breaks
    first_unsafe_step: int | None = None      # check: the first unsafe step of the plan


class Looker(Protocol):
    def start(self) -> Look: ...
    def step(self, handle: Any, action: str) -> Look: ...
    def check(self, actions: list[str]) -> Look: ...


@dataclass
class SafePlanResult:
    actions: list[GroundAction]
    skills: list[str]                          # the mapped skill calls, as checked
    replanned: bool                            # False: the ordinary plan was already safe
    states: int = 0                            # product states explored
    pruned: int = 0                            # candidate steps the monitor called unsafe
    pending_at_end: bool = False               # the plan leaves an obligation open (no better one found)
    unsafe_plan: list[str] = field(default_factory=list)   # the ordinary plan, when it was not safe
    unsafe_step: int | None = None
    violated: list[str] = field(default_factory=list)


def skill_call(mapping: ActionMapping, task: PddlTask, ga: GroundAction) -> str:
    step = mapping.bind([ga], task)[0]
    return f"{step.skill}({', '.join(step.skill_args())})"


def plan_safely(task: PddlTask, mapping: ActionMapping, looker: Looker, *, time_limit_s: float = 10.0,
                max_states: int = MAX_STATES, slack: int = 2) -> SafePlanResult:
    """A plan that the monitor finds safe, or :class:`PddlError` naming the rules that block
    every plan (see the module docstring)."""
    start = time.monotonic()
    deadline = start + time_limit_s
    gt = ground(task, relevant_only=False)      # steps the goal does not need may be what a constraint needs
    plain = solve(task, gt, time_limit_s=time_limit_s)
    try:
        calls = [skill_call(mapping, task, a) for a in plain.actions]
    except MappingError as exc:
        raise PddlError(str(exc)) from None
    first = looker.check(calls)
    if first.verdict in ("safe", "error"):
        return SafePlanResult(list(plain.actions), calls, False)
    successors = _Successors(gt)
    cache: dict[str, str] = {}

    def call_of(op_name: str) -> str:
        if op_name not in cache:
            cache[op_name] = skill_call(mapping, task, ground_action(op_name))
        return cache[op_name]

    from pyperplan.heuristics.relaxation import hFFHeuristic
    hff = hFFHeuristic(gt)

    hcache: dict[frozenset, float] = {}

    def h(facts: frozenset) -> float:
        if facts not in hcache:
            hcache[facts] = hff(_Node(facts))
        return hcache[facts]

    root = looker.start()
    init = (gt.initial_state, root.key)
    parents: dict[tuple, tuple[tuple, str] | None] = {init: None}
    tie = itertools.count()
    queue = [(h(init[0]), 0, next(tie), init, root.handle)]
    pruned = 0
    violated: dict[str, int] = {}
    fallback: tuple[tuple, int] | None = None

    def path(node: tuple) -> list[str]:
        ops = []
        while parents[node] is not None:
            node, op = parents[node]  # type: ignore[misc]
            ops.append(op)
        return ops[::-1]

    def result(node: tuple, pending: bool) -> SafePlanResult:
        ops = path(node)
        return SafePlanResult([ground_action(o) for o in ops], [call_of(o) for o in ops], True, len(parents), pruned,
                              pending, calls, first.first_unsafe_step, list(first.violated))

    while queue:
        f, depth, _, node, handle = heapq.heappop(queue)
        if fallback is not None and f > fallback[1] + slack:
            break
        if time.monotonic() > deadline or len(parents) > max_states:
            if fallback is not None:
                break
            raise PddlError(f"no safe plan found within the planner's limits ({len(parents)} states, "
                            f"{time.monotonic() - start:.1f} s); {pruned} steps were pruned as unsafe")
        for op, facts in successors(node[0]):
            look = looker.step(handle, call_of(op.name))
            if look.verdict == "unsafe":
                pruned += 1
                for v in look.violated:
                    violated[v] = violated.get(v, 0) + 1
                continue
            child = (facts, look.key)
            if child in parents:
                continue
            parents[child] = (node, op.name)
            if gt.goal_reached(facts):
                if look.verdict == "safe":
                    return result(child, False)
                if fallback is None:
                    fallback = (child, depth + 1)
            hv = h(facts)
            if hv != float("inf"):
                heapq.heappush(queue, (depth + 1 + hv, depth + 1, next(tie), child, look.handle))
    if fallback is not None:
        return result(fallback[0], True)
    rules = "; ".join(f'"{v}"' for v in sorted(violated, key=lambda k: -violated[k])) or "the constraints"
    raise PddlError(f"no plan reaches the goal without breaking {rules} ({pruned} candidate steps pruned, "
                    f"{len(parents)} states explored)")


class _Successors:
    """Applicable operators found through an index: each operator is filed under its most
    selective precondition fact, so a state only tests the operators filed under its facts."""

    def __init__(self, gt: Any):
        count: dict[str, int] = {}
        for op in gt.operators:
            for f in op.preconditions:
                count[f] = count.get(f, 0) + 1
        self.always = [op for op in gt.operators if not op.preconditions]
        self.index: dict[str, list] = {}
        for op in gt.operators:
            if op.preconditions:
                key = min(op.preconditions, key=lambda f: (count[f], f))
                self.index.setdefault(key, []).append(op)

    def __call__(self, state: frozenset):
        out = []
        for ops in [self.always, *(self.index.get(f, ()) for f in state)]:
            for op in ops:
                if op.preconditions <= state:
                    out.append((op, (state - op.del_effects) | op.add_effects))
        return sorted(out, key=lambda x: x[0].name)


class _Node:
    """What pyperplan's heuristics read of a search node."""
    def __init__(self, state: frozenset):
        self.state = state


class PrefixLooker:
    """A :class:`Looker` over a ``check_plan``-like function that checks whole prefixes (e.g. the
    safety_monitor node's service): ``check(actions) -> Look`` with ``key`` the automaton states
    after the last step. Slower than stepping a monitor in process (one call per candidate)."""

    def __init__(self, check: Callable[[list[str]], Look]):
        self._check = check

    def start(self) -> Look:
        look = self._check([])
        return Look(look.verdict, look.key, (), look.violated)

    def step(self, handle: Any, action: str) -> Look:
        actions = [*handle, action]
        look = self._check(actions)
        key = look.key if look.verdict != "error" else ("?", len(actions), action)
        return Look(look.verdict, key, tuple(actions), look.violated, look.first_unsafe_step)

    def check(self, actions: list[str]) -> Look:
        return self._check(list(actions))
