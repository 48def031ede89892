"""Record live traffic by teeing it: the code under test sees every chunk as it arrives.

In record mode the router hands each live response to :class:`LiveRecorder`,
which returns the same response with its body passed through a
:class:`~..transport.tee.Tee`. An :class:`InteractionSink` watches the bytes go by:
an SSE body is decoded event by event with each event's arrival time (seconds
since the request was sent); any other body is kept whole. When the body ends —
normally, cut, timed out, hung up on, or interrupted — the sink builds one
:class:`~.cassette.Interaction` recording how it ended, and hands it to the
cassette session. Nothing is buffered on the client's side, and a stream that
never ends is still delivered.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..mcp import jsonrpc
from ..providers import detect
from ..providers.catalog import final_event
from ..sse import SSEDecoder
from ..transport.family import Family
from ..transport.router import HTTPRequest
from ..transport.tee import Tee
from .cassette import Interaction, RecordedEvent, RecordedRequest, RecordedResponse
from .encodings import BodyDecoder, codings
from .errors import ContentDecodingError
from .fields import STREAM_ENDS, normalize_headers, tail
from .from_wire import request_from_wire, response_from_wire

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "UNNUMBERED",
    "InteractionSink",
    "LiveRecorder",
    "recorded_request",
]

DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024
UNNUMBERED = 1_000_000_000
"""Sequence numbers from here on are for responses whose request the session did not
number: they are written after the numbered ones, in the order they arrived."""
_DROP_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding"})


def recorded_request(request: HTTPRequest) -> RecordedRequest:
    """A live request in cassette form (before scrubbing)."""
    return request_from_wire(request.method, request.url, request.headers, request.content)


class InteractionSink:
    """Builds one interaction from a live body as it passes through a :class:`Tee`."""

    def __init__(
        self,
        request: HTTPRequest,
        response: Any,
        started: float,
        on_done: Callable[[Interaction | str], None],
        *,
        max_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        self._event = RecordedEvent.from_sse  # once here, not per chunk
        self.request = request
        self.started = started
        self.on_done = on_done
        self.max_bytes = max_bytes
        self.status: int = response.status_code
        self.raw_headers = list(response.headers.multi_items())
        self.headers = normalize_headers(dict(response.headers))
        self.streaming = "text/event-stream" in self.headers.get("content-type", "").lower()
        self.refused: str | None = None  # why the body cannot be recorded
        self.encoding = self.headers.get("content-encoding", "")
        self.decoder = self._decoder(self.encoding)
        self.sse = SSEDecoder(keep_comments=True)
        self.events: list[RecordedEvent] = []
        self.pending = bytearray()  # stream bytes after the last blank line
        self.body = bytearray()
        self.size = 0
        self.too_large = False
        self.ended = False  # once: a body ended by a stop is not ended again by its tee
        self._lock = threading.Lock()

    def _decoder(self, encoding: str) -> BodyDecoder | None:
        """The decoder of the body's ``content-encoding``: the body is stored decoded,
        so that it is scrubbed and scanned (issue 18: a zstd body was stored opaque)."""
        if not codings(encoding):
            return None
        try:
            return BodyDecoder(encoding, limit=self.max_bytes)
        except ContentDecodingError as exc:
            self._refuse(exc)
            return None

    def _refuse(self, exc: ContentDecodingError) -> None:
        """Record nothing of this body (the client still gets every byte), and say why."""
        request = f"{self.request.method} {self.request.url}"
        what = f"{request}: the response body is encoded ({self.encoding})"
        if exc.too_large:
            why = f"{exc.reason}, so it was not recorded (raise max_body_bytes to record it)"
        else:
            why = (
                f"and could not be decoded ({exc.reason}), so it could not be scrubbed and "
                "was not recorded. Install what is missing, or have the client send "
                "accept-encoding: gzip"
            )
        self.refused = f"{what} {why}."
        self.events, self.body, self.pending = [], bytearray(), bytearray()

    def chunk(self, data: bytes) -> None:
        """Called with each raw chunk on its way to the client."""
        with self._lock:
            if self.ended or self.too_large or self.refused is not None:
                return
            self.size += len(data)
            if self.size > self.max_bytes:  # not recorded: free what was kept so far
                self.too_large = True
                self.events, self.body, self.pending = [], bytearray(), bytearray()
                return
            try:
                plain = self.decoder.feed(data) if self.decoder is not None else data
            except ContentDecodingError as exc:
                self._refuse(exc)
                return
            self._take(plain)

    def _take(self, plain: bytes) -> None:
        """Keep decoded bytes: parsed into events for a stream, whole for a body."""
        if self.streaming:
            self._stream(plain)
        else:
            self.body += plain

    def _stream(self, data: bytes) -> None:
        t = round(time.monotonic() - self.started, 6)
        dispatched = [self._event(e, t=t) for e in self.sse.feed(data)]
        self.events.extend(dispatched)
        self.pending += data
        if dispatched:
            # Only an event boundary lets go of the bytes before it. Trimming at each
            # chunk instead re-read the whole unfinished event every time: quadratic
            # in one long event (8 MB in 16 KB chunks took 11 s). end() trims once more
            # for blank lines that closed no event (a block without data).
            self.pending[:] = tail(bytes(self.pending), more=True)

    def end(self, how: str) -> None:
        """Called when the body ended (the first call counts); builds the interaction."""
        with self._lock:
            if self.ended:
                return
            self.ended = True
            self._flush(complete=how == "complete")
            if self.refused is not None:
                self.on_done(self.refused)
                return
            if self.too_large:
                self.on_done(
                    f"{self.request.method} {self.request.url}: the response body exceeded "
                    f"{self.max_bytes:,} bytes and was not recorded (raise max_body_bytes in "
                    f"pytest_agentreplay_configure to record it)"
                )
                return
            response = self._stream_response() if self.streaming else self._body_response()
            response.end = self._ending(how)  # type: ignore[assignment]
            self.on_done(Interaction(request=recorded_request(self.request), response=response))

    def _ending(self, how: str) -> str:
        """How the body ended, as stored: a client that hung up after the protocol's
        final event, or after the whole of a body, read all there was (issue 31: MCP
        clients close every POST stream after its response, litellm an Anthropic stream
        after ``message_delta``, and replay played them as ``cut``)."""
        if how == "cancelled" and self._said_all():
            return "complete"
        return how if how in STREAM_ENDS else "cut"

    def _said_all(self) -> bool:
        """Whether the body had said all it had to say when the client let go."""
        if not self.streaming:
            length = next((v for k, v in self.raw_headers if k.lower() == "content-length"), None)
            if length is not None and length.strip().isdigit():
                return self.size >= int(length)
            return self.size == 0 and self.status in (202, 204)
        last = next((e for e in reversed(self.events) if e.data), None)
        if last is None:
            return False
        provider = detect(self.request.method, self.request.path)
        if provider is not None:
            return final_event(provider, last.event, last.data)
        asked = jsonrpc.request_ids(jsonrpc.messages_of(self.request.content))
        return jsonrpc.answers(asked, jsonrpc.messages_of(last.data.encode("utf-8")))

    def _flush(self, *, complete: bool) -> None:
        """Decode what the decoder still holds, once the body has ended (a body cut
        short is decoded as far as it came)."""
        if self.decoder is None or self.too_large or self.refused is not None:
            return
        try:
            plain = self.decoder.finish(complete=complete)
        except ContentDecodingError as exc:
            self._refuse(exc)
            return
        self._take(plain)

    def _stream_response(self) -> RecordedResponse:
        fields: dict[str, Any] = {
            "status": self.status,
            "events": self.events,
            "headers": {k: v for k, v in self.headers.items() if k not in _DROP_HEADERS},
        }
        truncated = self.sse.finish()
        if truncated is not None:
            fields["truncated"] = truncated.describe()
            fields["tail"] = tail(bytes(self.pending)).decode("utf-8", "replace") or None
        return RecordedResponse(**fields)

    def _body_response(self) -> RecordedResponse:
        """The whole body, decoded already: the ``content-encoding`` no longer applies."""
        headers = [(k, v) for k, v in self.raw_headers if k.lower() != "content-encoding"]
        return response_from_wire(self.status, headers, bytes(self.body))


class LiveRecorder:
    """The router's recorder in record mode: tees every live response into ``on_done``.

    Each interaction is handed over with its sequence number, which orders the
    cassette: ``sequence_of(request)`` when given (the session numbers requests as
    they are sent, so concurrent calls — ``asyncio.gather`` — are written in the
    order they were made, not the order their responses happened to arrive), else
    the order responses arrive in.
    """

    def __init__(
        self,
        on_done: Callable[[int, Interaction | str], None],
        *,
        max_bytes: int = DEFAULT_MAX_BODY_BYTES,
        sequence_of: Callable[[HTTPRequest], int | None] | None = None,
    ) -> None:
        self.on_done = on_done
        self.max_bytes = max_bytes
        self.sequence_of = sequence_of
        self._count = 0
        self._lock = threading.Lock()
        self._open: set[InteractionSink] = set()
        self._stopped = False

    def _sequence(self, request: HTTPRequest) -> int:
        given = self.sequence_of(request) if self.sequence_of is not None else None
        with self._lock:
            self._count += 1
            return given if given is not None else UNNUMBERED + self._count

    def wrap(self, request: HTTPRequest, response: Any, family: Family, started: float) -> Any:
        sequence = self._sequence(request)
        sinks: list[InteractionSink] = []

        def done(result: Interaction | str) -> None:
            with self._lock:
                self._open.discard(sinks[0])
                stopped = self._stopped
            if stopped and isinstance(result, Interaction) and result.response.end != "complete":
                result = result.replace(response=result.response.replace(end="incomplete"))
            self.on_done(sequence, result)

        sink = InteractionSink(request, response, started, done, max_bytes=self.max_bytes)
        sinks.append(sink)
        with self._lock:
            self._open.add(sink)
        return family.teed(response, Tee(response.stream, sink, family.classify))

    def end_open(self, how: str = "incomplete") -> int:
        """End every body still being recorded as ``how``, now; how many there were.

        For a process being stopped while bodies stream in (``agentreplay serve`` on
        SIGTERM): what each holds so far is kept, marked so that replay refuses it,
        as a Ctrl-C in a test marks it (issue 27: it was stored as the client's hang-up,
        ``cancelled``, and replayed as a fragment). Their readers may still be blocked
        on the network: whatever arrives later is not recorded, and a body that ends
        early from now on (its reader let go) is ``incomplete`` too."""
        with self._lock:
            self._stopped = True
            still = list(self._open)
        for sink in still:
            sink.end(how)
        return len(still)
