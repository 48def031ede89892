"""What a cassette field holds, as plain values: the leaf every cassette module shares.

Headers (names lower-cased, repeated ones joined, the wire-only ones a stored
response drops), bodies (the bytes a stored body stands for, compressed wire
bodies decoded, whether a value is JSON), streams (the endings a recording can
have, the text after the last event) and the shape of the files the plugin
writes. Nothing here knows the cassette classes or YAML: the model, the reader,
the writer, the recorder and the other formats all build on these functions, so
each rule is written once.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, get_args

from ..sse import SSEEvent
from ..transport.encode import StoredEvent
from .encodings import MAX_DECODED, codings, decode
from .errors import ContentDecodingError

__all__ = [
    "CASSETTE_VERSION",
    "MAX_DECODED",
    "STREAM_ENDS",
    "StoredBody",
    "StoredCassette",
    "StoredInteraction",
    "StoredRequest",
    "StoredResponse",
    "StreamEnd",
    "TimedEvent",
    "body_bytes",
    "decode_content",
    "event_to_sse",
    "join_headers",
    "json_problem",
    "kind_name",
    "kind_of",
    "looks_canonical",
    "looks_like_sse",
    "normalize_headers",
    "tail",
    "wire_only_headers",
]

CASSETTE_VERSION = 1
"""The format version, written last in every file."""

StreamEnd = Literal["complete", "cut", "timeout", "cancelled", "incomplete"]
"""How a recorded body ended: normally; connection dropped; read timed out; the
client hung up; the recording was interrupted (Ctrl-C) — refused on replay unless
explicitly allowed."""
STREAM_ENDS: frozenset[str] = frozenset(get_args(StreamEnd))
"""The values of :data:`StreamEnd`."""

_WIRE_ONLY = frozenset({"content-length", "transfer-encoding"})
_CANONICAL_START = ("interactions:\n- request:\n    method: ", "interactions: []\n")
_CANONICAL_END = f"\nversion: {CASSETTE_VERSION}\n"
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
# One line end (CRLF counts once), then another: a blank line, which ends an event.
_BLANK_LINE = re.compile(rb"(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)")
_JSON_LEAVES = (str, int, float, bool, type(None))
_PLAIN_LEAVES = frozenset(_JSON_LEAVES)


# --- what a cassette holds, as the modules below the model read it ---------------------


class TimedEvent(StoredEvent, Protocol):
    """An SSE event as stored (:class:`~.cassette.RecordedEvent`): what the transport plays
    (:class:`~..transport.encode.StoredEvent`) and its arrival time, which the writer
    keeps."""

    @property
    def t(self) -> float | None: ...


class StoredBody(Protocol):
    """Headers and a body as stored."""

    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def json_body(self) -> Any: ...
    @property
    def body(self) -> str | None: ...
    @property
    def body_b64(self) -> str | None: ...


class StoredRequest(StoredBody, Protocol):
    """A request as stored (:class:`~.cassette.RecordedRequest`)."""

    @property
    def method(self) -> str: ...
    @property
    def url(self) -> str: ...


class StoredResponse(StoredBody, Protocol):
    """A response as stored (:class:`~.cassette.RecordedResponse`)."""

    @property
    def status(self) -> int: ...
    @property
    def events(self) -> Sequence[TimedEvent] | None: ...
    @property
    def end(self) -> str: ...
    @property
    def truncated(self) -> str | None: ...
    @property
    def tail(self) -> str | None: ...


class StoredInteraction(Protocol):
    """A request and its response (:class:`~.cassette.Interaction`)."""

    @property
    def request(self) -> StoredRequest: ...
    @property
    def response(self) -> StoredResponse: ...
    @property
    def origin(self) -> Mapping[str, Any] | None: ...


class StoredCassette(Protocol):
    """A whole cassette (:class:`~.cassette.Cassette`)."""

    @property
    def version(self) -> int: ...
    @property
    def interactions(self) -> Sequence[StoredInteraction]: ...
    def to_data(self) -> dict[str, Any]: ...


# --- headers ---------------------------------------------------------------------------


def normalize_headers(headers: dict[str, str]) -> dict[str, str]:
    """Lower-case header names; values of names that collide are joined with ``, ``
    (``headers`` itself when every name is lower-case already)."""
    if all(name == name.lower() for name in headers):
        return headers
    out: dict[str, str] = {}
    for name, value in headers.items():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


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


def wire_only_headers(body_b64: str | None) -> frozenset[str]:
    """Response headers that describe the wire rather than the stored body, so are not
    stored: ``content-length`` and ``transfer-encoding`` always, ``content-encoding``
    unless the body is kept as raw bytes (a stored JSON, text or event list is decoded)."""
    return _WIRE_ONLY if body_b64 is not None else _WIRE_ONLY | {"content-encoding"}


# --- bodies ----------------------------------------------------------------------------


_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
"""``json.dumps(..., separators=(",", ":"), ensure_ascii=False)``, built once: every
replayed JSON body is written with it (``dumps`` with options builds a new encoder)."""


def _c_compact() -> Callable[[Any], str]:
    """``_COMPACT.encode``, calling the C encoder it builds per call straight away: a
    replayed JSON request and its response are each written once (issue 29, W1).

    Made without the circular-reference check, so that it keeps no memory between
    calls: a cycle, which only a hand-built body can have, recurses until
    :class:`RecursionError`, and the checked encoder then names it, as before."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without the C accelerator
        return _COMPACT.encode
    encode = make(
        None, _COMPACT.default, json.encoder.encode_basestring, None, ":", ",", False, False, True
    )

    def compact(value: Any) -> str:
        try:
            return "".join(encode(value, 0))
        except RecursionError:
            return _COMPACT.encode(value)

    return compact


_compact = _c_compact()


def body_bytes(json_body: Any, body: str | None, body_b64: str | None) -> bytes:
    """A stored body's bytes (JSON re-serialized compactly; nothing stored: empty)."""
    if json_body is not None:
        return _compact(json_body).encode("utf-8")
    if body is not None:
        return body.encode("utf-8")
    if body_b64 is not None:
        return base64.b64decode(body_b64)
    return b""


def json_problem(value: Any) -> str | None:
    """Where ``value`` stops being JSON (``messages[2].when holds a date``), or ``None``.

    YAML can build dates, bytes, sets and non-text keys that ``json.dumps`` would
    refuse (or change) at replay time; a hand-edited cassette is caught at load.
    """
    return None if _plain_json(value) else _first_non_json(value)


def _plain_json(value: Any) -> bool:
    """Whether ``value`` is made of plain JSON types only (the quick walk: no paths)."""
    stack = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            if not all(type(key) is str for key in node):
                return False
            stack.extend(node.values())
        elif kind is list:
            stack.extend(node)
        elif kind not in _PLAIN_LEAVES:
            return False  # maybe a subclass of a JSON type: the full walk decides
    return True


def _first_non_json(value: Any) -> str | None:
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            for key, item in node.items():
                if not isinstance(key, str):
                    return (
                        f"{where or 'the body'} has a {type(key).__name__} key; JSON keys are text"
                    )
                stack.append((item, f"{where}.{key}" if where else key))
        elif isinstance(node, list):
            stack.extend((item, f"{where}[{i}]") for i, item in enumerate(node))
        elif not isinstance(node, _JSON_LEAVES):
            kind = type(node).__name__
            return f"{where or 'the body'} holds a {kind}, which is not JSON (quote it?)"
    return None


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


def kind_name(kind: type) -> str:
    """A type in the words of an error message (``a mapping``, ``text``, ``an integer``)."""
    return _KINDS.get(kind, f"a {kind.__name__}")


def kind_of(value: Any) -> str:
    """What ``value`` is, in the words of an error message."""
    return kind_name(type(value))


def decode_content(headers: dict[str, str], raw: bytes) -> tuple[bytes, dict[str, str]]:
    """Undo a ``content-encoding`` (gzip, deflate, br, zstd, a chain) and drop the header.

    For reading files other tools wrote, leniently: a body already plain despite a
    gzip header (crewAI stores some that way) is kept and the header dropped; one the
    plugin cannot decode (an unknown coding, a missing package, corrupt data) keeps
    both, so a client still sees what the server sent — and the backstop refuses to
    write it unread (:mod:`.encodings`). Raises ``ValueError`` for a body that would
    expand beyond :data:`MAX_DECODED`.
    """
    encoding = headers.get("content-encoding", "").strip().lower()
    if not encoding:
        return raw, headers
    plain = {k: v for k, v in headers.items() if k != "content-encoding"}
    if not raw or not codings(encoding):
        return raw, plain
    if encoding in ("gzip", "x-gzip") and raw[:2] != b"\x1f\x8b":
        return raw, plain
    try:
        return decode(raw, encoding), plain
    except ContentDecodingError as exc:
        if exc.too_large:
            raise
        return raw, headers


# --- streams ---------------------------------------------------------------------------


def event_to_sse(
    data: str,
    event: str | None,
    id: str | None,
    retry: int | None,
    comments: Sequence[str | None] | None,
) -> SSEEvent:
    """A stored event as the SSE codec sees it (no id stored: the empty id)."""
    return SSEEvent(
        data=data, event=event, id=id or "", retry=retry, comments=tuple(comments or ())
    )


def looks_like_sse(raw: bytes) -> bool:
    """Does the body start like an event stream (a field or comment line)?

    The content-type alone is not enough: Gemini answers a 400 with
    ``text/event-stream`` and a plain JSON body.
    """
    head = raw[:4096].lstrip(b"\xef\xbb\xbf").lstrip(b"\r\n")
    first = head.splitlines()[0] if head else b""
    return bool(_SSE_FIRST_LINE.match(first.decode("utf-8", "replace")))


def tail(body: bytes, *, more: bool = False) -> bytes:
    """The bytes after the last blank line (what no event boundary closed).

    ``more``: bytes may follow (a stream trimmed chunk by chunk). A blank line that
    ends the buffer on a CR is then kept: an LF at the start of the next chunk is the
    second half of that CRLF, not a line of its own (``data: x\n\r`` + ``\nevent:``
    left a tail starting with a stray LF).
    """
    last = None
    for match in _BLANK_LINE.finditer(body):
        last = match
    if last is None:
        return body
    if more and last.end() == len(body) and body.endswith(b"\r"):
        return body[last.start() :]
    return body[last.end() :]


# --- files -----------------------------------------------------------------------------


def looks_canonical(text: str) -> bool:
    """Whether ``text`` starts and ends as the canonical writer's files do: the cheap
    test before the fast reader is tried."""
    return text.startswith(_CANONICAL_START) and text.endswith(_CANONICAL_END)
