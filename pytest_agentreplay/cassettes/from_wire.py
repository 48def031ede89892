"""Bodies off the wire in cassette form: JSON parsed, streams split into events.

The recorder (live traffic), the vcrpy bridge and the readers of other tools'
files all go through these, so a body is stored the same way whichever path
wrote it: ``json`` when it is a JSON object or array the writer can store
faithfully, events when it is an event stream, else text (``body``) or base64
(``body_b64``).
"""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from .. import sse
from .cassette import RecordedEvent, RecordedRequest, RecordedResponse
from .checks import json_trusted
from .fields import decode_content, join_headers, looks_like_sse, normalize_headers, tail
from .yaml.emit import dump_json
from .yaml.errors import UnstorableError
from .yaml.scalars import MAX_DEPTH

__all__ = [
    "body_fields",
    "parse_json",
    "request_from_wire",
    "response_fields",
    "response_from_wire",
    "split_sse",
    "split_stream",
]


class _NotJSONError(Exception):
    pass


def split_stream(body: bytes) -> dict[str, Any]:
    """A whole SSE body as the cassette fields ``events``, ``tail`` and ``truncated``.

    ``events`` are exactly what a spec decoder dispatches (comments kept); when
    the body ends without the blank line that closes its last event, ``tail``
    keeps the unterminated text as received and ``truncated`` describes it, so
    replay can send the same bytes (both SDKs drop such an event).
    """
    decoded = sse.decode(body, keep_comments=True)
    events = [RecordedEvent.from_sse(event) for event in decoded.events]
    if decoded.truncated is None:
        return {"events": events}
    tail_text = tail(body).decode("utf-8", "replace")
    return {"events": events, "tail": tail_text or None, "truncated": decoded.truncated.describe()}


def split_sse(body: bytes) -> tuple[list[RecordedEvent], str | None]:
    """The dispatched events of a whole SSE body, and a note when it ends mid-event."""
    fields = split_stream(body)
    return fields["events"], fields.get("truncated")


def _reject_constant(name: str) -> Any:
    raise _NotJSONError(name)


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _NotJSONError(text)
    return value


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _NotJSONError("duplicate key")
    return out


def parse_json(raw: bytes | str) -> Any:
    """``raw`` as a JSON object or array that a cassette can store parsed, else ``None``.

    Scalars, duplicate keys, NaN / Infinity, lone surrogates and nesting beyond
    the writer's limit are refused: storing those parsed would change the body.
    """
    long_key = False

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal long_key
        out = _unique(pairs)
        if out and not long_key and max(map(len, out)) > _SHORT_KEY:
            long_key = True
        return out

    try:
        value = json.loads(
            raw,
            object_pairs_hook=unique,
            parse_constant=_reject_constant,
            parse_float=_finite,
        )
        if not isinstance(value, (dict, list)):
            return None
        if long_key or not _surely_storable(raw, value):
            dump_json(value)  # the writer itself decides
    except (_NotJSONError, ValueError, RecursionError, UnstorableError):
        return None
    return value


# A key this short stays under the writer's key limit even with every character escaped.
_SHORT_KEY = 90


def _surely_storable(raw: bytes | str, value: Any) -> bool:
    """Whether the writer surely stores ``value``, parsed from ``raw`` and holding no long
    key: no lone surrogate, nesting well inside its limit. ``False``: "ask the writer".

    :func:`dump_json` would say the same, but it writes the whole YAML to find out, and
    every request a cassette replays is parsed here (issue 9).
    """
    if isinstance(raw, str):
        if "\\u" in raw:
            return False
        try:
            raw.encode("utf-8")
        except UnicodeEncodeError:
            return False
        brackets = raw.count("{") + raw.count("[")
    else:
        # Strict UTF-8 without \u escapes (and so not UTF-16 / 32) decodes to no surrogate.
        if b"\\u" in raw or b"\x00" in raw:
            return False
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return False
        brackets = raw.count(b"{") + raw.count(b"[")
    return brackets < MAX_DEPTH - 2 or _shallow(value)


def _shallow(value: Any) -> bool:
    """Whether ``value`` nests well inside the writer's limit (level by level)."""
    level = [value]
    for _ in range(MAX_DEPTH - 2):
        deeper: list[Any] = []
        for node in level:
            children = node.values() if type(node) is dict else node
            deeper += [c for c in children if type(c) is dict or type(c) is list]
        if not deeper:
            return True
        level = deeper
    return False


def body_fields(raw: bytes, content_type: str = "") -> dict[str, Any]:
    """The cassette fields for a non-stream body: ``json``, ``body`` or ``body_b64`` (or none)."""
    if not raw:
        return {}
    if "json" in content_type or raw.lstrip()[:1] in (b"{", b"["):
        parsed = parse_json(raw)
        if parsed is not None:
            return {"json": parsed}
    try:
        return {"body": raw.decode("utf-8")}
    except UnicodeDecodeError:
        return {"body_b64": base64.b64encode(raw).decode("ascii")}


def response_fields(headers: Mapping[str, str], raw: bytes) -> dict[str, Any]:
    """Headers and body fields for a stored response: decoded, SSE split into events."""
    lowered = normalize_headers(dict(headers))
    raw, lowered = decode_content(lowered, raw)
    content_type = lowered.get("content-type", "").lower()
    if "text/event-stream" in content_type and (not raw.strip() or looks_like_sse(raw)):
        return {"headers": lowered, **split_stream(raw)}
    return {"headers": lowered, **body_fields(raw, content_type)}


def request_from_wire(
    method: str,
    url: str,
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    content: bytes,
) -> RecordedRequest:
    """A request as the cassette stores it: names lower-cased, a compressed body decoded
    (then its ``content-encoding`` no longer applies), a JSON body parsed."""
    joined = join_headers(headers)
    if "content-encoding" in joined:
        # Issue 18: a gzip-compressed JSON body was stored as opaque base64, unscrubbed.
        # One the plugin cannot decode stays opaque, and the backstop refuses to write it.
        with contextlib.suppress(ValueError):
            content, joined = decode_content(joined, content)
    fields = body_fields(content, joined.get("content-type", "").lower())
    # A parsed body came from json.loads: JSON through and through, no walk needed.
    with json_trusted():
        return RecordedRequest(method=method, url=url, headers=joined, **fields)


def response_from_wire(
    status: int,
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    content: bytes,
) -> RecordedResponse:
    """A complete response body as stored: decoded, JSON parsed, SSE split into events.

    Raises ``ValueError`` for a compressed body that would expand beyond 64 MiB.
    """
    fields = response_fields(join_headers(headers), content)
    with json_trusted():
        return RecordedResponse(status=status, **fields)
