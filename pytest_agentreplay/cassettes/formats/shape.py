"""Reading another tool's file: fields checked for their kind, errors located in it.

A converter reads a parsed document with these helpers; a field of the wrong kind
raises :class:`ShapeError` with its path in the *source* file, which the reader
turns into a :class:`~...errors.CassetteFormatError` pointing at its line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..fields import join_headers, json_problem, kind_name
from ..from_wire import body_fields, parse_json

__all__ = ["Loc", "ShapeError", "as_bytes", "field", "header_map", "mapping", "parsed_body"]

Loc = tuple[str | int, ...]


class ShapeError(ValueError):
    """A source file has a field of the wrong kind (``loc`` is its path in the file)."""

    def __init__(self, problem: str, loc: Loc) -> None:
        self.problem = problem
        self.loc = loc
        super().__init__(problem)


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
