"""Turn wire bodies into cassette fields: parsed JSON, SSE events, text or base64.

Used when converting other cassette formats at load time, and by the recorder
(through :func:`~.io.request_from_wire` and
:func:`~.io.response_from_wire`) so a body is stored the
same way whichever path wrote it.
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .. import sse
from .records import normalize_headers
from .yaml.emit import MAX_DEPTH, UnstorableError, dump_json

if TYPE_CHECKING:
    from .model import RecordedEvent

__all__ = [
    "MAX_DECODED",
    "body_fields",
    "decode_content",
    "join_headers",
    "looks_like_sse",
    "response_fields",
    "split_sse",
    "split_stream",
    "tail",
]

MAX_DECODED = 64 * 1024 * 1024
"""Largest body a compressed stored body may expand to (a gzip bomb is refused)."""

# Headers that hold one value: of a repeated list, the first wins.
_SINGLE_VALUED = frozenset(
    {
        "authorization",
        "content-length",
        "content-type",
        "date",
        "host",
        "location",
        "retry-after",
        "user-agent",
    }
)
_SSE_FIRST_LINE = re.compile(r"(?:data|event|id|retry)(?::|$)|:")


class _NotJSONError(Exception):
    pass


def join_headers(raw: Mapping[Any, Any] | Iterable[tuple[Any, Any]]) -> dict[str, str]:
    """Lower-cased names; list values joined with ``, `` (first value for single-valued names)."""
    items = raw.items() if isinstance(raw, Mapping) else raw
    out: dict[str, list[str]] = {}
    for name, value in items:
        # Every replayed request passes here: plain text values skip the general case.
        if type(value) is str:
            values = [value]
        elif isinstance(value, (list, tuple)):
            values = ["" if v is None else str(v) for v in value]
        else:
            values = ["" if value is None else str(value)]
        key = (name if type(name) is str else str(name)).lower()
        known = out.get(key)
        if known is None:
            out[key] = values
        else:
            known.extend(values)
    return {
        name: values[0] if name in _SINGLE_VALUED and values else ", ".join(values)
        for name, values in out.items()
    }


def _inflate(raw: bytes, wbits: int) -> bytes:
    inflater = zlib.decompressobj(wbits)
    out = inflater.decompress(raw, MAX_DECODED + 1)
    if len(out) > MAX_DECODED or inflater.unconsumed_tail:
        raise ValueError(f"the compressed body expands beyond {MAX_DECODED} bytes")
    return out


def decode_content(headers: dict[str, str], raw: bytes) -> tuple[bytes, dict[str, str]]:
    """Undo a gzip / deflate ``content-encoding`` and drop the header.

    A body already plain despite the header (crewAI stores some that way) is
    kept and the header dropped; an encoding we cannot undo (``br``, ``zstd``,
    a corrupt stream) keeps both, so a client still sees what the server sent.
    Raises ``ValueError`` for a body that would expand beyond :data:`MAX_DECODED`.
    """
    encoding = headers.get("content-encoding", "").strip().lower()
    if not encoding:
        return raw, headers
    plain = {k: v for k, v in headers.items() if k != "content-encoding"}
    if encoding == "identity" or not raw:
        return raw, plain
    try:
        if encoding in ("gzip", "x-gzip"):
            return (_inflate(raw, 16 + zlib.MAX_WBITS) if raw[:2] == b"\x1f\x8b" else raw), plain
        if encoding == "deflate":
            return _inflate(raw, zlib.MAX_WBITS if raw[:1] == b"\x78" else -zlib.MAX_WBITS), plain
    except zlib.error:
        return raw, headers
    return raw, headers


def looks_like_sse(raw: bytes) -> bool:
    """Does the body start like an event stream (a field or comment line)?

    The content-type alone is not enough: Gemini answers a 400 with
    ``text/event-stream`` and a plain JSON body.
    """
    head = raw[:4096].lstrip(b"\xef\xbb\xbf").lstrip(b"\r\n")
    first = head.splitlines()[0] if head else b""
    return bool(_SSE_FIRST_LINE.match(first.decode("utf-8", "replace")))


# One line end (CRLF counts once), then another: a blank line, which ends an event.
_BLANK_LINE = re.compile(rb"(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)")


def tail(body: bytes) -> bytes:
    """The bytes after the last blank line (what no event boundary closed)."""
    end = 0
    for match in _BLANK_LINE.finditer(body):
        end = match.end()
    return body[end:]


def split_stream(body: bytes) -> dict[str, Any]:
    """A whole SSE body as the cassette fields ``events``, ``tail`` and ``truncated``.

    ``events`` are exactly what a spec decoder dispatches (comments kept); when
    the body ends without the blank line that closes its last event, ``tail``
    keeps the unterminated text as received and ``truncated`` describes it, so
    replay can send the same bytes (both SDKs drop such an event).
    """
    from .model import RecordedEvent  # noqa: PLC0415 - recording only

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
