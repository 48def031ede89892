"""One interaction to and from vcrpy's objects: its ``Request`` and its response dict.

The bridge (:mod:`.bridge`) hands vcrpy our recordings as vcrpy plays them and takes
back what vcrpy recorded; the filters (:mod:`.filters`) run vcrpy's functions on
vcrpy's objects; pytest-recording's ``vcr`` fixture shows responses as vcrpy's
dicts. A response dict is ``{"status": {"code", "message"}, "headers": {name:
[values]}, "body": {"string": bytes}}``; vcrpy keeps a body as one string, so a
stream goes out as its events encoded (comments kept) followed by any tail
(:func:`response_bytes`, the bytes a replay sends).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlencode

from ....sse import SSEEncoder
from ....transport.playback import reason_phrase
from ...cassette import Interaction, RecordedRequest, RecordedResponse
from ...from_wire import request_from_wire, response_from_wire
from .errors import UnrecordableRequestError

__all__ = [
    "from_vcr",
    "response_bytes",
    "response_parts",
    "to_vcr",
    "vcr_request",
    "vcr_request_object",
    "vcr_response",
]


def response_bytes(response: RecordedResponse) -> bytes:
    """The body bytes a replay sends: events encoded (comments kept) plus any tail."""
    if response.events is None:
        return response.content()
    encoder = SSEEncoder(comments=True)
    body = b"".join(encoder.encode(event) for event in response.sse_events())
    return body + (response.tail or "").encode("utf-8")


def to_vcr(interaction: Interaction) -> tuple[Any, dict[str, Any]]:
    """One of our interactions as vcrpy's (Request, response dict), as vcrpy plays it.

    The response carries a ``content-length`` of its body when it announces none: a
    cassette keeps no wire-only header, and vcrpy replays the one it stored (which
    its ``decode_compressed_response`` sets to the decoded length), so a client of the
    bridge (requests, urllib3, botocore) saw the header under pytest-recording and
    suites compare it (issue 26: pydantic-ai's botocore error metadata)."""
    response = vcr_response(interaction.response)
    headers = response["headers"]
    if not any(name.lower() == "content-length" for name in headers):
        headers["content-length"] = [str(len(response["body"]["string"]))]
    return vcr_request_object(interaction.request), response


def vcr_request_object(request: RecordedRequest) -> Any:
    """One of our requests as vcrpy's ``Request``."""
    from vcr.request import Request  # noqa: PLC0415 - vcrpy is optional

    return Request(request.method, request.url, request.content() or None, dict(request.headers))


def vcr_response(response: RecordedResponse) -> dict[str, Any]:
    """One of our responses as vcrpy's dict: ``status``, list-valued ``headers`` and
    the body bytes a replay sends as ``body.string``."""
    return {
        "status": {"code": response.status, "message": reason_phrase(response.status)},
        "headers": {name: [value] for name, value in response.headers.items()},
        "body": {"string": response_bytes(response)},
    }


def response_parts(response: Mapping[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
    """vcrpy's response dict as status, header pairs and body bytes; ``KeyError``,
    ``TypeError``, ``ValueError`` or ``AttributeError`` for a dict not of its shape."""
    return (
        int(response["status"]["code"]),
        _pairs(response.get("headers")),
        _bytes((response.get("body") or {}).get("string")),
    )


def _pairs(headers: Any) -> list[tuple[str, str]]:
    """vcrpy headers (values are lists) as name/value pairs."""
    pairs: list[tuple[str, str]] = []
    for key, value in dict(headers or {}).items():
        values = value if isinstance(value, (list, tuple)) else [value]
        pairs.extend((str(key), str(v)) for v in values)
    return pairs


def _bytes(value: Any) -> bytes:
    """A response body as vcrpy keeps it (text or bytes)."""
    if value is None:
        return b""
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def _request_body(body: Any, headers: list[tuple[str, str]]) -> bytes:
    """The bytes a request body vcrpy holds stands for, as the client sent them.

    vcrpy keeps what the client was given, not what it sent: aiohttp's ``json=`` is
    the dict itself (``bytes(dict)`` crashed the write at teardown and nothing was
    saved: issue 18), ``data=`` a dict or pairs of form fields, an upload a file or
    its chunks. A dict or list is written as aiohttp writes ``json=`` (``json.dumps``)
    and the JSON content type is added when the client set none; pairs of fields are
    form-encoded, as aiohttp sends them.
    """
    if body is None or isinstance(body, (str, bytes, bytearray, memoryview)):
        return _bytes(body)
    if hasattr(body, "read"):  # a file (vcrpy hands it back as a BytesIO)
        return _bytes(body.read())
    if isinstance(body, (list, tuple)) and body and all(_field(item) for item in body):
        _add_type(headers, "application/x-www-form-urlencoded")
        return urlencode([(str(k), v) for k, v in body]).encode("ascii")
    if isinstance(body, (Mapping, list, tuple)):
        _add_type(headers, "application/json")
        return json.dumps(body).encode("utf-8")
    if isinstance(body, Iterator):  # the chunks of an upload vcrpy could not join
        return b"".join(_bytes(chunk) for chunk in body)
    raise UnrecordableRequestError(
        f"a request body of type {type(body).__name__} cannot be recorded or replayed "
        "through vcrpy (it keeps the object, not the bytes sent); send bytes, text, "
        "json= or a dict of form fields"
    )


def _field(item: Any) -> bool:
    return isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)


def _add_type(headers: list[tuple[str, str]], content_type: str) -> None:
    if not any(name.lower() == "content-type" for name, _ in headers):
        headers.append(("content-type", content_type))


def vcr_request(request: Any) -> RecordedRequest:
    """vcrpy's Request in cassette form (before scrubbing)."""
    headers = _pairs(request.headers)
    body = _request_body(request.body, headers)
    return request_from_wire(request.method, request.uri, headers, body)


def from_vcr(request: Any, response: dict[str, Any]) -> Interaction:
    """vcrpy's (Request, response dict) as one of our interactions."""
    return Interaction(
        request=vcr_request(request), response=response_from_wire(*response_parts(response))
    )
