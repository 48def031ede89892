"""Encoding events for the wire lazily, one at a time, as the client pulls them.

A fake model's rendered :class:`~..sse.SSEEvent` objects and a cassette's stored
events (:class:`StoredEvent`, no copy made) become the bytes a provider would
send, each encoded only when the delivery asks for the next one: the time to the
first byte does not grow with the stream. The usual event (a name and one data
line) is written in one step; anything else goes through the spec-exact
:class:`~..sse.SSEEncoder`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from ..sse import LineEnd, SSEEncoder, SSEEvent

__all__ = ["Event", "StoredEvent", "encode_lazily"]


class StoredEvent(Protocol):
    """An event as a cassette stores it (:class:`~..cassettes.cassette.RecordedEvent`, where
    a missing id or comment list is ``None``): :func:`encode_lazily` takes these as well as
    :class:`~..sse.SSEEvent`, so a recording plays without first copying every event."""

    @property
    def data(self) -> str: ...

    @property
    def event(self) -> str | None: ...

    @property
    def id(self) -> str | None: ...

    @property
    def retry(self) -> int | None: ...

    @property
    def comments(self) -> Sequence[str | None] | None: ...

    def to_sse(self) -> SSEEvent:
        """The event as the SSE codec sees it."""
        ...


Event = SSEEvent | StoredEvent
"""An event to encode: rendered, or as a cassette stores it."""


def encode_lazily(
    events: Iterable[Event],
    *,
    comments: bool = False,
    tail: bytes = b"",
    line_end: LineEnd = "\n",
) -> Iterator[bytes]:
    """Encode events one at a time, as they are pulled (time to first byte stays flat);
    ``tail`` (an unterminated last line, as a recording may end) follows them. Stored
    events that need the general encoder are converted to SSE events one by one.
    ``line_end`` ends every line (Google frames its streams with CRLF)."""
    encoder = SSEEncoder(comments=comments, line_end=line_end)
    ids = False  # once an event sets an id, the encoder tracks it for every later event
    for event in events:
        plain = None if ids or line_end != "\n" else _plain(event, comments)
        if plain is None:
            ids = ids or bool(event.id)
            plain = encoder.encode(event if isinstance(event, SSEEvent) else event.to_sse())
        yield plain
    if tail:
        yield tail


def _plain(event: Event, comments: bool) -> bytes | None:
    """The bytes :class:`~..sse.SSEEncoder` writes for the usual event (a name, one data
    line, no id, retry or comment to write), built in one step; ``None`` for any other
    event. Streams of tens of thousands of events spend most of their playback here."""
    data, name = event.data, event.event
    if event.id or event.retry is not None or (comments and event.comments):
        return None
    if "\n" in data or "\r" in data:
        return None
    line = f"data: {data}\n\n" if data else "data:\n\n"
    if name is None:
        return line.encode("utf-8")
    if "\n" in name or "\r" in name:
        return None
    return (f"event: {name}\n{line}" if name else f"event:\n{line}").encode("utf-8")
