"""Encoding events for the wire lazily, one at a time, as the client pulls them.

A fake model's rendered :class:`~..sse.SSEEvent` objects and a cassette's stored
events (:class:`StoredEvent`, no copy made) become the bytes a provider would
send, each encoded only when the delivery asks for the next one: the time to the
first byte does not grow with the stream. The usual event (a name and one data
line) is written in one step; anything else goes through the spec-exact
:class:`~..sse.SSEEncoder`.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Sequence
from typing import Protocol

from ..sse import LineEnd, SSEEncoder, SSEEvent

__all__ = ["Event", "PlainSource", "StoredEvent", "encode_lazily", "plain_bytes"]


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


PlainBatches = Generator[list[bytes], None, Iterable[StoredEvent]]
"""What :meth:`PlainSource.plain_batches` gives: wire bytes in batches, then the rest."""


class PlainSource(Protocol):
    """Stored events that encode their usual events themselves
    (:class:`~..cassettes.lazy_events.LazyEvents`, a big stream's lines read as
    reached): the bytes :func:`_plain` would write for each, in batches, from the first
    event until the first other one, then (returned) the events left, for the encoder."""

    def plain_batches(self) -> Generator[list[bytes], None, Iterable[StoredEvent]]:
        """Wire bytes, a batch at a time, while the events are usual ones; returns the rest."""
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
    # (getattr, not isinstance of the protocol: a fake's stream must not pay for it)
    plain_batches = getattr(events, "plain_batches", None) if line_end == "\n" else None
    if plain_batches is not None:
        batches: PlainBatches = plain_batches()  # its usual events, a batch at a time
        while True:
            try:
                batch = next(batches)
            except StopIteration as stop:
                events = stop.value  # the rest, for the encoder
                break
            yield from batch
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


def plain_bytes(event: StoredEvent) -> bytes | None:
    """The bytes :func:`encode_lazily` sends for a stored event at the start of a stream
    (before any id), when it writes it in one step; ``None`` when the encoder must (an
    id, a retry, comments, several data lines): what a :class:`PlainSource` yields."""
    return None if event.id or event.comments else _plain(event, comments=True)
