"""Safe YAML loading for cassettes: no objects, no duplicate keys, bounded aliases and depth.

:class:`CassetteLoader` is PyYAML's safe loader (the libyaml C parser when it is
installed) with three additions:

* a mapping that repeats a key is refused, naming the key and both lines
  (PyYAML silently keeps the last one, so a hand-merged cassette could lose a
  header or an interaction without anyone noticing);
* before anything is constructed, the composed node graph is walked once:
  nesting deeper than the limit, more than a few alias uses, aliases that would
  expand to a large tree ("billion laughs") and recursive aliases are refused;
* only the standard safe tags construct anything; ``!!python/...`` and unknown
  tags are errors (no code runs, nothing is imported).

Errors come out as :class:`~...errors.CassetteFormatError` with the line and
column of the offending node. A field path found wrong after loading is placed by
:class:`~.nodes.NodeLocator`.
"""

from __future__ import annotations

import sys
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ...errors import CassetteFormatError
from .scalars import MAX_DEPTH

__all__ = ["MAX_ALIASES", "MAX_LOAD_DEPTH", "CassetteLoader", "load_yaml"]

MAX_LOAD_DEPTH = MAX_DEPTH + 8
"""Collections may nest this deep in a file: the writer's limit plus the cassette's own levels."""
MAX_ALIASES = 64
"""Alias uses allowed in one file. Cassettes never need any; vcrpy files rarely have one."""
_MAX_EXTRA_NODES = 10_000  # nodes that aliases may add beyond the file's own nodes

if hasattr(yaml, "CSafeLoader"):
    from yaml import CSafeLoader as _Base
else:  # pragma: no cover - PyYAML built without libyaml
    from yaml import SafeLoader as _Base  # type: ignore[assignment]


class _GraphError(yaml.MarkedYAMLError):
    """The node graph is too deep, too aliased, or recursive."""


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def _fail(problem: str, node: Node) -> _GraphError:
    return _GraphError(problem=problem, problem_mark=node.start_mark)


def _walk(root: Node) -> int:
    """Check depth and count alias uses (a node reached a second time); return the count."""
    seen: set[int] = set()
    aliases = 0
    stack: list[tuple[Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            aliases += 1
            if aliases > MAX_ALIASES:
                raise _fail(f"more than {MAX_ALIASES} alias uses; cassettes use none", node)
            continue
        seen.add(id(node))
        if depth > MAX_LOAD_DEPTH:
            raise _fail(f"collections nest deeper than {MAX_LOAD_DEPTH} levels", node)
        stack.extend((child, depth + 1) for child in _children(node))
    return aliases


def _expanded(root: Node) -> tuple[int, int]:
    """Node count and depth of the tree once every alias is expanded (memoized, iterative)."""
    sizes: dict[int, tuple[int, int]] = {}
    active: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            active.discard(key)
            kids = [sizes[id(child)] for child in _children(node)]
            sizes[key] = (
                1 + sum(size for size, _ in kids),
                1 + max((depth for _, depth in kids), default=0),
            )
            continue
        if key in sizes:
            continue
        if key in active:
            raise _fail("an alias refers to a node that contains it (a recursive alias)", node)
        active.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
    return sizes[id(root)]


def check_graph(root: Node) -> None:
    """Refuse graphs whose construction or validation would be costly or unbounded."""
    if not _walk(root):
        return
    distinct = len({id(n) for n in _iter_nodes(root)})
    size, depth = _expanded(root)
    if size > distinct + _MAX_EXTRA_NODES:
        raise _fail(f"aliases expand the document to {size} nodes; cassettes use none", root)
    if depth > MAX_LOAD_DEPTH:
        raise _fail(f"aliases nest collections deeper than {MAX_LOAD_DEPTH} levels", root)


def _iter_nodes(root: Node) -> list[Node]:
    out, seen, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen.add(id(node))
            out.append(node)
            stack.extend(_children(node))
    return out


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class CassetteLoader(_Base):
    """The safe loader with duplicate-key, alias, depth and integer-size checks (see the
    module doc)."""

    def construct_document(self, node: Node) -> Any:
        check_graph(node)
        return super().construct_document(node)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        first: dict[tuple[str, str], int] = {}
        for key_node, _ in node.value:
            if isinstance(key_node, ScalarNode):
                key = (key_node.tag, key_node.value)
                line = key_node.start_mark.line + 1
                if key in first:
                    shown = _shorten(key_node.value)
                    raise yaml.constructor.ConstructorError(
                        problem=f"duplicate key {shown!r} (first on line {first[key]}, "
                        f"again on line {line})",
                        problem_mark=key_node.start_mark,
                    )
                first[key] = line
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping

    def construct_yaml_int(self, node: ScalarNode) -> int:
        """An integer, or an error at its line: Python refuses to read one of more than
        4,300 digits (``sys.get_int_max_str_digits``), and PyYAML let that ``ValueError``
        out bare — every ``agentreplay`` command said "internal error" (issue 18)."""
        try:
            value: int = super().construct_yaml_int(node)
        except ValueError:
            digits = sum(c.isdigit() for c in str(node.value))
            raise yaml.constructor.ConstructorError(
                problem=f"an integer of {digits:,} digits; Python reads at most "
                f"{sys.get_int_max_str_digits():,} (quote it to keep it as text)",
                problem_mark=node.start_mark,
            ) from None
        return value


CassetteLoader.add_constructor("tag:yaml.org,2002:int", CassetteLoader.construct_yaml_int)


def _place(text: str, at: int) -> tuple[int, int]:
    """The 1-based line and column of ``text[at]``."""
    return text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)


def _format_error(exc: yaml.YAMLError, text: str, path: str) -> CassetteFormatError:
    if isinstance(exc, yaml.reader.ReaderError) and 0 <= exc.position <= len(text):
        # A character YAML refuses: PyYAML names its position in the text only.
        line, column = _place(text, exc.position)
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        escaped = (
            f"\\x{code:02X}"
            if code <= 0xFF
            else f"\\u{code:04X}"
            if code <= 0xFFFF
            else f"\\U{code:08X}"
        )
        return CassetteFormatError(
            f"holds U+{code:04X}, a character YAML does not allow in a file",
            path=path,
            line=line,
            column=column,
            hint=f'YAML reads it escaped in a double-quoted string ("{escaped}"): write it '
            "so, or delete the file and re-record it",
        )
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "not valid YAML"
        if exc.context and exc.problem and "constructor" not in exc.context:
            problem = f"{exc.context}: {exc.problem}"
        if isinstance(exc, yaml.constructor.ConstructorError) and "tag" in problem:
            return CassetteFormatError(
                f"{problem.split(' in ')[0]}",
                path=path,
                line=mark.line + 1 if mark else None,
                column=mark.column + 1 if mark else None,
                hint="cassettes never use YAML tags that build objects; "
                "this file was not written by a cassette tool, do not trust it",
            )
        return CassetteFormatError(
            problem,
            path=path,
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
        )
    return CassetteFormatError(f"not valid YAML: {exc}", path=path)


def load_yaml(text: str, path: str) -> Any:
    """Parse ``text`` safely; any YAML problem becomes a :class:`CassetteFormatError`."""
    try:
        return yaml.load(text, Loader=CassetteLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise _format_error(exc, text, path) from None
    except UnicodeEncodeError as exc:  # a text handed in, not a file: files are UTF-8
        line, column = _place(text, exc.start)
        raise CassetteFormatError(
            f"holds U+{ord(text[exc.start]):04X}, a lone surrogate that UTF-8 cannot hold",
            path=path,
            line=line,
            column=column,
        ) from None
    except RecursionError:  # only the pure-Python parser recurses per nesting level
        raise CassetteFormatError(
            f"collections nest deeper than {MAX_LOAD_DEPTH} levels", path=path
        ) from None
