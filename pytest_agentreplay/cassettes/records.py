"""Recorded interactions as replay reads them: plain objects, loaded without pydantic.

The cassette model (:mod:`.model`) validates with pydantic, and importing
it with pydantic costs more than everything else a replayed test does (about
0.1 s a run, and a heap the collector walks on every full collection: bench/ W4).
Replaying a cassette the plugin wrote needs none of it. :func:`load` reads such a
file into the plain classes here, with the same attribute names and the methods
replay uses (``content()``, ``is_stream``, ``to_sse()``), and accepts it only if

- every field passes the checks the model makes, done by hand and *conservatively*:
  anything the model would change (a header name to lower-case, a time to the
  microsecond) or that is at all unusual is refused here, not reproduced; and
- the canonical writer, given these objects, gives back the file's exact text.

Anything refused goes through :func:`.io.load` as before, which produces the
model and the precise errors. A property test checks that whatever is accepted
here equals what the model loads (:func:`as_data` on both sides).

Only replay in the plugin uses this, and only where no user code sees the records
(no custom matcher or scrubber): those get the model, as documented.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..sse import SSEEvent
from .yaml.emit import UnstorableError, dump_interactions
from .yaml.fast import NotCanonicalError, read_canonical

if TYPE_CHECKING:
    from typing import TypeAlias

    from .model import Cassette, RecordedEvent, RecordedRequest, RecordedResponse
    from .model import Interaction as ModelInteraction

    AnyEvent: TypeAlias = "Event | RecordedEvent"
    AnyRequest: TypeAlias = "Request | RecordedRequest"
    AnyResponse: TypeAlias = "Response | RecordedResponse"
    AnyInteraction: TypeAlias = "Interaction | ModelInteraction"

__all__ = [
    "CASSETTE_VERSION",
    "STREAM_ENDS",
    "Event",
    "Interaction",
    "Request",
    "Response",
    "as_data",
    "body_bytes",
    "event_to_sse",
    "live_request",
    "load",
    "looks_canonical",
    "normalize_headers",
    "to_cassette",
    "wire_only_headers",
]

CASSETTE_VERSION = 1
STREAM_ENDS = frozenset({"complete", "cut", "timeout", "cancelled", "incomplete"})
"""How a stored body may end (the model's ``StreamEnd``)."""

_WIRE_ONLY = frozenset({"content-length", "transfer-encoding"})
_CANONICAL_START = ("interactions:\n- request:\n    method: ", "interactions: []\n")
_CANONICAL_END = f"\nversion: {CASSETTE_VERSION}\n"


# --- shared with the model ------------------------------------------------------------


def normalize_headers(headers: dict[str, str]) -> dict[str, str]:
    """Lower-case header names; values of names that collide are joined with ``, ``."""
    if all(name == name.lower() for name in headers):
        return headers
    out: dict[str, str] = {}
    for name, value in headers.items():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def wire_only_headers(body_b64: str | None) -> frozenset[str]:
    """Response headers that describe the wire rather than the stored body, so are not
    stored: ``content-length`` and ``transfer-encoding`` always, ``content-encoding``
    unless the body is kept as raw bytes (a stored JSON, text or event list is decoded)."""
    return _WIRE_ONLY if body_b64 is not None else _WIRE_ONLY | {"content-encoding"}


def looks_canonical(text: str) -> bool:
    """Whether ``text`` starts and ends as the canonical writer's files do: the cheap
    test before the fast reader is tried."""
    return text.startswith(_CANONICAL_START) and text.endswith(_CANONICAL_END)


def body_bytes(json_body: Any, body: str | None, body_b64: str | None) -> bytes:
    """A stored body's bytes (JSON re-serialized compactly; nothing stored: empty)."""
    if json_body is not None:
        return json.dumps(json_body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    if body is not None:
        return body.encode("utf-8")
    if body_b64 is not None:
        return base64.b64decode(body_b64)
    return b""


def event_to_sse(
    data: str, event: str | None, id: str | None, retry: int | None, comments: Sequence[str] | None
) -> SSEEvent:
    """A stored event as the SSE codec sees it (no id stored: the empty id)."""
    return SSEEvent(
        data=data, event=event, id=id or "", retry=retry, comments=tuple(comments or ())
    )


# --- the records ----------------------------------------------------------------------


class Event:
    """One stored SSE event (see :class:`~.model.RecordedEvent`)."""

    __slots__ = ("comments", "data", "event", "id", "retry", "t")

    def __init__(
        self,
        data: str,
        *,
        event: str | None = None,
        id: str | None = None,
        retry: int | None = None,
        comments: list[str] | None = None,
        t: float | None = None,
    ) -> None:
        self.data = data
        self.event = event
        self.id = id
        self.retry = retry
        self.comments = comments
        self.t = t

    def to_sse(self) -> SSEEvent:
        """The event as the SSE codec sees it."""
        return event_to_sse(self.data, self.event, self.id, self.retry, self.comments)


class _Body:
    """Headers and a body stored one way at most (as the model's ``_Body``)."""

    __slots__ = ("body", "body_b64", "headers", "json_body")

    def __init__(
        self, headers: dict[str, str], json_body: Any, body: str | None, body_b64: str | None
    ) -> None:
        self.headers = headers
        self.json_body = json_body
        self.body = body
        self.body_b64 = body_b64

    def content(self) -> bytes:
        """The body bytes (JSON re-serialized compactly)."""
        return body_bytes(self.json_body, self.body, self.body_b64)


class Request(_Body):
    """A stored request (see :class:`~.model.RecordedRequest`)."""

    __slots__ = ("method", "url")

    def __init__(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        *,
        json_body: Any = None,
        body: str | None = None,
        body_b64: str | None = None,
    ) -> None:
        super().__init__(headers, json_body, body, body_b64)
        self.method = method
        self.url = url

    def model_copy(self, *, update: Mapping[str, Any]) -> Request:
        """A copy with the fields in ``update`` replaced (as the model's, for the scrubber)."""
        fields = {name: getattr(self, name) for name in _REQUEST_FIELDS}
        return Request(**{**fields, **update})


_REQUEST_FIELDS = ("method", "url", "headers", "json_body", "body", "body_b64")


class Response(_Body):
    """A stored response (see :class:`~.model.RecordedResponse`)."""

    __slots__ = ("end", "events", "status", "tail", "truncated")

    def __init__(
        self,
        status: int,
        headers: dict[str, str],
        *,
        json_body: Any = None,
        body: str | None = None,
        body_b64: str | None = None,
        events: list[Event] | None = None,
        end: str = "complete",
        truncated: str | None = None,
        tail: str | None = None,
    ) -> None:
        super().__init__(headers, json_body, body, body_b64)
        self.status = status
        self.events = events
        self.end = end
        self.truncated = truncated
        self.tail = tail

    @property
    def is_stream(self) -> bool:
        return self.events is not None

    def sse_events(self) -> list[SSEEvent]:
        """The stored events as the SSE codec sees them (empty for a non-stream)."""
        return [event.to_sse() for event in self.events or ()]


class Interaction:
    """A stored request and its response."""

    __slots__ = ("request", "response")

    def __init__(self, request: Request, response: Response) -> None:
        self.request = request
        self.response = response


# --- reading ----------------------------------------------------------------------------


class _RefusedError(Exception):
    """Not for this reader: the model decides (and explains)."""


def _str(value: Any, *, optional: bool = False, one_line: bool = False) -> Any:
    if value is None and optional:
        return None
    if type(value) is not str or "\r" in value or (one_line and "\n" in value):
        raise _RefusedError
    return value


def _int(value: Any, low: int, high: int | None = None) -> int:
    if type(value) is not int or value < low or (high is not None and value > high):
        raise _RefusedError  # bool, float and None included: the model decides those
    return value


def _keys(data: Any, allowed: frozenset[str], required: Iterable[str] = ()) -> dict[str, Any]:
    if (
        type(data) is not dict
        or not allowed.issuperset(data)
        or any(k not in data for k in required)
    ):
        raise _RefusedError
    return data


def _headers(data: Any, *, drop: frozenset[str] = frozenset()) -> dict[str, str]:
    if data is None:
        return {}
    if type(data) is not dict:
        raise _RefusedError
    for name, value in data.items():
        # The model lower-cases names and drops wire-only headers: such a file is not
        # canonical, so the model reads it.
        if type(name) is not str or type(value) is not str or name != name.lower():
            raise _RefusedError
        if name in drop:
            raise _RefusedError
    return data


def _body(data: dict[str, Any]) -> tuple[Any, str | None, str | None]:
    json_body, body, b64 = data.get("json"), data.get("body"), data.get("body_b64")
    if sum(v is not None for v in (json_body, body, b64)) > 1:
        raise _RefusedError
    _str(body, optional=True)
    if b64 is not None:
        _str(b64)
        try:
            base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            raise _RefusedError from None
    return json_body, body, b64


_EVENT_KEYS = frozenset({"t", "event", "data", "id", "retry", "comments"})


def _event(data: Any) -> Event:
    fields = _keys(data, _EVENT_KEYS, ("data",))
    comments = fields.get("comments")
    if comments is not None and (
        type(comments) is not list
        or not comments
        or any(type(c) is not str or "\r" in c or "\n" in c for c in comments)
    ):
        raise _RefusedError
    event_id = fields.get("id")
    if event_id is not None and (type(event_id) is not str or "\x00" in event_id):
        raise _RefusedError
    t = fields.get("t")
    if t is not None and (
        type(t) is not float or not math.isfinite(t) or t < 0 or round(t, 6) != t
    ):
        raise _RefusedError
    return Event(
        data=_str(fields["data"]),
        event=_str(fields.get("event"), optional=True, one_line=True),
        id=_str(event_id, optional=True, one_line=True),
        retry=None if fields.get("retry") is None else _int(fields["retry"], 0),
        comments=comments,
        t=t,
    )


_REQUEST_KEYS = frozenset({"method", "url", "headers", "json", "body", "body_b64"})
_RESPONSE_KEYS = frozenset(
    {"status", "headers", "json", "body", "body_b64", "events", "end", "truncated", "tail"}
)


def _request(data: Any) -> Request:
    fields = _keys(data, _REQUEST_KEYS, ("method", "url"))
    method, url = _str(fields["method"]), _str(fields["url"])
    if not method or not url:
        raise _RefusedError
    json_body, body, b64 = _body(fields)
    headers = _headers(fields.get("headers"))
    return Request(method, url, headers, json_body=json_body, body=body, body_b64=b64)


def _response(data: Any) -> Response:
    fields = _keys(data, _RESPONSE_KEYS, ("status",))
    json_body, body, b64 = _body(fields)
    stored = fields.get("events")
    if stored is not None and (
        type(stored) is not list or any(v is not None for v in (json_body, body, b64))
    ):
        raise _RefusedError
    events = None if stored is None else [_event(e) for e in stored]
    end = fields.get("end", "complete")
    tail = _str(fields.get("tail"), optional=True)
    if end not in STREAM_ENDS or (tail is not None and events is None):
        raise _RefusedError
    return Response(
        status=_int(fields["status"], 100, 599),
        headers=_headers(fields.get("headers"), drop=wire_only_headers(b64)),
        json_body=json_body,
        body=body,
        body_b64=b64,
        events=events,
        end=end,
        truncated=_str(fields.get("truncated"), optional=True),
        tail=tail,
    )


def _interactions(data: Any) -> list[Interaction]:
    top = _keys(data, frozenset({"interactions", "version"}), ("interactions", "version"))
    if (
        type(top["version"]) is not int
        or top["version"] != CASSETTE_VERSION
        or type(top["interactions"]) is not list
    ):
        raise _RefusedError
    out = []
    for item in top["interactions"]:
        fields = _keys(item, frozenset({"request", "response"}), ("request", "response"))
        out.append(Interaction(_request(fields["request"]), _response(fields["response"])))
    return out


def loads(text: str) -> list[Interaction] | None:
    """The interactions of canonical cassette ``text``, or ``None`` for the model to read."""
    if not looks_canonical(text):
        return None
    try:
        interactions = _interactions(read_canonical(text))
        return interactions if dump_interactions(interactions, CASSETTE_VERSION) == text else None
    except (NotCanonicalError, _RefusedError, UnstorableError, RecursionError):
        return None


def load(path: str | os.PathLike[str]) -> list[Interaction] | None:
    """The interactions of the canonical cassette file at ``path``, or ``None`` (see
    the module docstring). An unreadable file is ``None`` too: the model's loader
    reports it."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return loads(text[1:] if text.startswith("\ufeff") else text)


# --- live requests and the public model -------------------------------------------------


def live_request(
    method: str, url: str, headers: Mapping[str, str] | Iterable[tuple[str, str]], content: bytes
) -> Request:
    """A live request as the cassette stores it (as :func:`.io.request_from_wire`
    builds the model): names lower-cased, a JSON body parsed."""
    from .fields import body_fields, join_headers  # noqa: PLC0415 - _bodies imports us

    joined = join_headers(headers)
    fields = body_fields(content, joined.get("content-type", "").lower())
    return Request(
        method,
        url,
        joined,
        json_body=fields.get("json"),
        body=fields.get("body"),
        body_b64=fields.get("body_b64"),
    )


def _event_data(event: AnyEvent) -> dict[str, Any]:
    out: dict[str, Any] = {"data": event.data, "event": event.event, "id": event.id}
    out.update(retry=event.retry, comments=event.comments, t=event.t)
    return {k: v for k, v in out.items() if v is not None}


def _body_data(side: AnyRequest | AnyResponse) -> dict[str, Any]:
    out = {"json": side.json_body, "body": side.body, "body_b64": side.body_b64}
    return {k: v for k, v in out.items() if v is not None}


def as_data(interaction: AnyInteraction) -> dict[str, Any]:
    """An interaction (plain or model) as the data a cassette file holds, ``None``s left out."""
    request, response = interaction.request, interaction.response
    stored: dict[str, Any] = {"status": response.status, "headers": response.headers}
    stored.update(_body_data(response))
    if response.events is not None:
        stored["events"] = [_event_data(event) for event in response.events]
    extra = {"end": response.end, "truncated": response.truncated, "tail": response.tail}
    stored.update({k: v for k, v in extra.items() if v is not None})
    return {
        "request": {
            "method": request.method,
            "url": request.url,
            "headers": request.headers,
            **_body_data(request),
        },
        "response": stored,
    }


def to_cassette(interactions: Sequence[AnyInteraction]) -> Cassette:
    """The interactions as the public model (a copy: the records stay as they are)."""
    from .model import Cassette  # noqa: PLC0415 - pydantic, only when asked for

    data = {"version": CASSETTE_VERSION, "interactions": [as_data(i) for i in interactions]}
    return Cassette.model_validate(copy.deepcopy(data), context={"json_checked": True})
