"""Loading a directory of benchmark format v1: every ``*.scene.yaml`` and ``*.cases.yaml``.

:func:`load_benchmark` never stops at the first problem. A file that cannot be read or
parsed, a scene with a bad field, a case with a bad field or a setup block that does not fit
its scene is reported as a :class:`LoadError` (file, case id, field, message) and the rest
of the directory is still loaded, so one typo costs one case, not the run.

Rules (see docs/benchmark-format.md): scene names are unique within the directory, case
ids are unique within the directory, a case's scene must be a scene of the same directory,
``expected.issue`` must agree with ``expected.category`` (IN -> none, IA -> ambiguity,
IU1..IU6 -> unfeasibility). Unknown optional keys are kept in ``Case.extra``.

Case files are read with YAML 1.2 booleans for word lists: an unquoted ``no`` or ``off`` in
``mentions`` stays the word "no" (PyYAML's YAML 1.1 reading would turn it into ``false``),
while ``true``/``false``/``yes``/``no`` elsewhere (e.g. states in a setup block) still read
as booleans.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from raider_ros.common.yamlfile import safe_load_bounded
from raider_ros.sim.scene import Scene, SceneError, apply_setup, load_scene

from .recovery_check import RecoveryFormatError, parse_recovery

CASES_FORMAT = "raider-cases/1"
QUERY_TYPES = ("QS", "QU")
ABSTRACTIONS = ("AS", "AN", "AR", "AC")
ISSUES = ("none", "ambiguity", "unfeasibility")
CATEGORIES = ("IA", "IN", "IU1", "IU2", "IU3", "IU4", "IU5", "IU6")  # Table 1 column order
CATEGORY_NAMES = {
    "IN": "no issue", "IA": "ambiguity", "IU1": "too far", "IU2": "obstructed",
    "IU3": "absent", "IU4": "wrong state", "IU5": "wrong property", "IU6": "robot",
}
CATEGORY_ISSUE = {"IN": "none", "IA": "ambiguity", **{f"IU{i}": "unfeasibility" for i in range(1, 7)}}
_CASE_KEYS = {"id", "query", "query_type", "abstraction", "setup", "expected"}
_EXPECTED_KEYS = {"issue", "category", "grounding", "mentions", "recovery"}


@dataclass(frozen=True)
class Case:
    id: str
    scene: str                       # scene name (same directory)
    query: str
    query_type: str                  # QS | QU
    abstraction: str                 # AS | AN | AR | AC
    expected_issue: str              # none | ambiguity | unfeasibility
    category: str                    # IN | IA | IU1..IU6
    setup: Mapping[str, Any] | None = None
    grounding: tuple[str, ...] | None = None      # None: the case does not score Grnd
    mentions: tuple[tuple[str, ...], ...] = ()
    source: str = ""                 # file the case came from
    extra: Mapping[str, Any] = field(default_factory=dict)
    recovery: tuple = ()             # expected recoveries (alternatives of StepPattern tuples); () = not scored


@dataclass(frozen=True)
class LoadError:
    file: str
    message: str
    case_id: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = self.file
        if self.case_id:
            where += f": case {self.case_id}"
        if self.field:
            where += f": {self.field}"
        return f"{where}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "case": self.case_id, "field": self.field, "message": self.message}


@dataclass
class Benchmark:
    directory: Path
    scenes: dict[str, Scene]
    cases: list[Case]
    errors: list[LoadError] = field(default_factory=list)
    warnings: list[LoadError] = field(default_factory=list)

    def scene_for(self, case: Case) -> Scene:
        """The case's scene with its setup applied (validated at load time)."""
        return apply_setup(self.scenes[case.scene], case.setup, f"case {case.id} setup")


class _CaseError(Exception):
    def __init__(self, field_: str, message: str):
        super().__init__(message)
        self.field = field_
        self.message = message


# --------------------------------------------------------------------------- YAML reading
class _Bool:
    """A YAML boolean that remembers how it was written (``no``, ``Off``, ``true`` ...)."""

    def __init__(self, value: bool, text: str):
        self.value, self.text = value, text


class _CaseLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    pass


def _construct_bool(loader: yaml.SafeLoader, node: yaml.Node) -> _Bool:
    return _Bool(yaml.SafeLoader.construct_yaml_bool(loader, node), node.value)


_CaseLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)


def _words(value: Any) -> Any:
    """Inside word lists a boolean or a number is the word it was written as."""
    if isinstance(value, _Bool):
        return value.text
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, list):
        return [_words(v) for v in value]
    return value


def _plain(value: Any) -> Any:
    if isinstance(value, _Bool):
        return value.value
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {(k.text if isinstance(k, _Bool) else k): _plain(v) for k, v in value.items()}
    return value


def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SceneError(f"{path}: cannot read: {exc}") from None
    return _parse_yaml(text, path)


def _parse_yaml(text: str, path: Any) -> Any:
    try:
        return safe_load_bounded(text, _CaseLoader)    # a SafeLoader subclass; alias bombs refused
    except RecursionError:
        raise SceneError(f"{path}: not valid YAML: nested too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}:" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SceneError(f"{path}:{where} not valid YAML: {problem}") from None


# --------------------------------------------------------------------------- validation
def _show(value: Any) -> str:
    text = repr(_plain(value))
    return text if len(text) <= 60 else text[:57] + "..."


def _string(m: Mapping[str, Any], key: str, path: str) -> str:
    v = m.get(key)
    if not isinstance(v, str) or not v.strip():
        raise _CaseError(path, f"expected a non-empty string, got {_show(v)}" if key in m else "missing")
    return v.strip()


def _enum(m: Mapping[str, Any], key: str, path: str, allowed: tuple[str, ...]) -> str:
    v = m.get(key)
    if isinstance(v, _Bool):  # a word YAML 1.1 reads as a boolean (`no`, `on`): keep the word
        v = v.text
    if key not in m:
        raise _CaseError(path, f"missing; expected one of {', '.join(allowed)}")
    if not isinstance(v, str) or v.strip() not in allowed:
        raise _CaseError(path, f"expected one of {', '.join(allowed)}, got {_show(v)}")
    return v.strip()


def _id_list(value: Any, path: str) -> tuple[str, ...]:
    value = _words(value)
    if not isinstance(value, list):
        raise _CaseError(path, f"expected a list of ids, got {_show(value)}")
    out = []
    for i, v in enumerate(value):
        if not isinstance(v, str) or not v.strip():
            raise _CaseError(f"{path}[{i}]", f"expected an id, got {_show(v)}")
        out.append(v.strip())
    return tuple(out)


def _mentions(value: Any, path: str) -> tuple[tuple[str, ...], ...]:
    value = _words(value)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _CaseError(path, f"expected a list of word groups, got {_show(value)}")
    groups = []
    for i, g in enumerate(value):
        if isinstance(g, str):      # extension: a lone word is a group of one
            g = [g]
        if not isinstance(g, list) or not g:
            raise _CaseError(f"{path}[{i}]", f"expected a non-empty list of words, got {_show(g)}")
        words = []
        for j, w in enumerate(g):
            if not isinstance(w, str) or not w.strip():
                raise _CaseError(f"{path}[{i}][{j}]", f"expected a word, got {_show(w)}")
            words.append(w.strip())
        groups.append(tuple(words))
    return tuple(groups)


def _parse_case(raw: Any, index: int, scene: Scene, source: str) -> tuple[Case, list[str]]:
    """Validate one case; returns the case and warnings, or raises :class:`_CaseError`."""
    if not isinstance(raw, Mapping):
        raise _CaseError(f"cases[{index}]", f"expected a mapping, got {_show(raw)}")
    raw_id = _words(raw.get("id"))
    if not isinstance(raw_id, str) or not raw_id.strip():
        raise _CaseError("id", f"expected a non-empty string, got {_show(raw_id)}")
    query = _string(raw, "query", "query")
    qt = _enum(raw, "query_type", "query_type", QUERY_TYPES)
    ab = _enum(raw, "abstraction", "abstraction", ABSTRACTIONS)
    exp = raw.get("expected")
    if not isinstance(exp, Mapping):
        raise _CaseError("expected", "missing" if exp is None else f"expected a mapping, got {_show(exp)}")
    issue = _enum(exp, "issue", "expected.issue", ISSUES)
    category = _enum(exp, "category", "expected.category", CATEGORIES)
    if CATEGORY_ISSUE[category] != issue:
        raise _CaseError("expected.issue", f"category {category} means issue "
                         f"{CATEGORY_ISSUE[category]!r}, got {issue!r}")
    grounding = None
    if exp.get("grounding") is not None:
        grounding = _id_list(exp["grounding"], "expected.grounding")
    mentions = _mentions(exp.get("mentions"), "expected.mentions")
    recovery: tuple = ()
    if exp.get("recovery") is not None:
        if issue == "none":
            raise _CaseError("expected.recovery", "a case without an issue needs no recovery")
        try:
            recovery = parse_recovery(_plain(exp["recovery"]))
        except RecoveryFormatError as exc:
            raise _CaseError("expected.recovery", str(exc).split(": ", 1)[-1]) from None

    setup = _plain(raw.get("setup"))
    try:
        world = apply_setup(scene, setup, "setup")
    except SceneError as exc:
        msg = str(exc)
        raise _CaseError("setup", msg[len("setup: "):] if msg.startswith("setup: ") else msg) from None
    warnings = []
    if grounding:
        missing = [g for g in grounding if world.get(g) is None]
        if missing:
            warnings.append(f"expected.grounding: {', '.join(missing)} not in scene {scene.name!r} "
                            "after the setup; Grnd can only succeed if perception reports these ids")
    extra = {k: _plain(v) for k, v in raw.items() if k not in _CASE_KEYS}
    extra.update({f"expected.{k}": _plain(v) for k, v in exp.items() if k not in _EXPECTED_KEYS})
    case = Case(id=raw_id.strip(), scene=scene.name, query=query, query_type=qt, abstraction=ab,
                expected_issue=issue, category=category, setup=setup, grounding=grounding,
                mentions=mentions, source=source, extra=extra, recovery=recovery)
    return case, warnings


# --------------------------------------------------------------------------- directory
def load_benchmark(directory: str | Path) -> Benchmark:
    """Load every scene and case file of ``directory``; problems go to ``Benchmark.errors``.

    Raises :class:`FileNotFoundError` / :class:`NotADirectoryError` only when the directory
    itself is missing.
    """
    d = Path(directory)
    if not d.exists():
        raise FileNotFoundError(f"{d}: no such directory")
    if not d.is_dir():
        raise NotADirectoryError(f"{d}: not a directory")
    bench = Benchmark(directory=d, scenes={}, cases=[])
    scene_files: dict[str, str] = {}
    broken_scene_files: list[Path] = []

    for f in sorted(d.glob("*.scene.yaml")):
        try:
            scene = load_scene(f)
        except SceneError as exc:
            bench.errors.append(LoadError(str(f), _strip_source(str(exc), f)))
            broken_scene_files.append(f)
            continue
        if scene.name in bench.scenes:
            bench.errors.append(LoadError(str(f), f"scene name {scene.name!r} is also used by "
                                          f"{scene_files[scene.name]}; this file is ignored", field="name"))
            continue
        bench.scenes[scene.name] = scene
        scene_files[scene.name] = str(f)

    seen_ids: dict[str, str] = {}
    for f in sorted(d.glob("*.cases.yaml")):
        _load_case_file(f, bench, seen_ids, broken_scene_files)
    return bench


def _strip_source(message: str, f: Path) -> str:
    prefix = f"{f}:"
    return message[len(prefix):].strip() if message.startswith(prefix) else message


def load_cases_text(text: str, scenes: Mapping[str, Scene], source: str = "<text>") -> Benchmark:
    """The cases of one case file given as text, against ``scenes``; like :func:`load_benchmark`
    it never raises: every problem is a :class:`LoadError` in ``errors``."""
    bench = Benchmark(directory=Path("."), scenes=dict(scenes), cases=[])
    try:
        doc = _parse_yaml(text, source)
    except SceneError as exc:
        bench.errors.append(LoadError(source, _strip_source(str(exc), Path(source))))
        return bench
    _load_case_doc(doc, source, bench, {}, [])
    return bench


def _load_case_file(f: Path, bench: Benchmark, seen_ids: dict[str, str],
                    broken_scene_files: list[Path]) -> None:
    src = str(f)
    try:
        doc = _read_yaml(f)
    except SceneError as exc:
        bench.errors.append(LoadError(src, _strip_source(str(exc), f)))
        return
    _load_case_doc(doc, src, bench, seen_ids, broken_scene_files)


def _load_case_doc(doc: Any, src: str, bench: Benchmark, seen_ids: dict[str, str],
                   broken_scene_files: list[Path]) -> None:
    if not isinstance(doc, Mapping):
        bench.errors.append(LoadError(src, f"expected a mapping with format, scene and cases, got {_show(doc)}"))
        return
    fmt = doc.get("format")
    if fmt != CASES_FORMAT:
        bench.errors.append(LoadError(src, f"expected {CASES_FORMAT!r}, got {_show(fmt)}", field="format"))
        return
    scene_name = _words(doc.get("scene"))
    if not isinstance(scene_name, str) or not scene_name.strip():
        bench.errors.append(LoadError(src, f"expected a scene name, got {_show(scene_name)}", field="scene"))
        return
    scene = bench.scenes.get(scene_name.strip())
    if scene is None:
        hint = (f"; scene files that failed to load: {', '.join(p.name for p in broken_scene_files)}"
                if broken_scene_files else "")
        known = ", ".join(sorted(bench.scenes)) or "none"
        bench.errors.append(LoadError(src, f"no scene named {scene_name!r} in {bench.directory} "
                                      f"(scenes: {known}){hint}", field="scene"))
        return
    cases = doc.get("cases")
    if not isinstance(cases, list):
        bench.errors.append(LoadError(src, f"expected a list of cases, got {_show(cases)}", field="cases"))
        return
    for i, raw in enumerate(cases):
        label = _case_label(raw, i)
        try:
            case, warnings = _parse_case(raw, i, scene, src)
        except _CaseError as exc:
            bench.errors.append(LoadError(src, exc.message, case_id=label, field=exc.field))
            continue
        if case.id in seen_ids:
            bench.errors.append(LoadError(src, f"case id is also used in {seen_ids[case.id]}; "
                                          "this one is ignored", case_id=case.id, field="id"))
            continue
        seen_ids[case.id] = src
        bench.cases.append(case)
        for w in warnings:
            field_, _, msg = w.partition(": ")
            bench.warnings.append(LoadError(src, msg, case_id=case.id, field=field_))


def _case_label(raw: Any, index: int) -> str:
    if isinstance(raw, Mapping):
        v = _words(raw.get("id"))
        if isinstance(v, str) and v.strip():
            return v.strip()
    return f"#{index + 1}"


def filter_cases(cases: list[Case], pattern: str | None = None, limit: int | None = None) -> list[Case]:
    """Cases whose id, scene, category or query matches ``pattern`` (a regex), at most ``limit``."""
    out = cases
    if pattern:
        rx = re.compile(pattern)
        out = [c for c in out if rx.search(c.id) or rx.search(c.scene) or rx.fullmatch(c.category)
               or rx.search(c.query)]
    if limit is not None:
        out = out[: max(0, limit)]
    return out
