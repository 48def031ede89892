"""The cassette file model: what one recorded interaction holds, validated with pydantic.

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
``transfer-encoding`` always (the player sets its own), ``content-encoding``
unless the body is kept as raw bytes (``body_b64``), since a stored ``json``,
``body`` or ``events`` is already decoded.
"""

from __future__ import annotations

import base64
from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ..sse import SSEEvent
from .records import (
    CASSETTE_VERSION,
    STREAM_ENDS,
    body_bytes,
    event_to_sse,
    normalize_headers,
    wire_only_headers,
)

__all__ = [
    "CASSETTE_VERSION",
    "Cassette",
    "Interaction",
    "RecordedEvent",
    "RecordedRequest",
    "RecordedResponse",
    "StreamEnd",
    "json_problem",
    "normalize_headers",
]

StreamEnd = Literal["complete", "cut", "timeout", "cancelled", "incomplete"]
"""How a recorded body ended: normally; connection dropped; read timed out; the
client hung up; the recording was interrupted (Ctrl-C) — refused on replay unless
explicitly allowed."""
assert frozenset(get_args(StreamEnd)) == STREAM_ENDS

# Events must stay encodable as SSE (see sse.SSEEncoder): a CR can never be in
# data (decoders split lines on it); names, ids and comments are single lines.
_NO_CR = r"^[^\r]*$"
_ONE_LINE = r"^[^\r\n]*$"


_JSON_LEAVES = (str, int, float, bool, type(None))


def json_problem(value: Any) -> str | None:
    """Where ``value`` stops being JSON (``messages[2].when holds a date``), or ``None``.

    YAML can build dates, bytes, sets and non-text keys that ``json.dumps`` would
    refuse (or change) at replay time; a hand-edited cassette is caught at load.
    """
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


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class RecordedEvent(_Strict):
    """One SSE event as it arrived.

    ``id`` is the last event ID in force when the event was dispatched (absent
    until the stream sets one), as :class:`~..sse.SSEEvent` has it.
    """

    data: str = Field(pattern=_NO_CR)
    event: str | None = Field(default=None, pattern=_ONE_LINE)
    id: str | None = Field(default=None, pattern=r"^[^\r\n\x00]*$")
    retry: int | None = Field(default=None, ge=0)
    comments: list[str] | None = None
    t: float | None = Field(default=None, ge=0, allow_inf_nan=False)

    @field_validator("comments")
    @classmethod
    def _comment_lines(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and any("\r" in c or "\n" in c for c in value):
            raise ValueError("a comment is one line: it cannot hold CR or LF")
        return value or None

    @field_validator("t")
    @classmethod
    def _microseconds(cls, value: float | None) -> float | None:
        # Arrival times are kept to the microsecond so files stay short and stable.
        return None if value is None else round(value, 6)

    def to_sse(self) -> SSEEvent:
        """The event as the SSE codec sees it."""
        return event_to_sse(self.data, self.event, self.id, self.retry, self.comments)

    @classmethod
    def from_sse(cls, event: SSEEvent, *, t: float | None = None) -> RecordedEvent:
        """Record a decoded event, arrived ``t`` seconds after the request was sent."""
        return cls(
            data=event.data,
            event=event.event,
            id=event.id or None,
            retry=event.retry,
            comments=list(event.comments) or None,
            t=t,
        )


class _Body(_Strict):
    """A body: parsed JSON, text, or base64 bytes (at most one of them)."""

    json_body: Any = Field(default=None, alias="json")
    body: str | None = None
    body_b64: str | None = None

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @field_validator("json_body")
    @classmethod
    def _is_json(cls, value: Any, info: ValidationInfo) -> Any:
        # The canonical reader only ever builds JSON values: it skips this walk.
        if value is None or (info.context or {}).get("json_checked"):
            return value
        problem = json_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _one_body(self) -> _Body:
        given = [
            name for name in ("json_body", "body", "body_b64") if getattr(self, name) is not None
        ]
        if len(given) > 1:
            names = ", ".join("json" if g == "json_body" else g for g in given)
            raise ValueError(f"holds {names}: a body is stored one way only")
        if self.body_b64 is not None:
            try:
                base64.b64decode(self.body_b64, validate=True)
            except ValueError as exc:
                raise ValueError(f"body_b64 is not valid base64: {exc}") from None
        return self

    def content(self) -> bytes:
        """The body bytes (JSON re-serialized compactly)."""
        return body_bytes(self.json_body, self.body, self.body_b64)


class RecordedRequest(_Body):
    """The request as sent (after scrubbing)."""

    method: str = Field(min_length=1)
    url: str = Field(min_length=1)
    headers: dict[str, str] = Field(default_factory=dict)

    @field_validator("headers")
    @classmethod
    def _lower_names(cls, value: dict[str, str]) -> dict[str, str]:
        return normalize_headers(value)


class RecordedResponse(_Body):
    """The response as received: status, headers, and a body or an event list."""

    status: int = Field(ge=100, le=599)
    headers: dict[str, str] = Field(default_factory=dict)
    events: list[RecordedEvent] | None = None
    end: StreamEnd = "complete"
    truncated: str | None = None
    tail: str | None = None
    """Text after the last event that no blank line terminated, exactly as received
    (hand-trimmed SDK fixtures end right after ``data: {"type":"message_stop"}``).
    A spec decoder never dispatches it, and neither SDK does; replay sends it after
    the events, as it came. ``truncated`` then describes it."""

    @model_validator(mode="after")
    def _events_or_body(self) -> RecordedResponse:
        if self.events is not None and any(
            getattr(self, n) is not None for n in ("json_body", "body", "body_b64")
        ):
            raise ValueError("holds both events and a body: a stream stores events only")
        if self.tail is not None and self.events is None:
            raise ValueError("holds a tail without events: only a stream has a tail")
        self.headers = self._stored_headers(normalize_headers(self.headers))
        return self

    def _stored_headers(self, headers: dict[str, str]) -> dict[str, str]:
        drop = wire_only_headers(self.body_b64)
        if drop.isdisjoint(headers):
            return headers
        return {name: value for name, value in headers.items() if name not in drop}

    @property
    def is_stream(self) -> bool:
        return self.events is not None

    def sse_events(self) -> list[SSEEvent]:
        """The stored events as the SSE codec sees them (empty for a non-stream)."""
        return [event.to_sse() for event in self.events or ()]


class Interaction(_Strict):
    """One request and its response."""

    request: RecordedRequest
    response: RecordedResponse


class Cassette(_Strict):
    """A whole cassette file."""

    version: Literal[1] = 1
    interactions: list[Interaction] = Field(default_factory=list)
