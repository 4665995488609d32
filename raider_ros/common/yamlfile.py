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


MAX_YAML_NODES = 200_000     # a document that expands to more nodes (YAML aliases) is refused


class YAMLSizeError(yaml.YAMLError):
    """A document too large or too deep once its aliases are expanded."""

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = None


MAX_YAML_DEPTH = 64          # flow brackets ([ {) inside each other; PyYAML's scanner is quadratic in it
MAX_YAML_CHARS = 4_000_000


def _flow_depth(text: str, limit: int) -> int:
    """Deepest nesting of flow brackets outside quoted scalars (stops counting past ``limit``)."""
    depth = deepest = 0
    quote = None
    for line in text.splitlines():
        quote = None
        for c in line:
            if quote:
                if c == quote:
                    quote = None
            elif c in "'\"":
                quote = c
            elif c in "[{":
                depth += 1
                if depth > deepest:
                    deepest = depth
                    if deepest > limit:
                        return deepest
            elif c in "]}" and depth:
                depth -= 1
            elif c == "#":
                break
    return deepest


FAST_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)    # libyaml when the wheel has it


def safe_load_bounded(text: str, loader: type = FAST_SAFE_LOADER, max_nodes: int = MAX_YAML_NODES) -> Any:
    """``yaml.load`` with a SafeLoader (or subclass) that refuses an alias expansion bomb (a
    document whose nodes, counted with every alias expanded, exceed ``max_nodes``) and too
    deep nesting, both with a :class:`YAMLSizeError`, before anything is built from it."""
    if len(text) > MAX_YAML_CHARS:
        raise YAMLSizeError(f"the document is {len(text):,} characters long; the limit is {MAX_YAML_CHARS:,}")
    if _flow_depth(text, MAX_YAML_DEPTH) > MAX_YAML_DEPTH:
        raise YAMLSizeError(f"brackets are nested more than {MAX_YAML_DEPTH} levels deep")
    ld = loader(text)
    try:
        try:
            node = ld.get_single_node()
        except RecursionError:
            raise YAMLSizeError("nested too deeply") from None
        if node is None:
            return None
        if node_height(node, MAX_YAML_DEPTH) > MAX_YAML_DEPTH:      # block style: "- - - - ..."
            raise YAMLSizeError(f"values are nested more than {MAX_YAML_DEPTH} levels deep")
        size = expanded_size(node, max_nodes)
        if size > max_nodes:
            raise YAMLSizeError(f"the document expands to more than {max_nodes:,} values (YAML aliases "
                                "repeating other parts); refused")
        try:
            return ld.construct_document(node)
        except RecursionError:
            raise YAMLSizeError("nested too deeply") from None
    finally:
        ld.dispose()


def node_height(root: Any, limit: int) -> int:
    """Levels of collections inside each other in a composed YAML graph (iterative; stops past
    ``limit``; each distinct node visited once, a node that contains itself counts as too deep)."""
    height: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = [c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode) else \
            (list(node.value) if isinstance(node, yaml.SequenceNode) else [])
        if not done:
            if key in height:
                continue
            height[key] = -1                   # in progress
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in height)
            continue
        h = 0
        for c in children:
            hc = height.get(id(c), 0)
            if hc == -1:
                return limit + 1                # contains itself
            h = max(h, hc)
        height[key] = min(h + 1, limit + 1) if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) else 0
    return height[id(root)]


def expanded_size(root: Any, limit: int) -> int:
    """Nodes of a composed YAML graph with aliases expanded (stops counting past ``limit``);
    iterative, each distinct node visited once. A node that contains itself is refused."""
    size: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if key in size and not done:
            continue
        children = [c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode) else \
            (list(node.value) if isinstance(node, yaml.SequenceNode) else [])
        if not done:
            size[key] = -1                     # in progress
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in size)
            continue
        total = 1
        for c in children:
            if size.get(id(c)) == -1:          # still in progress: an ancestor of this node
                raise YAMLSizeError("the document contains itself (a recursive YAML alias); refused")
            total += size.get(id(c), 1)
            if total > limit:
                break
        size[key] = min(total, limit + 1)
    return size[id(root)]


def parse_yaml(text: str, source: str, error: type[Exception] = ValueError) -> Any:
    try:
        return safe_load_bounded(text)
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
