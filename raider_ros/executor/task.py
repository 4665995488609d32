"""What a task request turns into before anything runs (ROS-free): the PDDL task (a named
domain under data/pddl, or domain and problem as files or text), its plan (given lines, or
planned with pyperplan), and the executor steps the action mapping binds them to.

``resolve_task(domain, problem, plan_lines, mapping, planner_time_limit_s)`` returns
``(steps, domain_name)`` or raises :class:`TaskError` with the reason; ``parse_aliases``
reads the ``name:id`` list that maps recovery-plan names to scene ids.

A task can also be a request in words planned from examples (the episodic memory's task
planner): its plan is in the recovery plan language, and ``steps_from_plan`` turns its skill
actions into executor steps (``move_to(X)`` is checked as ``approach(X)``, as in the action
mappings); ``parse_roles`` reads the request's ``role:id`` list.
"""
from __future__ import annotations

from typing import Any, Sequence

from raider_ros.executor.mapping import ActionMapping, ExecStep, MappingError, parse_plan_lines
from raider_ros.executor.pddl_plan import PddlError, load_named, load_task, pddl_dir, plan
from raider_ros.executor.safe_plan import plan_safely
from raider_ros.recovery.plan import INTERACTION_ACTIONS, PLACEHOLDER_NAMES, Literal, Plan

QUERY_NAMES = {"move_to": "approach"}       # the skill -> the action RAIDER checks


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


def steps_from_plan(task_plan: Plan) -> list[ExecStep]:
    """Executor steps for a task plan in the recovery plan language (skill actions on ids).
    The ids are already grounded (the plan was made for this scene), so a check's grounding
    does not replace them. A plan that asks or speaks, or whose arguments are variables or
    placeholders, is a :class:`TaskError`: the executor runs skills, one check before each."""
    steps: list[ExecStep] = []
    for n, s in enumerate(task_plan.steps, 1):
        if s.action in INTERACTION_ACTIONS:
            raise TaskError(f"step {n} {s.to_code()}: a task plan given to the executor may only hold skill "
                            "actions (it asks and speaks in recoveries)")
        args = []
        for a in s.args:
            if not isinstance(a, Literal) or a.value in PLACEHOLDER_NAMES:
                raise TaskError(f"step {n} {s.to_code()}: expected scene ids as arguments")
            args.append(a.value)
        params = {f"a{i}": v for i, v in enumerate(args)}
        steps.append(ExecStep(index=len(steps), action=s.action, pddl_args=tuple(args),
                              query=f"{QUERY_NAMES.get(s.action, s.action)}({', '.join(args)})", skill=s.action,
                              params=params, arg_templates=tuple(f"{{a{i}}}" for i in range(len(args)))))
    if not steps:
        raise TaskError("the task plan has no steps")
    return steps


def parse_roles(items: Sequence[str]) -> dict[str, str]:
    """['item:Medicine_1', 'person:Person_1'] -> {'item': 'Medicine_1', 'person': 'Person_1'}."""
    out: dict[str, str] = {}
    for item in items:
        role, sep, thing = str(item).partition(":")
        if not sep or not role.strip() or not thing.strip():
            raise TaskError(f"roles: expected 'role:id' entries, got {item!r}")
        if role.strip() in out:
            raise TaskError(f"roles: {role.strip()!r} is given twice")
        out[role.strip()] = thing.strip()
    return out
