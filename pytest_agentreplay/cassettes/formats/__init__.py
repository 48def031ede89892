"""Other tools' cassette formats, converted to cassette data at load time.

* ``vcrpy``: vcrpy / pytest-recording YAML — stock PyYAML output (crewAI) and
  pydantic-ai's serializer (``parsed_body``). ``uri``, ``status: {code, message}``,
  list-valued headers, ``body: {string: ...}`` (``!!binary`` for bytes).
* ``http-snapshot``: the JSON arrays the anthropic SDK's tests keep.
* ``raw-sse``: a bare event-stream body (SDK fixtures), no HTTP metadata.

Files are never modified on disk. Each converter returns plain data in our
layout, validated by the caller; shape problems raise :class:`ShapeError` with
the path of the offending field *in the source file*, so the error can point at
its line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from ..fields import join_headers, json_problem
from ..wire import body_fields, parse_json, response_fields, split_stream

__all__ = [
    "Format",
    "ShapeError",
    "detect_data",
    "detect_text",
    "from_http_snapshot",
    "from_raw_sse",
    "from_vcr",
]

Format = Literal["agentreplay", "vcrpy", "http-snapshot", "raw-sse"]
Loc = tuple[str | int, ...]

_RAW_SSE_START = re.compile(r"(?:event|data|id|retry)[ \t]*:|:")
# The request's own url / uri key: where PyYAML and our writer put it first, then anywhere.
_URL_KEYS = (
    re.compile(r"^ {4}(uri|url):", re.MULTILINE),
    re.compile(r"^[ \t]*(?:- )?(uri|url):", re.MULTILINE),
)
_JSON_URL_KEY = re.compile(r'(?<!\\)"(uri|url)"\s*:')
"""The request's URL key in a JSON document (vcrpy's ``serializer="json"``); a key
inside a JSON-encoded body string has its quotes escaped and does not match."""
# Where a bare stream most likely came from, judged by its events.
_RAW_SSE_URLS = (
    ("message_start", "https://api.anthropic.com/v1/messages"),
    ("response.", "https://api.openai.com/v1/responses"),
    ("chat.completion.chunk", "https://api.openai.com/v1/chat/completions"),
)


class ShapeError(ValueError):
    """A source file has a field of the wrong kind (``loc`` is its path in the file)."""

    def __init__(self, problem: str, loc: Loc) -> None:
        self.problem = problem
        self.loc = loc
        super().__init__(problem)


def detect_text(text: str) -> Format:
    """Tell the format from the text alone (cheap; a BOM and leading blank lines ignored)."""
    head = text.lstrip("\ufeff \t\r\n")
    if _RAW_SSE_START.match(head):
        return "raw-sse"
    if head.startswith("["):
        return "http-snapshot"
    patterns = (_JSON_URL_KEY,) if head.startswith("{") else _URL_KEYS
    for pattern in patterns:
        match = pattern.search(text)
        if match is not None:
            return "vcrpy" if match.group(1) == "uri" else "agentreplay"
    return "agentreplay"


def detect_data(data: Any) -> Format:
    """``vcrpy`` when the first request has a ``uri`` (ours has ``url``)."""
    try:
        request = data["interactions"][0]["request"]
    except (KeyError, IndexError, TypeError):
        return "agentreplay"
    return "vcrpy" if isinstance(request, Mapping) and "uri" in request else "agentreplay"


# --- shape helpers ---------------------------------------------------------------------


_KINDS: dict[type, str] = {
    dict: "a mapping",
    list: "a list",
    str: "text",
    bytes: "binary",
    int: "an integer",
    bool: "a boolean",
    float: "a number",
    type(None): "empty",
}


def _kind_of(kind: type) -> str:
    return _KINDS.get(kind, f"a {kind.__name__}")


def _get(
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
        names = " or ".join(_kind_of(t) for t in types)
        raise ShapeError(f"is {_kind_of(type(value))}, expected {names}", (*loc, key))
    return value


def _mapping(value: Any, loc: Loc) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ShapeError(f"is {_kind_of(type(value))}, expected a mapping", loc)
    return value


def _headers(side: Mapping[str, Any], loc: Loc) -> dict[str, str]:
    raw = _get(side, "headers", loc, dict, type(None), required=False) or {}
    for name, value in raw.items():
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, (dict, list)) for v in values):
            raise ShapeError("must be text or a list of text", (*loc, "headers", name))
    return join_headers(raw)


def _as_bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def _parsed(value: Any, loc: Loc) -> dict[str, Any]:
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


# --- vcrpy -----------------------------------------------------------------------------


def _vcr_request(side: Mapping[str, Any], loc: Loc) -> dict[str, Any]:
    headers = _headers(side, loc)
    out = {
        "method": _get(side, "method", loc, str),
        "url": _get(side, "uri", loc, str),
        "headers": headers,
    }
    if "parsed_body" in side:
        return {**out, **_parsed(side["parsed_body"], (*loc, "parsed_body"))}
    body = _get(side, "body", loc, str, bytes, dict, type(None), required=False)
    if isinstance(body, dict):
        body = _get(body, "string", (*loc, "body"), str, bytes, type(None), required=False)
    if body is None:
        return out
    return {**out, **body_fields(_as_bytes(body), headers.get("content-type", "").lower())}


def _vcr_status(side: Mapping[str, Any], loc: Loc) -> int:
    status = _get(side, "status", loc, dict, int)
    if isinstance(status, dict):
        return int(_get(status, "code", (*loc, "status"), int))
    return int(status)


def _vcr_response(side: Mapping[str, Any], loc: Loc) -> dict[str, Any]:
    status = _vcr_status(side, loc)
    headers = _headers(side, loc)
    if "parsed_body" in side:
        headers.pop("content-encoding", None)
        parsed = _parsed(side["parsed_body"], (*loc, "parsed_body"))
        return {"status": status, "headers": headers, **parsed}
    body = _get(side, "body", loc, dict, str, bytes, type(None), required=False)
    if isinstance(body, dict):
        body = _get(body, "string", (*loc, "body"), str, bytes, type(None), required=False)
    raw = b"" if body is None else _as_bytes(body)
    try:
        fields = response_fields(headers, raw)
    except ValueError as exc:
        raise ShapeError(str(exc), (*loc, "body")) from None
    return {"status": status, **fields}


def from_vcr(data: Any) -> dict[str, Any]:
    """A vcrpy cassette's data as ours (``version`` checked by the caller)."""
    top = _mapping(data, ())
    items = _get(top, "interactions", (), list)
    interactions = []
    for index, raw in enumerate(items):
        loc: Loc = ("interactions", index)
        item = _mapping(raw, loc)
        request = _mapping(_get(item, "request", loc), (*loc, "request"))
        response = _mapping(_get(item, "response", loc), (*loc, "response"))
        interactions.append(
            {
                "request": _vcr_request(request, (*loc, "request")),
                "response": _vcr_response(response, (*loc, "response")),
            }
        )
    return {"version": 1, "interactions": interactions}


# --- http-snapshot ---------------------------------------------------------------------


def _snapshot_body(
    body: Any, headers: dict[str, str], loc: Loc, *, response: bool
) -> dict[str, Any]:
    if body is None:
        return {}
    if not isinstance(body, str):
        return _parsed(body, loc)
    if response:
        return response_fields(headers, body.encode("utf-8"))
    return body_fields(body.encode("utf-8"), headers.get("content-type", "").lower())


def from_http_snapshot(data: Any) -> dict[str, Any]:
    """An ``http-snapshot`` JSON array (anthropic SDK tests) as our cassette data."""
    if not isinstance(data, list):
        raise ShapeError(f"is {_kind_of(type(data))}, expected a list of exchanges", ())
    interactions = []
    for index, raw in enumerate(data):
        loc: Loc = (index,)
        item = _mapping(raw, loc)
        request = _mapping(_get(item, "request", loc), (*loc, "request"))
        response = _mapping(_get(item, "response", loc), (*loc, "response"))
        req_headers = _headers(request, (*loc, "request"))
        resp_headers = _headers(response, (*loc, "response"))
        body = _snapshot_body(
            response.get("body"), resp_headers, (*loc, "response", "body"), response=True
        )
        interactions.append(
            {
                "request": {
                    "method": _get(request, "method", (*loc, "request"), str),
                    "url": _get(request, "url", (*loc, "request"), str),
                    "headers": req_headers,
                    **_snapshot_body(
                        request.get("body"), req_headers, (*loc, "request", "body"), response=False
                    ),
                },
                "response": {
                    "status": _get(response, "status_code", (*loc, "response"), int),
                    "headers": resp_headers,
                    **body,
                },
            }
        )
    return {"version": 1, "interactions": interactions}


# --- raw SSE ---------------------------------------------------------------------------


def from_raw_sse(raw: bytes) -> dict[str, Any]:
    """A bare event-stream body as one ``POST`` interaction answered ``200``.

    The URL is guessed from the events (Anthropic Messages, OpenAI Responses or
    Chat Completions), ``https://raw-sse.invalid/`` when nothing matches.
    """
    fields = split_stream(raw)
    sample = " ".join(f"{e.event} {e.data[:200]}" for e in fields["events"][:3])
    url = next((url for marker, url in _RAW_SSE_URLS if marker in sample), None)
    response = {"status": 200, "headers": {"content-type": "text/event-stream"}, **fields}
    request = {"method": "POST", "url": url or "https://raw-sse.invalid/"}
    return {"version": 1, "interactions": [{"request": request, "response": response}]}
