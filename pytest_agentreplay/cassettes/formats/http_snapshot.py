"""The anthropic SDK's ``http-snapshot`` JSON (an array of request / response pairs):
told apart (:func:`sniff`), read as cassette data (:func:`from_http_snapshot`), and
seen as written for ``lint`` and ``convert`` (:func:`source_loc`,
:func:`sent_body`, :func:`reshaped`)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from ..fields import kind_name
from ..from_wire import body_fields, response_fields
from .errors import ShapeError
from .shape import (
    Loc,
    Reshaped,
    field,
    header_map,
    mapping,
    parsed_body,
    renamed,
    repeated_headers,
)

__all__ = [
    "FIELD_NAMES",
    "from_http_snapshot",
    "reshaped",
    "sent_body",
    "sniff",
    "source_loc",
    "stored_responses",
]

FIELD_NAMES = {"status": "status_code", "events": "body", "json": "body", "tail": "body"}
"""Our field names, as an http-snapshot file names the field that holds the same thing."""


def sniff(head: str) -> bool:
    """Whether a text starting with ``head`` (no BOM, no leading blank line) is an
    http-snapshot file: a JSON array."""
    return head.startswith("[")


def _body(body: Any, headers: dict[str, str], loc: Loc, *, response: bool) -> dict[str, Any]:
    if body is None:
        return {}
    if not isinstance(body, str):
        return parsed_body(body, loc)
    if response:
        return response_fields(headers, body.encode("utf-8"))
    return body_fields(body.encode("utf-8"), headers.get("content-type", "").lower())


def _request(side: Any, loc: Loc) -> dict[str, Any]:
    request = mapping(side, loc)
    headers = header_map(request, loc)
    return {
        "method": field(request, "method", loc, str),
        "url": field(request, "url", loc, str),
        "headers": headers,
        **_body(request.get("body"), headers, (*loc, "body"), response=False),
    }


def _response(side: Any, loc: Loc) -> dict[str, Any]:
    response = mapping(side, loc)
    headers = header_map(response, loc)
    return {
        "status": field(response, "status_code", loc, int),
        "headers": headers,
        **_body(response.get("body"), headers, (*loc, "body"), response=True),
    }


def from_http_snapshot(data: Any) -> dict[str, Any]:
    """An ``http-snapshot`` JSON array (anthropic SDK tests) as our cassette data."""
    if not isinstance(data, list):
        raise ShapeError(f"is {kind_name(type(data))}, expected a list of exchanges", ())
    interactions = []
    for index, raw in enumerate(data):
        loc: Loc = (index,)
        item = mapping(raw, loc)
        interactions.append(
            {
                "request": _request(field(item, "request", loc), (*loc, "request")),
                "response": _response(field(item, "response", loc), (*loc, "response")),
            }
        )
    return {"version": 1, "interactions": interactions}


def source_loc(index: int, *rest: str | int) -> Loc:
    """Where ``interactions[index].<rest>`` (our layout) is in an http-snapshot file."""
    return (index, *renamed(rest, FIELD_NAMES))


def stored_responses(document: Any) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """The responses of an http-snapshot file's parsed document, by exchange index."""
    for index, item in enumerate(document if isinstance(document, list) else ()):
        response = item.get("response") if isinstance(item, Mapping) else None
        if isinstance(response, Mapping):
            yield index, response


def sent_body(response: Mapping[str, Any]) -> tuple[bytes | None, bool]:
    """The body bytes the SDK's tests replay for a stored response, and whether they
    are the stored text itself (``False``: a JSON value re-serialized)."""
    body = response.get("body")
    if body is None:
        return b"", True
    if isinstance(body, str):
        return body.encode("utf-8"), True
    return json.dumps(body).encode("utf-8"), False


def reshaped(document: Any) -> Reshaped:
    """What reading an http-snapshot file changes: repeated headers, joined."""
    items = [i for i in document if isinstance(i, Mapping)] if isinstance(document, list) else []
    sides = [item.get(side) for item in items for side in ("request", "response")]
    return Reshaped(repeated_headers=repeated_headers(sides))
