"""Differences between two JSON values at JSON paths, short enough to read in a test failure.

``json_diff({"messages": [..., {"city": "Leeds"}]}, {"messages": [..., {"city": "York"}]})``
gives ``["messages[4].city: 'Leeds' != 'York'"]``. Lists of different lengths are
aligned (an inserted message is one ``new`` line, not a cascade of changes); long
strings are cut around their first difference; containers are shown as compact
JSON cut to one line. The work is bounded: the walk stops after
:data:`WORK_BUDGET` nodes, and :func:`similarity` looks at most at
:data:`MAX_LEAVES` leaves of each value.

Every piece of text passes through ``mask`` *whole* before it is cut, so a secret
is masked even when only a part of it would be shown.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

__all__ = [
    "MAX_LEAVES",
    "WIDTH",
    "WORK_BUDGET",
    "JSONPath",
    "Mask",
    "format_path",
    "json_diff",
    "render",
    "similarity",
    "string_pair",
]

Mask = Callable[[str], str]
"""Masks a piece of text whole (secrets replaced) before it is cut and shown."""
WIDTH = 72
WORK_BUDGET = 200_000
MAX_LEAVES = 5_000
_ALIGN_MAX = 2_000  # lists longer than this are compared position by position
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")

JSONPath = tuple[str | int, ...]
"""Where a value sits in a JSON document: keys and list indexes from the root."""


def _keep(text: str) -> str:
    return text


def format_path(path: JSONPath, mask: Mask = _keep) -> str:
    """``("messages", 4, "content")`` → ``messages[4].content``; the root is ``(root)``."""
    out = []
    for segment in path:
        if isinstance(segment, int):
            out.append(f"[{segment}]")
        elif _IDENT.match(segment):
            out.append(f".{mask(segment)}" if out else mask(segment))
        else:
            out.append(f"[{json.dumps(mask(segment), ensure_ascii=False)}]")
    return "".join(out) or "(root)"


def _tokens(value: Any, mask: Mask) -> Iterator[str]:
    """Compact JSON of ``value``, token by token, strings masked whole (lazy, so
    rendering a huge value stops as soon as enough text is out)."""
    if isinstance(value, dict):
        yield "{"
        for i, (key, item) in enumerate(value.items()):
            yield ("," if i else "") + json.dumps(mask(str(key)), ensure_ascii=False) + ":"
            yield from _tokens(item, mask)
        yield "}"
    elif isinstance(value, list):
        yield "["
        for i, item in enumerate(value):
            if i:
                yield ","
            yield from _tokens(item, mask)
        yield "]"
    elif isinstance(value, str):
        yield json.dumps(mask(value), ensure_ascii=False)
    else:
        yield _scalar(value, mask)


def _scalar(value: Any, mask: Mask = _keep) -> str:
    """JSON scalars as JSON writes them; anything else (a custom matcher's tuple) as
    its masked ``repr``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return mask(repr(value))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def render(value: Any, mask: Mask = _keep, width: int = WIDTH) -> str:
    """One short line showing ``value``: strings quoted, containers as compact JSON,
    anything longer than ``width`` cut with ``…`` and its size given."""
    if isinstance(value, str):
        shown = mask(value)
        if len(shown) <= width:
            return repr(shown)
        return f"{_cut(shown, width)!r} ({len(value):,} chars)"
    if isinstance(value, bytes):
        text = mask(value.decode("utf-8", "backslashreplace"))
        return f"b{_cut(text, width)!r}" + (f" ({len(value):,} bytes)" if len(text) > width else "")
    if not isinstance(value, (dict, list)):
        return _cut(_scalar(value, mask), width)
    out, size = [], 0
    for token in _tokens(value, mask):
        out.append(token)
        size += len(token)
        if size > width:
            unit = "keys" if isinstance(value, dict) else "items"
            return f"{_cut(''.join(out), width)} ({len(value):,} {unit})"
    return "".join(out)


def string_pair(a: str, b: str, mask: Mask = _keep, width: int = WIDTH) -> tuple[str, str, str]:
    """Two different strings shown around their first difference, plus a note saying
    where it is (``""`` when both fit whole)."""
    ma, mb = mask(a), mask(b)
    if ma == mb:
        return "<masked>", "<masked>", " (they differ inside a masked value)"
    at = len(os.path.commonprefix([ma, mb]))  # noqa: RUF071 (strings, not paths)
    if len(ma) <= width and len(mb) <= width:
        return repr(ma), repr(mb), ""
    start = max(0, at - width // 3)
    cut = [("…" if start else "") + _cut(s[start:], width) for s in (ma, mb)]
    return repr(cut[0]), repr(cut[1]), f" (first difference at char {at:,})"


class _Differ:
    """One walk over two values, collecting at most ``limit`` rendered lines."""

    def __init__(self, limit: int, mask: Mask, labels: tuple[str, str] | None, fast: bool):
        self.limit, self.mask, self.labels, self.fast = limit, mask, labels, fast
        self.lines: list[str] = []
        self.found = self.work = 0
        self.stopped = False

    def emit(self, path: JSONPath, kind: str, a: Any = None, b: Any = None) -> None:
        self.found += 1
        if len(self.lines) < self.limit:
            self.lines.append(f"{format_path(path, self.mask)}: {self._text(kind, a, b)}")

    def _text(self, kind: str, a: Any, b: Any) -> str:
        old, new = self.labels or ("a", "b")
        if kind == "missing":
            return f"missing {new if self.labels else 'in b'} ({old} {render(a, self.mask)})"
        if kind == "new":
            return f"new {new if self.labels else 'in b'}: {render(b, self.mask)}"
        note = ""
        if isinstance(a, str) and isinstance(b, str):
            ra, rb, note = string_pair(a, b, self.mask)
        else:
            ra, rb = render(a, self.mask), render(b, self.mask)
        if self.labels:
            return f"{old} {ra}, {new} {rb}{note}"
        return f"{ra} != {rb}{note}"

    def walk(self, a: Any, b: Any, path: JSONPath) -> None:
        self.work += 1
        if self.work > WORK_BUDGET:
            self.stopped = True
            return
        if type(a) is type(b) and (a is b or (self.fast and a == b)):
            return
        if isinstance(a, dict) and isinstance(b, dict):
            self._dicts(a, b, path)
        elif isinstance(a, list) and isinstance(b, list):
            self._lists(a, b, path)
        elif type(a) is not type(b) or a != b:
            self.emit(path, "changed", a, b)

    def _dicts(self, a: dict[str, Any], b: dict[str, Any], path: JSONPath) -> None:
        for key in sorted(a.keys() | b.keys(), key=str):
            if key not in b:
                self.emit((*path, key), "missing", a[key])
            elif key not in a:
                self.emit((*path, key), "new", None, b[key])
            else:
                self.walk(a[key], b[key], (*path, key))

    def _lists(self, a: list[Any], b: list[Any], path: JSONPath) -> None:
        if len(a) == len(b) or len(a) + len(b) > _ALIGN_MAX:
            for i, (x, y) in enumerate(zip(a, b, strict=False)):
                self.walk(x, y, (*path, i))
            self._rest(a, b, path, min(len(a), len(b)), min(len(a), len(b)))
            return
        keys_a, keys_b = [_fingerprint(x) for x in a], [_fingerprint(y) for y in b]
        self.work += len(a) + len(b)
        matcher = difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            paired = min(i2 - i1, j2 - j1)
            for k in range(paired):
                self.walk(a[i1 + k], b[j1 + k], (*path, j1 + k))
            self._rest(a[:i2], b[:j2], path, i1 + paired, j1 + paired)

    def _rest(self, a: list[Any], b: list[Any], path: JSONPath, i: int, j: int) -> None:
        """``a[i:]`` are missing in ``b``; ``b[j:]`` are new in it."""
        for k in range(i, len(a)):
            self.emit((*path, k), "missing", a[k])
        for k in range(j, len(b)):
            self.emit((*path, k), "new", None, b[k])

    def result(self) -> list[str]:
        more = self.found - len(self.lines)
        if more:
            self.lines.append(f"… and {more:,} more difference{'s' if more > 1 else ''}")
        if self.stopped:
            self.lines.append(f"… diff stopped after {WORK_BUDGET:,} nodes; there may be more")
        return self.lines


def _fingerprint(value: Any) -> Any:
    """A hashable stand-in for a JSON value, for aligning lists."""
    try:
        return hash(json.dumps(value, sort_keys=True, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return id(value)


def json_diff(
    a: Any,
    b: Any,
    *,
    limit: int = 20,
    mask: Mask = _keep,
    labels: tuple[str, str] | None = None,
) -> list[str]:
    """The differences between JSON values ``a`` and ``b``, one line each, at most
    ``limit`` lines plus a line counting the rest.

    Lines read ``path: A != B``, ``path: missing in b (a X)``, ``path: new in b: Y``;
    with ``labels=("recorded", "now")`` they read ``path: recorded A, now B``,
    ``path: missing now (recorded X)``, ``path: new now: Y``. ``[]`` means equal
    (``1`` and ``1.0`` are not equal here: normalize first).
    """
    try:
        differ = _Differ(limit, mask, labels, fast=True)
        differ.walk(a, b, ())
        if not differ.found and not differ.stopped and _fingerprint(a) != _fingerprint(b):
            # ``==`` said equal but the values are not (True == 1): walk again, exactly.
            differ = _Differ(limit, mask, labels, fast=False)
            differ.walk(a, b, ())
        return differ.result()
    except RecursionError:
        return ["(root): the values differ but are nested too deeply to diff"]


def _leaves(value: Any) -> Counter[tuple[Any, ...]]:
    """At most :data:`MAX_LEAVES` (path, type, value) leaves of ``value``, depth first."""
    found: Counter[tuple[Any, ...]] = Counter()
    stack: list[tuple[JSONPath, Any]] = [((), value)]
    while stack and len(found) < MAX_LEAVES:
        path, item = stack.pop()
        if isinstance(item, dict):
            stack.extend(((*path, k), v) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend(((*path, i), v) for i, v in enumerate(item))
            if not item:
                found[(path, "list", None)] += 1
        else:
            found[(path, type(item).__name__, item)] += 1
    return found


def similarity(a: Any, b: Any) -> float:
    """How alike two normalized bodies are, from 0.0 to 1.0 (equal): the share of
    JSON leaves (path and value) they have in common; for bytes, a character
    overlap ratio of their first 2 KiB. Bounded work."""
    if a is None or b is None:
        return 1.0 if a is b else 0.0
    if isinstance(a, bytes) or isinstance(b, bytes):
        if not (isinstance(a, bytes) and isinstance(b, bytes)):
            return 0.0
        if a == b:
            return 1.0
        return 0.99 * difflib.SequenceMatcher(None, a[:2048], b[:2048]).quick_ratio()
    la, lb = _leaves(a), _leaves(b)
    union = sum((la | lb).values())
    return sum((la & lb).values()) / union if union else 1.0
