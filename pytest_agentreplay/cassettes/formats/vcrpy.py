"""The vcrpy / pytest-recording format, both ways, in one place.

* Files: :func:`from_vcr_data` reads a vcrpy cassette's parsed YAML (stock PyYAML
  output as crewAI writes it, pydantic-ai's serializer with ``parsed_body``) into
  our layout — ``uri``, ``status: {code, message}``, list-valued headers, ``body:
  {string: ...}`` (``!!binary`` for bytes), an SSE body split into events;
  :func:`vcr_text` writes a cassette as vcrpy's own loader reads it.
* Objects: :func:`to_vcr` / :func:`from_vcr` convert one interaction to and from
  vcrpy's ``(Request, response dict)`` pair, for the bridge that records and
  replays non-httpx clients through vcrpy (:mod:`..vcr_bridge`).

vcrpy keeps a body as one string, so a stream goes out as its events encoded
(comments kept) followed by any tail: :func:`response_bytes`, the bytes a replay
sends. PyYAML is imported only to write.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlencode

from ...errors import AgentReplayError
from ...sse import SSEEncoder
from ...transport.playback import reason_phrase
from ..model import Cassette, Interaction, RecordedRequest, RecordedResponse
from ..wire import body_fields, request_from_wire, response_fields, response_from_wire
from .shape import Loc, ShapeError, as_bytes, field, header_map, mapping, parsed_body

__all__ = [
    "UnrecordableRequestError",
    "from_vcr",
    "from_vcr_data",
    "response_bytes",
    "response_parts",
    "to_vcr",
    "vcr_request",
    "vcr_request_object",
    "vcr_response",
    "vcr_text",
    "vcr_versioned",
]

_NO_WRAP = 1 << 30  # PyYAML's line width: never fold a line


class UnrecordableRequestError(AgentReplayError):
    """A request vcrpy handed over whose body is an object we cannot turn into the bytes
    the client sent (an aiohttp ``FormData``, a payload object)."""


def response_bytes(response: RecordedResponse) -> bytes:
    """The body bytes a replay sends: events encoded (comments kept) plus any tail."""
    if response.events is None:
        return response.content()
    encoder = SSEEncoder(comments=True)
    body = b"".join(encoder.encode(event) for event in response.sse_events())
    return body + (response.tail or "").encode("utf-8")


# --- reading files ---------------------------------------------------------------------


def _request(side: Mapping[str, Any], loc: Loc) -> dict[str, Any]:
    headers = header_map(side, loc)
    out = {
        "method": field(side, "method", loc, str),
        "url": field(side, "uri", loc, str),
        "headers": headers,
    }
    if "parsed_body" in side:
        return {**out, **parsed_body(side["parsed_body"], (*loc, "parsed_body"))}
    body = field(side, "body", loc, str, bytes, dict, list, type(None), required=False)
    if isinstance(body, (dict, list)) and not _wrapped(body):
        # A request body vcrpy holds as an object (a serializer that stores the JSON
        # body parsed, as pydantic-ai's did for some): vcrpy hands the object over as
        # the body, so it is the JSON body here. It used to be dropped (issue 26).
        return {**out, **parsed_body(body, (*loc, "body"))}
    if isinstance(body, dict):
        body = field(body, "string", (*loc, "body"), str, bytes, type(None), required=False)
    if body is None:
        return out
    return {**out, **body_fields(as_bytes(body), headers.get("content-type", "").lower())}


def _wrapped(body: Mapping[str, Any] | list[Any]) -> bool:
    """Whether a body mapping is vcrpy's ``{string: ...}`` (a response's shape)."""
    return isinstance(body, Mapping) and set(body) <= {"string"}


def _status(side: Mapping[str, Any], loc: Loc) -> int:
    status = field(side, "status", loc, dict, int)
    if isinstance(status, dict):
        return int(field(status, "code", (*loc, "status"), int))
    return int(status)


def _response(side: Mapping[str, Any], loc: Loc) -> dict[str, Any]:
    status = _status(side, loc)
    headers = header_map(side, loc)
    if "parsed_body" in side:
        headers.pop("content-encoding", None)
        parsed = parsed_body(side["parsed_body"], (*loc, "parsed_body"))
        return {"status": status, "headers": headers, **parsed}
    body = field(side, "body", loc, dict, str, bytes, type(None), required=False)
    if isinstance(body, dict):
        # vcrpy reads response["body"]["string"]: a mapping without it is not a body
        # vcrpy could play, and reading it as empty lost what it held (issue 26).
        required = bool(body)
        body = field(body, "string", (*loc, "body"), str, bytes, type(None), required=required)
    raw = b"" if body is None else as_bytes(body)
    try:
        fields = response_fields(headers, raw)
    except ValueError as exc:
        raise ShapeError(str(exc), (*loc, "body")) from None
    return {"status": status, **fields}


def from_vcr_data(data: Any) -> dict[str, Any]:
    """A vcrpy cassette's data as ours (``version`` checked by the caller)."""
    top = mapping(data, ())
    interactions = []
    for index, raw in enumerate(field(top, "interactions", (), list)):
        loc: Loc = ("interactions", index)
        item = mapping(raw, loc)
        request = mapping(field(item, "request", loc), (*loc, "request"))
        response = mapping(field(item, "response", loc), (*loc, "response"))
        interactions.append(
            {
                "request": _request(request, (*loc, "request")),
                "response": _response(response, (*loc, "response")),
            }
        )
    return {"version": 1, "interactions": interactions}


def vcr_versioned(data: Any, text: str) -> Any:
    """A vcrpy file without ``version`` as vcrpy reads it (it never checks the key),
    when nothing says it was cut short: the text ends with a line break and the last
    interaction has a response status (PyYAML writes it after the body and headers).
    Anything else keeps the truncation error (issue 20)."""
    if not isinstance(data, dict) or "version" in data or not text.endswith("\n"):
        return data
    interactions = data.get("interactions")
    last = interactions[-1] if isinstance(interactions, list) and interactions else None
    response = last.get("response") if isinstance(last, dict) else None
    if not isinstance(response, dict) or "status" not in response:
        return data
    return {**data, "version": 1}


# --- writing files ---------------------------------------------------------------------


@functools.cache
def _dumper() -> Any:
    """PyYAML's safe dumper, with multi-line strings as literal blocks where allowed."""
    import yaml  # noqa: PLC0415 - only writing a vcrpy file needs PyYAML

    def represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    class VcrDumper(yaml.SafeDumper):
        pass

    VcrDumper.add_representer(str, represent_str)
    return VcrDumper


def _text_or_bytes(raw: bytes) -> str | bytes | None:
    if not raw:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw  # written as !!binary


def _vcr_interaction(interaction: Interaction) -> dict[str, Any]:
    request = interaction.request
    response = vcr_response(interaction.response)  # a file holds text where it can
    response["body"]["string"] = _text_or_bytes(response["body"]["string"]) or ""
    return {
        "request": {
            "method": request.method,
            "uri": request.url,
            "headers": {name: [value] for name, value in request.headers.items()},
            "body": _text_or_bytes(request.content()),
        },
        "response": response,
    }


def vcr_text(cassette: Cassette) -> str:
    """``cassette`` as vcrpy / pytest-recording YAML (no line wrapping)."""
    import yaml  # noqa: PLC0415 - see _dumper

    document = {
        "interactions": [_vcr_interaction(i) for i in cassette.interactions],
        "version": 1,
    }
    return yaml.dump(
        document,
        Dumper=_dumper(),
        sort_keys=False,
        allow_unicode=True,
        width=_NO_WRAP,
        default_flow_style=False,
    )


# --- vcrpy's objects (the bridge) ------------------------------------------------------


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
