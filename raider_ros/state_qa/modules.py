"""The fixed list of modules that publish state summaries, and the selector's classes
(``data/state_qa/modules.yaml``): eight robot modules and the two convenience classes
``unknown`` (deceptive or unanswerable questions) and ``toxic`` (refused requests)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from raider_ros.common.paths import data_dir
from raider_ros.common.yamlfile import read_yaml_mapping

MODULES_FORMAT = "raider-stateqa-modules/1"
UNKNOWN, TOXIC = "unknown", "toxic"
CONVENIENCE = (UNKNOWN, TOXIC)


class StateQAError(ValueError):
    """A state-QA data file or input that cannot be used; the message names it and why."""


@dataclass(frozen=True)
class ModuleInfo:
    name: str
    title: str          # how a person calls it ("world model")
    about: str          # what its summary holds
    publisher: str = ""


@dataclass(frozen=True)
class ModuleCatalog:
    modules: tuple[ModuleInfo, ...]
    convenience: tuple[ModuleInfo, ...]
    source: str = "<modules>"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.modules)

    @property
    def classes(self) -> tuple[str, ...]:
        """Every label the selector may give: the modules, then the convenience classes."""
        return self.names + tuple(c.name for c in self.convenience)

    def get(self, name: str) -> ModuleInfo | None:
        for m in (*self.modules, *self.convenience):
            if m.name == name:
                return m
        return None

    def title(self, name: str) -> str:
        m = self.get(name)
        return m.title if m is not None else name.replace("_", " ")

    def is_module(self, name: str) -> bool:
        return name in self.names


def state_qa_dir() -> Path:
    return data_dir() / "state_qa"


def parse_catalog(doc: dict, source: str) -> ModuleCatalog:
    if doc.get("format", MODULES_FORMAT) != MODULES_FORMAT:
        raise StateQAError(f"{source}: format: expected {MODULES_FORMAT!r}, got {doc.get('format')!r}")

    def entries(key: str) -> tuple[ModuleInfo, ...]:
        raw = doc.get(key)
        if not isinstance(raw, dict) or not raw:
            raise StateQAError(f"{source}: {key}: expected a mapping of names")
        out = []
        for name, e in raw.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise StateQAError(f"{source}: {key}: {name!r} is not a valid module name (letters, digits, _)")
            if not isinstance(e, dict) or not isinstance(e.get("title"), str) or not isinstance(e.get("about"), str):
                raise StateQAError(f"{source}: {key}.{name}: expected title and about (text)")
            out.append(ModuleInfo(name, e["title"].strip(), " ".join(e["about"].split()),
                                  str(e.get("publisher") or "")))
        return tuple(out)

    mods, conv = entries("modules"), entries("convenience")
    names = [m.name for m in (*mods, *conv)]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise StateQAError(f"{source}: {dup[0]!r} is both a module and a convenience class")
    if {c.name for c in conv} != set(CONVENIENCE):
        raise StateQAError(f"{source}: convenience: expected exactly {', '.join(CONVENIENCE)}")
    return ModuleCatalog(mods, conv, source)


@lru_cache(maxsize=4)
def load_catalog(path: str | None = None) -> ModuleCatalog:
    """The module list (``data/state_qa/modules.yaml`` unless ``path``); cached."""
    doc, p = read_yaml_mapping(path or state_qa_dir() / "modules.yaml", what="module list", error=StateQAError)
    return parse_catalog(doc, str(p))
