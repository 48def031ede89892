"""The checks a cassette value passes when a model object is built.

Each check returns the value to store (normalized where the format says so: header
names lower-cased, a time kept to the microsecond) or raises
:class:`CassetteValueError`, which names the field and what is wrong with it,
never the value (it may be a secret). The reader adds the file, line and column.

Walking a JSON body to prove it is JSON costs as much as the body is long, and
most bodies are known to be JSON already (parsed by ``json.loads`` or by the
canonical reader, whose result the writer re-checks): :func:`json_trusted` skips
the walk while such bodies are built.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any, TypeVar

from .errors import CassetteValueError
from .fields import STREAM_ENDS, json_problem, kind_of, normalize_headers

__all__ = [
    "CassetteValueError",
    "Loc",
    "base64_text",
    "comments",
    "each",
    "headers",
    "inside",
    "integer",
    "items",
    "json_body",
    "json_trusted",
    "keys",
    "name",
    "optional_text",
    "stream_end",
    "text",
    "time",
    "wrong",
]

Loc = tuple[str | int, ...]
_T = TypeVar("_T")

LINE_BREAK = "holds a line break (or NUL) that an SSE field cannot carry"
_trusted: ContextVar[bool] = ContextVar("json_trusted", default=False)


def wrong(value: Any, expected: str, *loc: str | int) -> CassetteValueError:
    """The error for a value of the wrong kind (``is text, expected an integer``)."""
    return CassetteValueError(f"is {kind_of(value)}, expected {expected}", loc)


# --- scalars ---------------------------------------------------------------------------


def text(value: Any, field: str, forbidden: str = "") -> str:
    """``value`` as text holding none of ``forbidden`` (the slow path of the model's
    inline checks: it mostly explains why a value is refused)."""
    if not isinstance(value, str):
        raise wrong(value, "text", field)
    if any(char in value for char in forbidden):
        raise CassetteValueError(LINE_BREAK, (field,))
    return str(value)


def optional_text(value: Any, field: str) -> str | None:
    return value if value is None or type(value) is str else text(value, field)


def name(value: Any, field: str) -> str:
    """A method or URL: text, not empty."""
    checked: str = value if type(value) is str else text(value, field)
    if not checked:
        raise CassetteValueError("is empty", (field,))
    return checked


def integer(value: Any, field: str, low: int, high: int | None = None) -> int:
    """An integer (not a boolean) from ``low`` to ``high``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise wrong(value, "an integer", field)
    number = int(value)
    if number < low or (high is not None and number > high):
        bounds = f"from {low} to {high}" if high is not None else f"{low} or more"
        raise CassetteValueError(f"must be {bounds}", (field,))
    return number


def time(value: Any) -> float:
    """An arrival time: finite, not negative, kept to the microsecond so files stay
    short and stable."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise wrong(value, "a number of seconds", "t")
    try:
        seconds = float(value)
    except OverflowError:
        seconds = math.inf
    if not math.isfinite(seconds):
        raise CassetteValueError("must be a finite number", ("t",))
    if seconds < 0:
        raise CassetteValueError("must be 0 or more", ("t",))
    return round(seconds, 6)


def stream_end(value: Any) -> str:
    if type(value) is not str or value not in STREAM_ENDS:
        raise CassetteValueError(f"must be one of {', '.join(sorted(STREAM_ENDS))}", ("end",))
    return value


def base64_text(value: Any) -> str:
    checked = value if type(value) is str else text(value, "body_b64")
    try:
        base64.b64decode(checked, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise CassetteValueError(f"is not valid base64: {exc}", ("body_b64",)) from None
    return checked


# --- collections -----------------------------------------------------------------------


def comments(value: Any) -> list[str | None] | None:
    """Comment lines (a copy), one line each; an empty list is none. ``None`` (``null``
    in the file) is the blank line that closed a block of comments only."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise wrong(value, "a list of lines", "comments")
    for index, line in enumerate(value):
        if line is None:
            continue
        if not isinstance(line, str):
            raise wrong(line, "text", "comments", index)
        if "\r" in line or "\n" in line:
            problem = "a comment is one line: it cannot hold CR or LF"
            raise CassetteValueError(problem, ("comments", index))
    return list(value) or None


def headers(value: Any) -> dict[str, str]:
    """A copy with the names lower-cased (values of names that then collide joined)."""
    if type(value) is dict:  # the common case, in C: text only, names lower-case
        try:
            names = "\n".join(value)  # TypeError: a name that is not text
            "".join(value.values())  # TypeError: a value that is not text
        except TypeError:
            pass
        else:
            if names.islower() or names == names.lower():
                return dict(value)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise wrong(value, "a mapping of names to text", "headers")
    for key, item in value.items():
        if not isinstance(key, str):
            raise CassetteValueError(f"has {kind_of(key)} as a name; names are text", ("headers",))
        if not isinstance(item, str):
            raise wrong(item, "text (quote a number)", "headers", key)
    plain = value if type(value) is dict else dict(value)
    normal = normalize_headers(plain)
    return dict(normal) if normal is value else normal


def items(value: Any, kind: type[_T], field: str) -> list[_T]:
    """A list of ``kind`` objects (a copy)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise wrong(value, "a list", field)
    if not all(isinstance(item, kind) for item in value):
        index, item = next((i, x) for i, x in enumerate(value) if not isinstance(x, kind))
        article = "an" if kind.__name__[0] in "AEIOU" else "a"
        raise wrong(item, f"{article} {kind.__name__}", field, index)
    return list(value)


def json_body(value: Any) -> Any:
    """A JSON body: JSON values only (dates, sets, bytes, non-text keys are refused)."""
    if value is not None and not _trusted.get():
        problem = json_problem(value)
        if problem is not None:
            raise CassetteValueError(problem, ("json",))
    return value


def origin(value: Any) -> dict[str, Any]:
    """Where an interaction came from: a mapping of JSON values whose ``source`` names
    it (``trace`` for an imported one)."""
    if not isinstance(value, Mapping):
        raise wrong(value, "a mapping", "origin")
    problem = json_problem(value)
    if problem is not None:
        raise CassetteValueError(problem, ("origin",))
    if not isinstance(value.get("source"), str) or not value["source"]:
        raise CassetteValueError("needs a source (e.g. trace)", ("origin", "source"))
    return dict(value)


class json_trusted:  # noqa: N801 - used like a function; cheaper than a generator
    """Within the block, JSON bodies are known to be JSON: :func:`json_body` skips its walk
    (``trusted=False``: it does not, whatever an outer block said)."""

    __slots__ = ("token", "trusted")

    def __init__(self, trusted: bool = True) -> None:
        self.trusted = trusted

    def __enter__(self) -> None:
        self.token = _trusted.set(self.trusted)

    def __exit__(self, *exc: object) -> None:
        _trusted.reset(self.token)


# --- building from file data -----------------------------------------------------------


def keys(data: Any, allowed: frozenset[str], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """``data`` when it is a mapping with only ``allowed`` keys and every ``required`` one."""
    if type(data) is dict and allowed.issuperset(data):
        for key in required:
            if key not in data:
                break
        else:
            return data
    if not isinstance(data, dict):
        raise wrong(data, "a mapping")
    unknown = next((key for key in data if key not in allowed), None)
    if unknown is not None:
        raise CassetteValueError("unknown key (check its spelling)", (str(unknown),))
    missing = next(key for key in required if key not in data)
    raise CassetteValueError("missing", (missing,))


def each(values: Any, build: Callable[[Any], _T], field: str) -> Any:
    """``values`` built one by one (naming the path of a bad one); anything but a list is
    returned as it is, for the constructor to refuse."""
    if type(values) is not list:
        return values
    out: list[_T] = []
    try:
        for value in values:
            out.append(build(value))
    except CassetteValueError as exc:
        raise exc.within(field, len(out)) from None
    return out


def inside(where: str | Loc, build: Callable[[Any], _T], value: Any) -> _T:
    """``build(value)``, a bad value's path prefixed with ``where`` (a field name or a
    path)."""
    try:
        return build(value)
    except CassetteValueError as exc:
        raise exc.within(*((where,) if isinstance(where, str) else where)) from None
