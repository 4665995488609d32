"""Expected recoveries (a project extension of the case format) and Recov_Plan scoring.

A case may carry ``expected.recovery``: the plans that count as a valid recovery, as a list
of alternatives; each alternative is a list of step patterns that must appear in the plan in
this order (other steps may come between them):

```yaml
expected:
  issue: unfeasibility
  category: IU1
  recovery:
    - ["move_to(Mug_2)", "pick(Mug_2)"]     # drive closer, then pick
    - ["ask"]                               # or ask someone to bring it
```

A step pattern is ``action`` (any arguments) or ``action(arg, ...)``; an argument is an id or
name (compared case-insensitively; an id also matches its type name, ``Mug_2`` ~ "mug"),
``*`` (anything), or ``?`` (a variable bound by an earlier ``ask``). The paper's Recov_Plan
is the share of cases, among those whose issue was detected and explained, for which the
recovery planner's plan matches an alternative.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

_PATTERN = re.compile(r"^\s*([a-z_]+)\s*(?:\((.*)\))?\s*$")


class RecoveryFormatError(ValueError):
    pass


@dataclass(frozen=True)
class StepPattern:
    action: str
    args: tuple[str, ...] | None = None      # None: any arguments

    def __str__(self) -> str:
        return self.action if self.args is None else f"{self.action}({', '.join(self.args)})"


def parse_recovery(value: Any, path: str = "expected.recovery") -> tuple[tuple[StepPattern, ...], ...]:
    if not isinstance(value, list) or not value:
        raise RecoveryFormatError(f"{path}: expected a non-empty list of alternatives (lists of steps)")
    alternatives = []
    for i, alt in enumerate(value):
        if isinstance(alt, str):
            alt = [alt]
        if not isinstance(alt, list) or not alt:
            raise RecoveryFormatError(f"{path}[{i}]: expected a non-empty list of steps, got {alt!r}")
        steps = []
        for j, s in enumerate(alt):
            m = _PATTERN.match(str(s)) if isinstance(s, str) else None
            if m is None:
                raise RecoveryFormatError(f"{path}[{i}][{j}]: expected 'action' or 'action(arg, ...)', got {s!r}")
            args = None if m.group(2) is None else tuple(a.strip().strip("'\"") for a in m.group(2).split(",") if a.strip())
            steps.append(StepPattern(m.group(1), args))
        alternatives.append(tuple(steps))
    return tuple(alternatives)


def _word(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def _arg_matches(pattern: str, arg: str, is_var: bool) -> bool:
    if pattern == "*":
        return True
    if pattern == "?":
        return is_var
    if is_var:
        return False
    p, a = _word(pattern), _word(arg)
    if p == a:
        return True
    m = re.match(r"^([A-Za-z][A-Za-z0-9]*)_\d+$", pattern)        # an id matches its type word
    return bool(m) and _word(m.group(1)) == a


def step_matches(pattern: StepPattern, action: str, args: Sequence[tuple[str, bool]]) -> bool:
    if pattern.action != action:
        return False
    if pattern.args is None:
        return True
    return len(pattern.args) == len(args) and all(_arg_matches(p, a, v) for p, (a, v) in zip(pattern.args, args))


def plan_matches(alternatives, steps: Sequence[tuple[str, Sequence[tuple[str, bool]]]]) -> bool:
    """``steps``: (action, [(arg text, is a variable)]) in plan order."""
    for alt in alternatives:
        i = 0
        for action, args in steps:
            if i < len(alt) and step_matches(alt[i], action, args):
                i += 1
        if i == len(alt):
            return True
    return False
