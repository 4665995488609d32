"""Reading the project's YAML data files with errors that name the file and the line."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def find_file(spec: str | Path, folder: Path | None = None) -> Path:
    """``spec`` as a path, else ``folder/<spec>.yaml`` or ``folder/<spec>``; when none exists,
    the path as given (the reader then reports it missing)."""
    p = Path(spec).expanduser()
    if p.is_file() or folder is None:
        return p
    for cand in (folder / f"{spec}.yaml", folder / str(spec)):
        if cand.is_file():
            return cand
    return p


def parse_yaml(text: str, source: str, error: type[Exception] = ValueError) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise error(f"{source}{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None


def read_yaml(spec: str | Path, *, folder: Path | None = None, what: str = "file",
              error: type[Exception] = ValueError) -> tuple[Any, Path]:
    """Find and parse a YAML file; returns (document, path). ``what`` names the file's kind in
    the error ("scenario file", "action mapping")."""
    p = find_file(spec, folder)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        also = f" (also looked in {folder})" if folder is not None else ""
        raise error(f"{spec}: no such {what}{also}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{p}: cannot read: {exc}") from None
    return parse_yaml(text, str(p), error), p


def read_yaml_mapping(spec: str | Path, *, folder: Path | None = None, what: str = "file",
                      error: type[Exception] = ValueError) -> tuple[dict, Path]:
    """:func:`read_yaml` for files whose top level must be a mapping."""
    doc, p = read_yaml(spec, folder=folder, what=what, error=error)
    if not isinstance(doc, dict):
        raise error(f"{p}: expected a mapping at the top level")
    return doc, p
