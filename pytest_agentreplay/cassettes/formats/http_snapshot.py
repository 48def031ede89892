"""The anthropic SDK's ``http-snapshot`` JSON (an array of request / response pairs),
read as cassette data."""

from __future__ import annotations

from typing import Any

from ..fields import kind_name
from ..from_wire import body_fields, response_fields
from .shape import Loc, ShapeError, field, header_map, mapping, parsed_body

__all__ = ["from_http_snapshot"]


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
