"""Action mappings: from a PDDL plan step to a RAIDER query and a robot skill.

A mapping file (``data/executor/<domain>.yaml``)::

    format: raider-action-map/1
    domain: assistive
    objects:                       # optional: PDDL object -> scene id
      medicine_counter: Counter_1
    actions:
      pick:                        # PDDL action name; parameters are the PDDL ones, in order
        query: "pick({i})"         # what RAIDER checks before the step ({param} placeholders)
        text: "pick up the {i}"    # optional natural-language form of the same query
        skill: pick                # move_to | pick | place | open | close | turn_on | turn_off | slice | handover
        args: ["{i}"]              # the skill's arguments
        ground: [i]                # parameters the detector's grounding replaces, in order

A placeholder is replaced by the PDDL object, or by its scene id when ``objects`` maps it.
After a check without issue, ``grounding[k]`` (the ids the query refers to) replaces the
k-th parameter listed in ``ground`` in the skill's arguments, so ``pick(medicine)`` runs as
``pick Medicine_1`` once the person said which medicine.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence


from raider_ros.common.paths import data_dir
from raider_ros.common.yamlfile import read_yaml
from raider_ros.executor.pddl_plan import GroundAction, PddlError, PddlTask
from raider_ros.recovery.plan import SKILL_ACTIONS, ACTIONS

MAPPING_FORMAT = "raider-action-map/1"
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][\w-]*)\}")


class MappingError(ValueError):
    """A mapping file that is unusable, or a plan action it does not map."""


@dataclass(frozen=True)
class ActionMap:
    name: str
    query: str
    skill: str
    args: tuple[str, ...]
    ground: tuple[str, ...] = ()
    text: str | None = None


@dataclass(frozen=True)
class ExecStep:
    """One plan step, ready for the executor."""
    index: int                         # 0-based position in the plan
    action: str                        # PDDL action
    pddl_args: tuple[str, ...]
    query: str                         # what RAIDER checks
    skill: str
    params: Mapping[str, str]          # parameter -> value (scene id when mapped)
    arg_templates: tuple[str, ...]
    ground: tuple[str, ...] = ()
    text: str | None = None

    def skill_args(self, grounding: Sequence[str] = ()) -> list[str]:
        values = dict(self.params)
        for param, gid in zip(self.ground, grounding):
            if gid:
                values[param] = gid
        return [_fill(t, values) for t in self.arg_templates]

    def __str__(self) -> str:
        return f"({' '.join((self.action, *self.pddl_args))})"


@dataclass
class ActionMapping:
    actions: dict[str, ActionMap]
    objects: dict[str, str] = field(default_factory=dict)
    domain: str | None = None
    source: str = "<mapping>"

    # -------------------------------------------------------------------- loading
    @classmethod
    def load(cls, spec: str | Path, domain_name: str | None = None) -> "ActionMapping":
        """A file path, a name under ``data/executor``, or empty (then by ``domain_name``)."""
        if not str(spec).strip():
            if not domain_name:
                raise MappingError("no action mapping given and no domain name to find one by")
            spec = domain_name
        doc, p = read_yaml(spec, folder=data_dir() / "executor", what="action mapping", error=MappingError)
        return cls.from_dict(doc, str(p))

    @classmethod
    def from_dict(cls, doc: Any, source: str = "<mapping>") -> "ActionMapping":
        if not isinstance(doc, Mapping):
            raise MappingError(f"{source}: expected a mapping with 'actions', got {type(doc).__name__}")
        fmt = doc.get("format", MAPPING_FORMAT)
        if fmt != MAPPING_FORMAT:
            raise MappingError(f"{source}: format: expected {MAPPING_FORMAT!r}, got {fmt!r}")
        acts = doc.get("actions")
        if not isinstance(acts, Mapping) or not acts:
            raise MappingError(f"{source}: actions: expected a mapping of PDDL action names")
        out: dict[str, ActionMap] = {}
        for name, entry in acts.items():
            where = f"{source}: actions.{name}"
            if not isinstance(entry, Mapping):
                raise MappingError(f"{where}: expected a mapping with query, skill and args")
            query = entry.get("query")
            if not isinstance(query, str) or not query.strip():
                raise MappingError(f"{where}.query: expected a query template such as \"pick({{obj}})\"")
            skill = entry.get("skill")
            if skill not in SKILL_ACTIONS:
                raise MappingError(f"{where}.skill: expected one of {', '.join(sorted(SKILL_ACTIONS))}, got {skill!r}")
            args = entry.get("args", [])
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                raise MappingError(f"{where}.args: expected a list of strings")
            if len(args) != ACTIONS[skill]:
                raise MappingError(f"{where}.args: skill {skill} takes {ACTIONS[skill]} argument(s), got {len(args)}")
            ground = entry.get("ground", [])
            if not isinstance(ground, list) or not all(isinstance(g, str) for g in ground):
                raise MappingError(f"{where}.ground: expected a list of parameter names")
            text = entry.get("text")
            if text is not None and not isinstance(text, str):
                raise MappingError(f"{where}.text: expected a string")
            out[str(name).lower()] = ActionMap(str(name).lower(), query.strip(), skill, tuple(args),
                                               tuple(g.lstrip("?") for g in ground), text)
        objects = doc.get("objects") or {}
        if not isinstance(objects, Mapping):
            raise MappingError(f"{source}: objects: expected a mapping of PDDL object -> scene id")
        return cls(out, {str(k).lower(): str(v) for k, v in objects.items() if v is not None},
                   doc.get("domain"), source)

    # -------------------------------------------------------------------- checking
    def check(self, task: PddlTask) -> None:
        """Every placeholder and ground entry names a parameter of its PDDL action."""
        for name, am in self.actions.items():
            try:
                params = task.action_parameters(name)
            except KeyError:
                raise MappingError(f"{self.source}: actions.{name}: the domain has no action {name!r} "
                                   f"(its actions: {', '.join(task.action_names)})") from None
            self._check_params(am, params)

    def _check_params(self, am: ActionMap, params: Sequence[str]) -> None:
        known = {p.lower() for p in params}
        for where, template in (("query", am.query), ("text", am.text or ""),
                                *((f"args[{i}]", a) for i, a in enumerate(am.args))):
            for ph in _PLACEHOLDER.findall(template):
                if ph.lower() not in known:
                    raise MappingError(f"{self.source}: actions.{am.name}.{where}: {{{ph}}} is not a parameter "
                                       f"of {am.name} (parameters: {', '.join(params) or 'none'})")
        for g in am.ground:
            if g.lower() not in known:
                raise MappingError(f"{self.source}: actions.{am.name}.ground: {g!r} is not a parameter of "
                                   f"{am.name} (parameters: {', '.join(params) or 'none'})")

    # -------------------------------------------------------------------- binding
    def bind(self, plan: Iterable[GroundAction], task: PddlTask, *, natural: bool = False) -> list[ExecStep]:
        """Executor steps for a plan; a plan action without a mapping is an error naming it."""
        steps = []
        for i, ga in enumerate(plan):
            am = self.actions.get(ga.name.lower())
            if am is None:
                raise MappingError(f"no action mapping for PDDL action {ga.name!r} (step {i + 1}, {ga}) in "
                                   f"{self.source}; mapped actions: {', '.join(sorted(self.actions)) or 'none'}")
            try:
                params = [p.lower() for p in task.action_parameters(ga.name)]
            except KeyError:
                raise MappingError(f"step {i + 1} {ga}: the domain has no action {ga.name!r}") from None
            if len(params) != len(ga.args):
                raise MappingError(f"step {i + 1} {ga}: {ga.name} takes {len(params)} argument(s), got {len(ga.args)}")
            self._check_params(am, params)
            values = {p: self.objects.get(a.lower(), a) for p, a in zip(params, ga.args)}
            query_t = am.text if natural and am.text else am.query
            steps.append(ExecStep(
                index=i, action=ga.name, pddl_args=tuple(ga.args), query=_fill(query_t, values),
                skill=am.skill, params=values, arg_templates=am.args,
                ground=tuple(g.lower() for g in am.ground), text=_fill(am.text, values) if am.text else None,
            ))
        return steps


def parse_plan_lines(lines: Sequence[str], task: PddlTask) -> list[GroundAction]:
    """A ready plan given as ``["(approach start counter)", ...]``, checked against the domain."""
    out = []
    for i, line in enumerate(lines, 1):
        parts = line.strip().strip("()").split()
        if not parts or not line.strip().startswith("(") or not line.strip().endswith(")"):
            raise PddlError(f"plan step {i}: expected '(action arg ...)', got {line!r}")
        try:
            params = task.action_parameters(parts[0])
        except KeyError:
            raise PddlError(f"plan step {i}: the domain has no action {parts[0]!r} "
                            f"(its actions: {', '.join(task.action_names)})") from None
        if len(params) != len(parts) - 1:
            raise PddlError(f"plan step {i}: {parts[0]} takes {len(params)} argument(s), got {len(parts) - 1}")
        out.append(GroundAction(parts[0].lower(), tuple(p.lower() for p in parts[1:])))
    return out


def _fill(template: str, values: Mapping[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1).lower(), m.group(0)), template)
