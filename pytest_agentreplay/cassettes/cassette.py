"""The cassette model: what one recorded interaction holds, checked when it is built.

A cassette is human-readable YAML::

    interactions:
    - request:
        method: POST
        url: https://api.anthropic.com/v1/messages
        headers:
          content-type: application/json
        json:
          model: claude-sonnet-4-6
          stream: true
          messages:
          - role: user
            content: Hello
      response:
        status: 200
        headers:
          content-type: text/event-stream; charset=utf-8
        events:
        - {t: 0.212, event: message_start, data: '{"type":"message_start",...}'}
        - {t: 0.254, event: content_block_delta, data: '{"type":"content_block_delta",...}'}
        end: complete
    version: 1

JSON bodies are stored parsed (``json``); SSE bodies as a list of events, one
line each, with the event name, the exact ``data`` text (so replay sends the
same bytes), the ``id`` / ``retry`` fields and comments when present, and the
arrival time ``t`` in seconds since the request was sent; ``end`` says how the
stream ended, and ``tail`` keeps any text after the last event that no blank
line terminated. Other bodies are kept as text (``body``) or base64 (``body_b64``).

``version`` comes last, as in vcrpy files: a file cut short anywhere (a full
disk, a killed editor, a bad merge) loses it and is refused as truncated instead
of loading with interactions or events silently missing.

Header names are stored lower-case. Response headers that describe the wire
rather than the stored body are dropped: ``content-length`` and
``transfer-encoding`` always (replay sets its own), ``content-encoding``
unless the body is kept as raw bytes (``body_b64``), since a stored ``json``,
``body`` or ``events`` is already decoded.

The classes are plain slotted objects: replay builds one per recorded event, and
a replayed test should not pay for a validation library (bench/ W1, W4). Each
constructor checks and normalizes its values as the file format requires and
raises :class:`~.checks.CassetteValueError`, naming the field, for a bad one. Objects stay
mutable (a custom scrubber may edit what it is given) and compare by value;
``replace(**changes)`` is a checked copy, ``to_data()`` the data a file holds
(:func:`~.io.from_data` reads it back).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, MutableSequence, Sequence
from typing import Any, ClassVar, TypeVar

from ..sse import SSEEvent
from ..urls import bare_url
from . import checks
from .errors import CassetteValueError
from .fields import CASSETTE_VERSION, StreamEnd, body_bytes, event_to_sse, wire_only_headers

__all__ = [
    "Cassette",
    "DeferredEvents",
    "Interaction",
    "RecordedEvent",
    "RecordedRequest",
    "RecordedResponse",
    "cassette_from_data",
]

_R = TypeVar("_R", bound="_Record")

_SIZED = frozenset({"json_body", "body", "body_b64", "data", "tail", "comments"})


def _shown(name: str, value: Any) -> str:
    """A field as a repr shows it (see :meth:`_Record.__repr__`)."""
    if name == "url":
        return repr(bare_url(value))
    if name == "headers":
        return "{" + ", ".join(f"{key!r}: …" for key in value) + "}"
    if name in _SIZED and value is not None:
        size = len(value) if isinstance(value, (str, list)) else len(json.dumps(value))
        return _count(size, "item" if isinstance(value, list) else "char")
    if name == "events":
        return _count(len(value), "event")
    return repr(value)


def _count(number: int, noun: str) -> str:
    return f"<{number} {noun}{'' if number == 1 else 's'}>"


class _Record:
    """Slotted fields with value equality, a repr and ``replace``."""

    __slots__ = ("__weakref__",)
    _FIELDS: ClassVar[tuple[str, ...]] = ()
    _DEFAULTS: ClassVar[dict[str, Any]] = {"headers": {}, "end": "complete"}

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value: not hashable

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._FIELDS)

    def __repr__(self) -> str:
        """The fields that differ from their defaults, never a credential: before it is
        scrubbed a recorded request holds the live headers, URL and body, and a repr
        reaches logs and tracebacks that pytest's masked reports never see. So header
        values, a URL's query and userinfo, bodies and event data are shown by size;
        the attributes hold the values."""
        shown = [
            f"{name}={_shown(name, getattr(self, name))}"
            for name in self._FIELDS
            if getattr(self, name) != self._DEFAULTS.get(name)
        ]
        return f"{type(self).__name__}({', '.join(shown)})"

    def replace(self: _R, **changes: Any) -> _R:
        """A copy with ``changes`` (attribute names) applied, checked as a new object is
        (a JSON body left as it was is not walked again)."""
        unknown = [name for name in changes if name not in self._FIELDS]
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(map(repr, unknown))}")
        values = {name: getattr(self, name) for name in self._FIELDS}
        json_before = values.get("json_body")
        values.update(changes)
        if json_before is not None and values["json_body"] is json_before:
            with checks.json_trusted():
                return type(self)(**values)
        return type(self)(**values)


class RecordedEvent(_Record):
    """One SSE event as it arrived.

    ``id`` is the last event ID in force when the event was dispatched (absent
    until the stream sets one), as :class:`~..sse.SSEEvent` has it.
    """

    __slots__ = ("comments", "data", "event", "id", "retry", "t")
    _FIELDS = ("data", "event", "id", "retry", "comments", "t")
    _KEYS = frozenset(_FIELDS)

    def __init__(
        self,
        *,
        data: str,
        event: str | None = None,
        id: str | None = None,
        retry: int | None = None,
        comments: Sequence[str | None] | None = None,
        t: float | None = None,
    ) -> None:
        # The common case inline: a stream of 100,000 events builds 100,000 of these.
        if type(data) is not str or "\r" in data:
            data = checks.text(data, "data", "\r")
        if event is not None and (type(event) is not str or "\n" in event or "\r" in event):
            event = checks.text(event, "event", "\r\n")
        if id is not None and (type(id) is not str or "\n" in id or "\r" in id or "\0" in id):
            id = checks.text(id, "id", "\r\n\0")
        self.data = data
        self.event = event
        self.id = id
        self.retry = None if retry is None else checks.integer(retry, "retry", 0)
        self.comments = None if comments is None else checks.comments(comments)
        self.t = None if t is None else checks.time(t)

    def to_sse(self) -> SSEEvent:
        """The event as the SSE codec sees it."""
        return event_to_sse(self.data, self.event, self.id, self.retry, self.comments)

    @classmethod
    def from_sse(cls, event: SSEEvent, *, t: float | None = None) -> RecordedEvent:
        """Record a decoded event, arrived ``t`` seconds after the request was sent.

        The event name is interned: a stream repeats a few names, and a copy of
        ``content_block_delta`` per event was a third of a recording's memory (issue 18).
        """
        name = event.event
        return cls(
            data=event.data,
            event=None if name is None else sys.intern(name),
            id=event.id or None,
            retry=event.retry,
            comments=list(event.comments) or None,
            t=t,
        )

    def to_data(self) -> dict[str, Any]:
        """The event as a cassette file holds it (``None`` fields left out)."""
        out: dict[str, Any] = {"data": self.data}
        for field in ("event", "id", "retry", "comments", "t"):
            value = getattr(self, field)
            if value is not None:
                out[field] = list(value) if field == "comments" else value
        return out

    @classmethod
    def _from_data(cls, data: Any) -> RecordedEvent:
        if type(data) is cls:
            return data  # built already (a converter split a stream into events)
        return cls(**checks.keys(data, cls._KEYS, ("data",)))


class DeferredEvents:
    """A stream's events kept as the file's lines and built when reached
    (:class:`~.lazy_events.LazyEvents`): a response takes it as its ``events`` as it
    is, where any other sequence is copied into a list and every item checked, which
    is what deferring avoids (it is copied, as a list would be, by :meth:`copy`)."""

    __slots__ = ()

    def copy(self) -> DeferredEvents:
        """Another list of the same events (the events themselves shared, as in a list's
        copy)."""
        raise NotImplementedError


class _Body(_Record):
    """Headers, and a body stored one way at most: parsed JSON, text or base64 bytes."""

    __slots__ = ("body", "body_b64", "headers", "json_body")

    def _set_body(self, headers: Any, json_body: Any, body: Any, body_b64: Any) -> None:
        self.headers = checks.headers(headers)
        self.json_body = checks.json_body(json_body)
        self.body = checks.optional_text(body, "body")
        self.body_b64 = None if body_b64 is None else checks.base64_text(body_b64)
        if (json_body is not None) + (body is not None) + (body_b64 is not None) > 1:
            given = {"json": json_body, "body": body, "body_b64": body_b64}
            names = ", ".join(key for key, value in given.items() if value is not None)
            raise CassetteValueError(f"holds {names}: a body is stored one way only")

    def content(self) -> bytes:
        """The body bytes (JSON re-serialized compactly)."""
        return body_bytes(self.json_body, self.body, self.body_b64)

    def _body_data(self, out: dict[str, Any]) -> dict[str, Any]:
        for key, value in (
            ("json", self.json_body),
            ("body", self.body),
            ("body_b64", self.body_b64),
        ):
            if value is not None:
                out[key] = value
        return out


def _one_json(json: Any, json_body: Any) -> Any:
    """The body given as ``json=`` (the file's key) or ``json_body=`` (the attribute)."""
    if json is not None and json_body is not None:
        raise TypeError("give the JSON body as json= or json_body=, not both")
    return json if json is not None else json_body


class RecordedRequest(_Body):
    """The request as sent (after scrubbing)."""

    __slots__ = ("method", "url")
    _FIELDS = ("method", "url", "headers", "json_body", "body", "body_b64")
    _KEYS = frozenset({"method", "url", "headers", "json", "body", "body_b64"})

    def __init__(
        self,
        *,
        method: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        json: Any = None,
        json_body: Any = None,
        body: str | None = None,
        body_b64: str | None = None,
    ) -> None:
        self.method = checks.name(method, "method")
        self.url = checks.name(url, "url")
        self._set_body(headers, _one_json(json, json_body), body, body_b64)

    def to_data(self) -> dict[str, Any]:
        """The request as a cassette file holds it (``None`` fields left out; a JSON
        body is the very object, not a copy)."""
        return self._body_data(
            {"method": self.method, "url": self.url, "headers": dict(self.headers)}
        )

    @classmethod
    def _from_data(cls, data: Any) -> RecordedRequest:
        return cls(**checks.keys(data, cls._KEYS, ("method", "url")))


class RecordedResponse(_Body):
    """The response as received: status, headers, and a body or an event list.

    ``tail`` is the text after the last event that no blank line terminated, exactly
    as received (hand-trimmed SDK fixtures end right after ``data:
    {"type":"message_stop"}``). A spec decoder never dispatches it, and neither SDK
    does; replay sends it after the events, as it came. ``truncated`` then describes it.
    """

    __slots__ = ("end", "events", "status", "tail", "truncated")
    _FIELDS = (
        "status",
        "headers",
        "json_body",
        "body",
        "body_b64",
        "events",
        "end",
        "truncated",
        "tail",
    )
    _KEYS = frozenset(
        {"status", "headers", "json", "body", "body_b64", "events", "end", "truncated", "tail"}
    )

    end: StreamEnd

    def __init__(
        self,
        *,
        status: int,
        headers: Mapping[str, str] | None = None,
        json: Any = None,
        json_body: Any = None,
        body: str | None = None,
        body_b64: str | None = None,
        events: Sequence[RecordedEvent] | None = None,
        end: StreamEnd = "complete",
        truncated: str | None = None,
        tail: str | None = None,
    ) -> None:
        self.status = checks.integer(status, "status", 100, 599)
        self._set_body(headers, _one_json(json, json_body), body, body_b64)
        self.events: MutableSequence[RecordedEvent] | None = (
            None
            if events is None
            else events.copy()  # type: ignore[assignment]  # a DeferredEvents is a LazyEvents
            if isinstance(events, DeferredEvents)
            else checks.items(events, RecordedEvent, "events")
        )
        self.end = checks.stream_end(end)  # type: ignore[assignment]  # one of StreamEnd
        self.truncated = checks.optional_text(truncated, "truncated")
        self.tail = checks.optional_text(tail, "tail")
        if events is not None and self._body_data({}):
            raise CassetteValueError("holds both events and a body: a stream stores events only")
        if tail is not None and events is None:
            raise CassetteValueError("holds a tail without events: only a stream has a tail")
        drop = wire_only_headers(self.body_b64)
        if not drop.isdisjoint(self.headers):
            self.headers = {k: v for k, v in self.headers.items() if k not in drop}

    @property
    def is_stream(self) -> bool:
        return self.events is not None

    def sse_events(self) -> list[SSEEvent]:
        """The stored events as the SSE codec sees them (empty for a non-stream)."""
        return [event.to_sse() for event in self.events or ()]

    def to_data(self) -> dict[str, Any]:
        """The response as a cassette file holds it (``None`` fields left out; a JSON
        body is the very object, not a copy)."""
        out = self._body_data({"status": self.status, "headers": dict(self.headers)})
        if self.events is not None:
            out["events"] = [event.to_data() for event in self.events]
        out["end"] = self.end
        for field in ("truncated", "tail"):
            if getattr(self, field) is not None:
                out[field] = getattr(self, field)
        return out

    @classmethod
    def _from_data(cls, data: Any) -> RecordedResponse:
        fields = checks.keys(data, cls._KEYS, ("status",))
        if "events" in fields:
            events = checks.each(fields["events"], RecordedEvent._from_data, "events")
            fields = {**fields, "events": events}
        return cls(**fields)


class Interaction(_Record):
    """One request and its response.

    ``origin`` says where an interaction that was not recorded at the wire came from:
    an imported trace (:mod:`..traces`) puts there the span it was built from, what
    it filled in because the trace could not know it, and the quirks it corrected, so
    ``agentreplay inspect`` and ``lint`` can say so. ``None`` for a recording.
    """

    __slots__ = ("origin", "request", "response")
    _FIELDS = ("request", "response", "origin")
    _KEYS = frozenset(_FIELDS)
    _DEFAULTS: ClassVar[dict[str, Any]] = {"origin": None}

    def __init__(
        self,
        *,
        request: RecordedRequest,
        response: RecordedResponse,
        origin: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(request, RecordedRequest):
            raise checks.wrong(request, "a RecordedRequest", "request")
        if not isinstance(response, RecordedResponse):
            raise checks.wrong(response, "a RecordedResponse", "response")
        self.request = request
        self.response = response
        self.origin = None if origin is None else checks.origin(origin)

    def to_data(self) -> dict[str, Any]:
        """The interaction as a cassette file holds it (see ``RecordedRequest.to_data``)."""
        out = {"request": self.request.to_data(), "response": self.response.to_data()}
        if self.origin is not None:
            out["origin"] = self.origin
        return out

    @classmethod
    def _from_data(cls, data: Any) -> Interaction:
        fields = checks.keys(data, cls._KEYS, ("request", "response"))
        request = checks.inside("request", RecordedRequest._from_data, fields["request"])
        response = checks.inside("response", RecordedResponse._from_data, fields["response"])
        return cls(request=request, response=response, origin=fields.get("origin"))


class Cassette(_Record):
    """A whole cassette file."""

    __slots__ = ("interactions", "version")
    _FIELDS = ("interactions", "version")
    _KEYS = frozenset(_FIELDS)
    _DEFAULTS: ClassVar[dict[str, Any]] = {"version": CASSETTE_VERSION, "interactions": []}

    def __init__(
        self, *, interactions: Sequence[Interaction] | None = None, version: int = CASSETTE_VERSION
    ) -> None:
        if type(version) is not int or version != CASSETTE_VERSION:
            raise CassetteValueError(f"must be {CASSETTE_VERSION}", ("version",))
        self.version = version
        self.interactions = (
            [] if interactions is None else checks.items(interactions, Interaction, "interactions")
        )

    def to_data(self) -> dict[str, Any]:
        """The cassette as its file holds it: ``{"interactions": [...], "version": 1}``."""
        interactions = [interaction.to_data() for interaction in self.interactions]
        return {"interactions": interactions, "version": self.version}


def cassette_from_data(data: Any, *, json_checked: bool = False) -> Cassette:
    """The cassette a file's parsed ``data`` describes; raises
    :class:`~.checks.CassetteValueError` with the path of the first bad value (the
    reader adds the file, line and column).

    ``json_checked``: every JSON body is known to hold JSON values only (they came from
    the canonical reader, whose result the writer re-checks, or from ``json.loads``),
    so the walk that proves it is skipped.
    """
    fields = checks.keys(data, Cassette._KEYS)
    with checks.json_trusted(json_checked):
        interactions = checks.each(
            fields.get("interactions", []), Interaction._from_data, "interactions"
        )
    return Cassette(interactions=interactions, version=fields.get("version", CASSETTE_VERSION))
