"""Reading another tool's file: fields checked for their kind, errors located in it.

A converter reads a parsed document with these helpers; a field of the wrong kind
raises :class:`~.errors.ShapeError` with its path in the *source* file, which the
reader turns into a :class:`~...errors.CassetteFormatError` pointing at its line.
:class:`Reshaped` counts what reading a file changes that ``convert`` reports.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..fields import join_headers, json_problem, kind_name
from ..from_wire import body_fields, parse_json
from .errors import ShapeError

__all__ = [
    "Loc",
    "Reshaped",
    "as_bytes",
    "field",
    "header_map",
    "mapping",
    "parsed_body",
    "renamed",
    "repeated_headers",
]

Loc = tuple[str | int, ...]


def field(
    mapping: Mapping[str, Any], key: str, loc: Loc, *types: type, required: bool = True
) -> Any:
    """``mapping[key]``, checked to be one of ``types``; a missing optional key gives ``None``."""
    if key not in mapping:
        if required:
            raise ShapeError(f"missing key {key!r}", loc)
        return None
    value = mapping[key]
    wrong_bool = isinstance(value, bool) and bool not in types
    if types and (wrong_bool or not isinstance(value, types)):
        names = " or ".join(kind_name(t) for t in types)
        raise ShapeError(f"is {kind_name(type(value))}, expected {names}", (*loc, key))
    return value


def mapping(value: Any, loc: Loc) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ShapeError(f"is {kind_name(type(value))}, expected a mapping", loc)
    return value


def header_map(side: Mapping[str, Any], loc: Loc) -> dict[str, str]:
    """A side's ``headers`` (values text or lists of text) joined as a cassette stores them."""
    raw = field(side, "headers", loc, dict, type(None), required=False) or {}
    for name, value in raw.items():
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, (dict, list)) for v in values):
            raise ShapeError("must be text or a list of text", (*loc, "headers", name))
    return join_headers(raw)


def as_bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def parsed_body(value: Any, loc: Loc) -> dict[str, Any]:
    """pydantic-ai's ``parsed_body`` (or a JSON body): a JSON value stored as data."""
    problem = json_problem(value)
    if problem is not None:
        raise ShapeError(problem, loc)
    try:
        text = json.dumps(value)
    except RecursionError:
        raise ShapeError("nests too deeply to be a request or response body", loc) from None
    if isinstance(value, (dict, list)) and parse_json(text) is not None:
        return {"json": value}
    return body_fields(text.encode("utf-8"), "application/json")


@dataclass(frozen=True)
class Reshaped:
    """What reading another tool's file changes that its user may miss (``agentreplay
    convert`` lists it): headers with several values, joined with ``, ``; status
    reason phrases that are not the standard one, not kept."""

    repeated_headers: int = 0
    reason_phrases: int = 0


def repeated_headers(sides: Iterable[Any]) -> int:
    """How many headers of ``sides`` (requests and responses as a file has them) hold
    more than one value."""
    count = 0
    for side in sides:
        headers = side.get("headers") if isinstance(side, Mapping) else None
        if isinstance(headers, Mapping):
            count += sum(1 for v in headers.values() if isinstance(v, list) and len(v) > 1)
    return count


def renamed(loc: Loc, names: Mapping[str, str]) -> Loc:
    """A field path of our layout with its parts named as another format names them."""
    return tuple(names.get(part, part) if isinstance(part, str) else part for part in loc)
