"""vcrpy / pytest-recording cassette files: told apart, read, and written.

* Telling: :func:`sniff` (from the text: the first request's URL key is ``uri``,
  ours is ``url``) and :func:`sniff_data` (from parsed data).
* Reading: :func:`from_vcr_data` reads a vcrpy cassette's parsed YAML (stock PyYAML
  output as crewAI writes it, pydantic-ai's serializer with ``parsed_body``) into
  our layout — ``uri``, ``status: {code, message}``, list-valued headers, ``body:
  {string: ...}`` (``!!binary`` for bytes), an SSE body split into events; vcrpy's
  default matching is :data:`MATCH_ON`.
* The file as written, for ``lint`` and ``convert``: where one of our fields is in
  it (:func:`source_loc`), the bytes vcrpy replays for a stored response
  (:func:`sent_body`), what reading it reshapes (:func:`reshaped`).
* Writing: :func:`vcr_text` writes a cassette as vcrpy's own loader reads it.
  PyYAML is imported only to write.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ....transport.playback import reason_phrase
from ...cassette import Cassette, Interaction
from ...from_wire import body_fields, response_fields
from ..errors import ShapeError
from ..shape import (
    Loc,
    Reshaped,
    as_bytes,
    field,
    header_map,
    mapping,
    parsed_body,
    renamed,
    repeated_headers,
)
from .objects import vcr_response

__all__ = [
    "FIELD_NAMES",
    "MATCH_ON",
    "from_vcr_data",
    "reshaped",
    "sent_body",
    "sniff",
    "sniff_data",
    "source_loc",
    "stored_responses",
    "vcr_text",
    "vcr_versioned",
]

MATCH_ON: tuple[str, ...] = ("method", "scheme", "host", "path", "query")
"""The default match of a vcrpy / pytest-recording cassette: vcrpy's own default
(method and URI, no body), in recorded order; the port is ignored here as everywhere."""

FIELD_NAMES = {"url": "uri", "events": "body", "json": "parsed_body", "tail": "body"}
"""Our field names, as a vcrpy file names the field that holds the same thing."""

_NO_WRAP = 1 << 30  # PyYAML's line width: never fold a line
# The request's own url / uri key: where PyYAML and our writer put it first, then anywhere.
_URL_KEYS = (
    re.compile(r"^ {4}(uri|url):", re.MULTILINE),
    re.compile(r"^[ \t]*(?:- )?(uri|url):", re.MULTILINE),
)
_JSON_URL_KEY = re.compile(r'(?<!\\)"(uri|url)"\s*:')
"""The request's URL key in a JSON document (vcrpy's ``serializer="json"``); a key
inside a JSON-encoded body string has its quotes escaped and does not match."""


# --- telling a vcrpy file from ours ----------------------------------------------------


def sniff(head: str, text: str) -> bool:
    """Whether ``text`` (``head``: it without a BOM and leading blank lines) is a vcrpy
    file: its first request URL key is vcrpy's ``uri``, not our ``url``."""
    patterns = (_JSON_URL_KEY,) if head.startswith("{") else _URL_KEYS
    for pattern in patterns:
        match = pattern.search(text)
        if match is not None:
            return match.group(1) == "uri"
    return False


def sniff_data(data: Any) -> bool:
    """Whether parsed cassette data is vcrpy's: its first request has a ``uri``."""
    try:
        request = data["interactions"][0]["request"]
    except (KeyError, IndexError, TypeError):
        return False
    return isinstance(request, Mapping) and "uri" in request


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


# --- the file as written ---------------------------------------------------------------


def source_loc(index: int, *rest: str | int) -> Loc:
    """Where ``interactions[index].<rest>`` (our layout) is in a vcrpy file."""
    return ("interactions", index, *renamed(rest, FIELD_NAMES))


def stored_responses(document: Any) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """The responses of a vcrpy file's parsed document, by interaction index."""
    items = document.get("interactions") if isinstance(document, Mapping) else None
    for index, item in enumerate(items if isinstance(items, list) else ()):
        response = item.get("response") if isinstance(item, Mapping) else None
        if isinstance(response, Mapping):
            yield index, response


def sent_body(response: Mapping[str, Any]) -> tuple[bytes | None, bool]:
    """The body bytes vcrpy replays for a stored response, and whether they are the
    stored body itself (``False``: re-serialized from pydantic-ai's ``parsed_body``)."""
    if "parsed_body" in response:  # pydantic-ai's serializer: json.dumps on load
        return json.dumps(response["parsed_body"]).encode("utf-8"), False
    body = response.get("body")
    if isinstance(body, Mapping):
        body = body.get("string")
    return (b"" if body is None else as_bytes(body)), True


def reshaped(document: Any) -> Reshaped:
    """What reading a vcrpy file changes: repeated headers (joined with ``, ``) and
    status reason phrases that are not the standard one (not kept)."""
    items = document.get("interactions") if isinstance(document, Mapping) else None
    items = [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []
    phrases = 0
    for item in items:
        response = item.get("response")
        status = response.get("status") if isinstance(response, Mapping) else None
        if isinstance(status, Mapping) and status.get("message") != reason_phrase(
            status.get("code", 0)
        ):
            phrases += 1
    sides = [item.get(side) for item in items for side in ("request", "response")]
    return Reshaped(repeated_headers=repeated_headers(sides), reason_phrases=phrases)


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
