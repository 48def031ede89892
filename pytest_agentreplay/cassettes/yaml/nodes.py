"""Where a field is in a YAML (or JSON) document, and which field a place in it is.

The one node locator: every message that points into a cassette's text — a bad
value found after loading (:mod:`..io`), a ``lint`` finding (``agentreplay lint``), a
secret the backstop scan found (:mod:`...redact.scan`) — asks a :class:`NodeLocator`.
It composes the document's node tree once, on first use, with the safe loader
(:class:`~.load.CassetteLoader`): composing builds no object, runs no tag and
expands no alias, so hostile text costs no more than its own size. Then it reads
the tree both ways:

* :meth:`NodeLocator.position`: the 1-based line and column of a field path
  (``("interactions", 3, "response", "status")``), or of the deepest node found
  on the way when the path leaves the document;
* :meth:`NodeLocator.field_at`: the field path (``interactions[2].request.headers.
  x-foo``) of the scalar spanning a character offset, by binary search down the
  tree, each node's child offsets cached: many hits in a cassette of thousands of
  interactions cost O(hits x depth x log n).

Nodes are told apart by their ``id`` (``scalar``, ``sequence``, ``mapping``), not by
``isinstance``: when ``yaml.nodes`` gets imported twice (pytester's in-process runs
drop modules), composed nodes are instances of the other copy's classes.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

import yaml

from .load import CassetteLoader

__all__ = ["Loc", "NodeLocator"]

Loc = tuple[str | int, ...]
"""A field path as parts: mapping keys and sequence indexes."""

_SIMPLE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _kind(node: Any) -> str:
    """``scalar``, ``sequence`` or ``mapping`` (see the module docs)."""
    return str(getattr(node, "id", ""))


def _contains(node: Any, offset: int) -> bool:
    return bool(node.start_mark.index <= offset < node.end_mark.index)


def _segment(key: Any) -> str:
    value = str(key.value) if _kind(key) == "scalar" else "?"
    return f".{value}" if _SIMPLE_KEY.fullmatch(value) else f"[{value!r}]"


def _key_matches(key: Any, part: str | int, any_case: bool) -> bool:
    if _kind(key) != "scalar":
        return False
    if any_case:
        return str(key.value).lower() == str(part).lower()
    return isinstance(part, str) and key.value == part


def _step(node: Any, part: str | int, any_case: bool) -> tuple[Any, Any] | None:
    """The (key or item node, value node) of one path part under ``node``, if there."""
    if _kind(node) == "sequence" and isinstance(part, int):
        return (node.value[part], node.value[part]) if 0 <= part < len(node.value) else None
    if _kind(node) == "mapping":
        for key, value in node.value:
            if _key_matches(key, part, any_case):
                return key, value
    return None


class NodeLocator:
    """The node tree of one YAML (or JSON) text, composed once on first use; ``None``
    inside when the text is not one YAML document (every answer is then ``None``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._root: Any = None
        self._composed = False
        self._starts: dict[int, list[int]] = {}

    def root(self) -> Any:
        """The document's root node, or ``None`` (not YAML, empty, too deep)."""
        if not self._composed:
            self._composed = True
            try:
                self._root = yaml.compose(self.text, Loader=CassetteLoader)
            except (yaml.YAMLError, RecursionError, ValueError):
                self._root = None
        return self._root

    def position(self, loc: Loc, *, any_case: bool = False) -> tuple[int, int] | None:
        """1-based (line, column) of the deepest node of ``loc`` found in the text.

        ``any_case``: mapping keys match ``loc``'s parts whatever their case (header
        names: a vcrpy file keeps ``Content-Type``); otherwise a key matches a string
        part exactly."""
        node = self.root()
        if node is None:
            return None
        mark = node.start_mark
        for part in loc:
            found = _step(node, part, any_case)
            if found is None:
                break
            mark, node = found[0].start_mark, found[1]
        return mark.line + 1, mark.column + 1

    def field_at(self, offset: int) -> str | None:
        """The field path of the scalar holding character ``offset`` (``None`` if outside
        every scalar: a comment, a key's punctuation, not YAML)."""
        node = self.root()
        if node is None:
            return None
        path, seen = "", set()
        while id(node) not in seen:  # aliases can make cycles: each node once
            seen.add(id(node))
            step = self._descend(node, offset)
            if step is None:
                break
            node, segment = step
            path += segment
        if not path or not _contains(node, offset):
            return None
        return path.lstrip(". ")

    def _child(self, node: Any, offset: int) -> int:
        starts = self._starts.get(id(node))
        if starts is None:
            items = node.value
            keys = [k for k, _ in items] if _kind(node) == "mapping" else items
            starts = self._starts[id(node)] = [n.start_mark.index for n in keys]
        return bisect.bisect_right(starts, offset) - 1

    def _descend(self, node: Any, offset: int) -> tuple[Any, str] | None:
        """The child of ``node`` spanning ``offset`` and its path segment, if any."""
        if _kind(node) not in ("sequence", "mapping"):
            return None
        i = self._child(node, offset)
        if i < 0:
            return None
        if _kind(node) == "sequence":
            item = node.value[i]
            return (item, f"[{i}]") if _contains(item, offset) else None
        key, value = node.value[i]
        if _contains(key, offset):
            return key, " (in a mapping key)"
        return (value, _segment(key)) if _contains(value, offset) else None
