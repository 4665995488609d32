"""What a task request turns into before anything runs (ROS-free): the PDDL task (a named
domain under data/pddl, or domain and problem as files or text), its plan (given lines, or
planned with pyperplan), and the executor steps the action mapping binds them to.

``resolve_task(domain, problem, plan_lines, mapping, planner_time_limit_s)`` returns
``(steps, domain_name)`` or raises :class:`TaskError` with the reason; ``parse_aliases``
reads the ``name:id`` list that maps recovery-plan names to scene ids.
"""
from __future__ import annotations

from typing import Any, Sequence

from raider_ros.executor.mapping import ActionMapping, ExecStep, MappingError, parse_plan_lines
from raider_ros.executor.pddl_plan import PddlError, load_named, load_task, pddl_dir, plan
from raider_ros.executor.safe_plan import plan_safely


class TaskError(Exception):
    """A task that cannot be turned into steps; ``str(exc)`` says why."""


def resolve_task(domain: str, problem: str, plan_lines: Sequence[str] = (), mapping: str = "",
                 planner_time_limit_s: float = 10.0, looker: Any = None,
                 notes: list[str] | None = None) -> tuple[list[ExecStep], str]:
    """``looker`` (the Safety Chip's, raider_ros/executor/safe_plan.py): plan with the
    constraint-aware planner; ``notes`` gets a line when it had to re-plan around a rule."""
    domain, problem = domain.strip(), problem.strip()
    try:
        if domain and (pddl_dir() / domain / "domain.pddl").is_file():
            task = load_named(domain, problem or None)
        elif domain and problem:
            task = load_task(domain, problem)
        else:
            raise TaskError("give a PDDL domain (file, name or text) and a problem")
        action_map = ActionMapping.load(mapping, str(task.domain.name))
        if plan_lines:
            actions = parse_plan_lines(list(plan_lines), task)
        elif looker is not None:
            res = plan_safely(task, action_map, looker, time_limit_s=planner_time_limit_s)
            actions = res.actions
            if res.replanned and notes is not None:
                rules = "; ".join(f'"{v}"' for v in res.violated)
                notes.append(f"the first plan ({', '.join(res.unsafe_plan)}) would break {rules or 'a constraint'} "
                             f"at its step {(res.unsafe_step or 0) + 1}: re-planned around it"
                             + (" (an obligation stays open)" if res.pending_at_end else ""))
        else:
            actions = plan(task, time_limit_s=planner_time_limit_s).actions
        return action_map.bind(actions, task), str(task.domain.name)
    except (PddlError, MappingError) as exc:
        raise TaskError(str(exc)) from None


def parse_aliases(text: str) -> dict[str, str]:
    """'free_table:FreeTable_1, shelf:Shelf_2' -> {'free_table': 'FreeTable_1', 'shelf': 'Shelf_2'}."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, target = part.partition(":")
        if not sep or not name.strip() or not target.strip():
            raise ValueError(f"aliases: expected 'name:id' entries, got {part!r}")
        out[name.strip()] = target.strip()
    return out
