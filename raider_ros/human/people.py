"""Human-interface backends for the executor's ``ask`` and ``say`` ports.

* :class:`TerminalHuman` - a person at a terminal: ``say`` prints, ``ask`` prints the question
  and reads one line, giving up after the timeout (``None``).
* :class:`ScriptedHuman` - a person played from a scenario file (``data/scenarios/*.yaml``):
  questions are matched by keywords and/or a regex, in order or by first match, and each
  answer may come with the change the person makes to the world (moving a chair, bringing
  the medicine closer, saying who they are, looking at the robot). Changes are setup blocks
  of benchmark format v1, handed to ``apply_world_change(setup)`` when the answer is given
  (the ROS node passes the simulator's ``apply_setup`` with reset false), or kept in
  :attr:`ScriptedHuman.pending_world_changes` when no callback is set.

Scenario file::

    format: raider-scenario/1
    name: assistive_demo
    scene: assistive_room          # the scene the world changes refer to
    order: any                     # any (first unused entry that matches) | sequence
    default_answer: null           # the answer when nothing matches (null: no answer)
    entries:
      - on: ask                    # ask (default) | say
        match: {keywords: [chair], any: [move, aside], regex: "(?i)in my way"}
        answer: "Sure, I moved it."
        means: Chair_1             # optional: the id the answer refers to (see resolve_name)
        world: {objects: {Chair_1: {center: [1.0, 1.2, 0.45]}}}
        times: 1                   # how often the entry may be used

:meth:`ScriptedHuman.resolve_name` turns an answer back into the id in ``means`` (what the
person pointed at), for the executor's ``resolve_name`` port.
"""
from __future__ import annotations

import copy
import queue
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, TextIO


from raider_ros.common.paths import data_dir
from raider_ros.common.yamlfile import read_yaml

SCENARIO_FORMAT = "raider-scenario/1"
SETUP_KEYS = ("robot", "objects", "people", "remove", "add")


class ScenarioError(ValueError):
    """A scenario file that does not follow the format; names the file and the field."""


# --------------------------------------------------------------------------- terminal
class TerminalHuman:
    """A person at a terminal (or answers piped in, read in order). A line that arrives after
    its question timed out is discarded, not taken as the answer to the next question."""

    def __init__(self, input: TextIO | None = None, output: TextIO | None = None, *, name: str = "ROBOT"):
        self._in = input if input is not None else sys.stdin
        self._out = output if output is not None else sys.stdout
        self._name = name
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader: threading.Thread | None = None
        self._eof = False
        self._late = False
        self._lock = threading.Lock()

    def say(self, text: str) -> None:
        self._print(f"{self._name}: {text}")

    def ask(self, question: str, timeout_s: float) -> str | None:
        with self._lock:
            if self._eof:
                return None
            self._start_reader()
            while self._late:                # drop late answers to a question that timed out
                try:
                    if self._lines.get_nowait() is None:
                        self._eof = True
                        return None
                except queue.Empty:
                    break
            self._late = False
            self._print(f"{self._name} asks: {question}")
            self._print("> ", end="")
            try:
                line = self._lines.get(timeout=max(0.0, timeout_s))
            except queue.Empty:
                self._late = True
                self._print("")
                self._print(f"{self._name}: (no answer within {timeout_s:g} s)")
                return None
            if line is None:
                self._eof = True
                return None
            return line.strip() or None

    def _start_reader(self) -> None:
        if self._reader is not None:
            return

        def read() -> None:
            try:
                for line in iter(self._in.readline, ""):
                    self._lines.put(line)
            except (OSError, ValueError):
                pass
            self._lines.put(None)

        self._reader = threading.Thread(target=read, name="terminal-human", daemon=True)
        self._reader.start()

    def _print(self, text: str, end: str = "\n") -> None:
        try:
            self._out.write(text + end)
            self._out.flush()
        except (OSError, ValueError):
            pass


# --------------------------------------------------------------------------- scripted
@dataclass
class ScenarioEntry:
    index: int
    on: str                                  # ask | say
    keywords: tuple[str, ...] = ()
    any_of: tuple[str, ...] = ()
    regex: re.Pattern | None = None
    answer: str | None = None
    world: dict | None = None
    times: int = 1
    used: int = 0
    means: str | None = None

    def matches(self, text: str) -> bool:
        low = text.lower()
        if any(k not in low for k in self.keywords):
            return False
        if self.any_of and not any(k in low for k in self.any_of):
            return False
        return self.regex is None or self.regex.search(text) is not None

    @property
    def available(self) -> bool:
        return self.used < self.times


@dataclass
class Scenario:
    name: str
    entries: list[ScenarioEntry]
    order: str = "any"
    default_answer: str | None = None
    scene: str | None = None
    source: str = "<scenario>"


def scenarios_dir() -> Path:
    return data_dir() / "scenarios"


def load_scenario(spec: str | Path | Mapping) -> Scenario:
    """A mapping, a file path, or a name under ``data/scenarios``."""
    if isinstance(spec, Mapping):
        return parse_scenario(spec, "<scenario>")
    doc, p = read_yaml(spec, folder=scenarios_dir(), what="scenario file", error=ScenarioError)
    return parse_scenario(doc, str(p))


def parse_scenario(doc: Any, source: str) -> Scenario:
    def fail(path: str, msg: str) -> ScenarioError:
        return ScenarioError(f"{source}: {path}: {msg}")

    if not isinstance(doc, Mapping):
        raise ScenarioError(f"{source}: expected a mapping with 'entries'")
    if doc.get("format", SCENARIO_FORMAT) != SCENARIO_FORMAT:
        raise fail("format", f"expected {SCENARIO_FORMAT!r}, got {doc.get('format')!r}")
    order = doc.get("order", "any")
    if order not in ("any", "sequence"):
        raise fail("order", f"expected any or sequence, got {order!r}")
    default = doc.get("default_answer")
    if default is not None and not isinstance(default, str):
        raise fail("default_answer", "expected text or null")
    raw = doc.get("entries")
    if not isinstance(raw, list) or not raw:
        raise fail("entries", "expected a non-empty list")
    entries = []
    for i, e in enumerate(raw):
        path = f"entries[{i}]"
        if not isinstance(e, Mapping):
            raise fail(path, "expected a mapping")
        unknown = set(e) - {"on", "match", "answer", "world", "times", "note", "means"}
        if unknown:
            raise fail(f"{path}.{sorted(unknown)[0]}",
                       "unknown key; expected on, match, answer, means, world, times, note")
        means = e.get("means")
        if means is not None and (not isinstance(means, str) or not means.strip()):
            raise fail(f"{path}.means", "expected an id")
        on = e.get("on", "ask")
        if on not in ("ask", "say"):
            raise fail(f"{path}.on", f"expected ask or say, got {on!r}")
        m = e.get("match") or {}
        if not isinstance(m, Mapping) or not (m.get("keywords") or m.get("any") or m.get("regex")):
            raise fail(f"{path}.match", "expected keywords, any and/or regex")
        kws = _words(m.get("keywords"), f"{path}.match.keywords", fail)
        any_of = _words(m.get("any"), f"{path}.match.any", fail)
        regex = None
        if m.get("regex") is not None:
            try:
                regex = re.compile(str(m["regex"]))
            except re.error as exc:
                raise fail(f"{path}.match.regex", f"not a valid regular expression: {exc}") from None
        answer = e.get("answer")
        if on == "ask" and (not isinstance(answer, str) or not answer.strip()):
            raise fail(f"{path}.answer", "an ask entry needs a non-empty answer")
        world = e.get("world")
        if world is not None:
            if not isinstance(world, Mapping) or not world:
                raise fail(f"{path}.world", "expected a setup block (robot, objects, people, remove, add)")
            bad = set(world) - set(SETUP_KEYS)
            if bad:
                raise fail(f"{path}.world.{sorted(bad)[0]}", f"unknown setup key; expected {', '.join(SETUP_KEYS)}")
        times = e.get("times", 1)
        if isinstance(times, bool) or not isinstance(times, int) or times < 1:
            raise fail(f"{path}.times", f"expected a positive integer, got {times!r}")
        entries.append(ScenarioEntry(i, on, kws, any_of, regex, answer, copy.deepcopy(dict(world)) if world else None,
                                     times, means=means.strip() if means else None))
    return Scenario(str(doc.get("name") or Path(source).stem), entries, order, default,
                    doc.get("scene"), source)


def _words(value: Any, path: str, fail: Callable[[str, str], ScenarioError]) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise fail(path, "expected a list of words")
    return tuple(v.strip().lower() for v in value)


@dataclass
class Exchange:
    kind: str                     # ask | say
    text: str
    answer: str | None = None
    entry: int | None = None      # index of the scenario entry used


class ScriptedHuman:
    """Plays a scenario. Thread-safe; ``ask`` returns at once (the timeout is not waited)."""

    def __init__(self, scenario: str | Path | Mapping | Scenario, *,
                 apply_world_change: Callable[[dict], Any] | None = None):
        self.scenario = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
        self.apply_world_change = apply_world_change
        self.pending_world_changes: list[dict] = []
        self.transcript: list[Exchange] = []
        self.unmatched: list[str] = []
        self._lock = threading.Lock()

    def ask(self, question: str, timeout_s: float = 0.0) -> str | None:
        with self._lock:
            entry = self._find("ask", question)
            answer = entry.answer if entry else self.scenario.default_answer
            self.transcript.append(Exchange("ask", question, answer, entry.index if entry else None))
            if entry is None:
                self.unmatched.append(question)
            world = entry.world if entry else None
        if world:
            self._world(world)
        return answer

    def say(self, text: str) -> None:
        with self._lock:
            entry = self._find("say", text)
            self.transcript.append(Exchange("say", text, None, entry.index if entry else None))
            world = entry.world if entry else None
        if world:
            self._world(world)

    def resolve_name(self, text: str) -> str:
        """The id an answer refers to (the entry's ``means``), else the text unchanged."""
        with self._lock:
            for e in self.scenario.entries:
                if e.means and e.answer is not None and e.answer.strip() == text.strip():
                    return e.means
        return text

    def take_world_changes(self) -> list[dict]:
        with self._lock:
            out, self.pending_world_changes = self.pending_world_changes, []
        return out

    def remaining(self) -> list[ScenarioEntry]:
        """Ask entries never used (a demo that went as planned leaves none)."""
        return [e for e in self.scenario.entries if e.on == "ask" and e.used == 0]

    def _find(self, kind: str, text: str) -> ScenarioEntry | None:
        candidates = [e for e in self.scenario.entries if e.on == kind and e.available]
        if self.scenario.order == "sequence" and kind == "ask":
            candidates = candidates[:1]
        for e in candidates:
            if e.matches(text):
                e.used += 1
                return e
        return None

    def _world(self, setup: dict) -> None:
        change = copy.deepcopy(setup)
        if self.apply_world_change is None:
            with self._lock:
                self.pending_world_changes.append(change)
        else:
            self.apply_world_change(change)
