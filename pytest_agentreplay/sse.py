"""The WHATWG server-sent-events format, exactly: an incremental decoder and an encoder.

The decoder follows the "event stream interpretation" section of the HTML
standard rather than any SDK's approximation of it:

* one leading UTF-8 BOM is stripped, even when it arrives split across chunks;
* CR, LF and CRLF all end a line, and a CR at the end of one chunk followed by
  an LF at the start of the next is *one* line end;
* lines starting with ``:`` are comments (kept on request); a blank line that ends a
  block of comments only (``: PROCESSING`` then a blank line, as some gateways send
  while a model thinks) dispatches nothing, and is kept as a ``None`` among the
  comments so that encoding gives back the same bytes;
* ``data`` lines are joined with LF; an event whose data buffer is empty is not
  dispatched; ``id`` is ignored when it contains NUL and persists across events
  (it is the *last event ID*, as ``EventSource.lastEventId``); ``retry`` is
  honoured only when it is all ASCII digits; unknown fields are ignored;
* invalid UTF-8 becomes U+FFFD (or raises :class:`SSEDecodeError` in strict mode);
* an event that has not been terminated by a blank line when the stream ends is
  *reported* by :meth:`SSEDecoder.finish` instead of being silently dropped, so
  a caller can tell a truncated stream from a complete one. (Both official SDKs
  silently drop such an event.)

Work is linear in the input size whatever the chunking: a long line that arrives
one byte at a time is buffered as fragments and joined once.

The encoder writes events so that decoding gives them back, and refuses events
it cannot write faithfully (a CR inside data, a newline in an event name, ...).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from . import jsonparse
from .errors import SSEDecodeError, SSEEncodeError

__all__ = [
    "Decoded",
    "LineEnd",
    "SSEDecoder",
    "SSEEncoder",
    "SSEEvent",
    "Truncated",
    "TruncatedStreamError",
    "decode",
    "encode",
    "event_bytes",
    "iter_events",
]

_BOM = b"\xef\xbb\xbf"
_LINE_ENDS = (b"\r", b"\n")
_ASCII_DIGITS = frozenset("0123456789")
LineEnd = Literal["\n", "\r\n", "\r"]


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event.

    ``event`` is the ``event:`` field (``None`` when absent, which clients treat as
    ``"message"``); ``id`` is the last event ID at dispatch time (``""`` until a
    stream sets one); ``retry`` is a ``retry:`` field given in this event's block;
    ``comments`` are the comment lines seen since the previous dispatch, kept only
    when the decoder is asked to keep them; a ``None`` among them is the blank line
    that closed a block of comments only (it dispatched nothing, but dropping it made
    a replay one byte short of the recording: issue 18).
    """

    data: str
    event: str | None = None
    id: str = ""
    retry: int | None = None
    comments: tuple[str | None, ...] = field(default=(), compare=True)

    @property
    def type(self) -> str:
        """The event type a browser ``EventSource`` would dispatch."""
        return self.event or "message"

    def json(self) -> Any:
        """``data`` parsed as JSON."""
        return jsonparse.loads(self.data)


@dataclass(frozen=True, slots=True)
class Truncated:
    """What was left undispatched when a stream ended without a final blank line.

    ``partial`` holds the fields seen for the event in progress (``None`` when no
    field was seen); ``unterminated_line`` is text after the last line end.
    """

    partial: SSEEvent | None
    unterminated_line: str

    def describe(self) -> str:
        """A one-line description for error messages."""
        bits = []
        if self.partial is not None:
            name = self.partial.event or "message"
            bits.append(f"an event of type {name!r} with {len(self.partial.data)} chars of data")
        if self.unterminated_line:
            bits.append(f"an unterminated line of {len(self.unterminated_line)} chars")
        return "stream ended with " + " and ".join(bits) + " not followed by a blank line"


class TruncatedStreamError(SSEDecodeError):
    """A stream ended in the middle of an event."""

    def __init__(self, truncated: Truncated) -> None:
        self.truncated = truncated
        super().__init__(truncated.describe())


class SSEDecoder:
    """Incremental decoder: :meth:`feed` it byte chunks, then call :meth:`finish`.

    ``keep_comments`` attaches comment lines to the next dispatched event;
    ``strict_utf8`` raises :class:`SSEDecodeError` on invalid UTF-8 instead of
    replacing it with U+FFFD as the standard requires.
    """

    def __init__(self, *, keep_comments: bool = False, strict_utf8: bool = False) -> None:
        self.keep_comments = keep_comments
        self._errors = "strict" if strict_utf8 else "replace"
        self.last_event_id = ""
        self.reconnection_time: int | None = None
        self._head: bytes | None = b""  # bytes held while deciding on a BOM; None once decided
        self._pending: list[bytes] = []
        self._pending_cr = False
        self._line_no = 0
        self._comments: list[str | None] = []
        self._reset_event()

    def _reset_event(self) -> None:
        self._event: str | None = None
        self._data: list[str] = []
        self._retry: int | None = None
        self._saw_field = False
        self._block_comments = False  # this block has a comment line

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode ``chunk`` and return the events it completes (possibly none)."""
        if not chunk:
            return []
        if self._head is not None:
            chunk = self._strip_bom(chunk)
            if not chunk:
                return []
        if self._pending_cr:
            self._pending_cr = False
            if chunk.startswith(b"\n"):
                chunk = chunk[1:]
        lines = chunk.splitlines(keepends=True)
        if not lines:
            return []
        last = lines[-1]
        if not last.endswith(_LINE_ENDS):
            lines.pop()
            if not lines:
                self._pending.append(last)
                return []
            tail: bytes | None = last
        else:
            tail = None
            self._pending_cr = last.endswith(b"\r")
        events = self._process_lines(lines)
        if tail is not None:
            self._pending.append(tail)
        return events

    def _strip_bom(self, chunk: bytes) -> bytes:
        head = (self._head or b"") + chunk
        if len(head) < len(_BOM) and _BOM.startswith(head):
            self._head = head
            return b""
        self._head = None
        return head[len(_BOM) :] if head.startswith(_BOM) else head

    def _process_lines(self, lines: list[bytes]) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        if self._pending:
            lines[0] = b"".join(self._pending) + lines[0]
            self._pending.clear()
        for raw in lines:
            end = 2 if raw.endswith(b"\r\n") else 1
            event = self._process_line(raw[:-end])
            if event is not None:
                events.append(event)
        return events

    def _decode_text(self, raw: bytes) -> str:
        try:
            return raw.decode("utf-8", self._errors)
        except UnicodeDecodeError as exc:
            raise SSEDecodeError(
                f"line {self._line_no + 1}: invalid UTF-8 at byte {exc.start} of the line"
            ) from None

    def _process_line(self, raw: bytes) -> SSEEvent | None:
        line = self._decode_text(raw)
        self._line_no += 1
        if not line:
            return self._dispatch()
        if line[0] == ":":
            if self.keep_comments:
                self._comments.append(line[2:] if line.startswith(": ") else line[1:])
                self._block_comments = True
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        self._apply_field(name, value)
        return None

    def _apply_field(self, name: str, value: str) -> None:
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry":
            if value and _ASCII_DIGITS.issuperset(value):
                self._retry = self.reconnection_time = int(value)
        else:
            return  # unknown field: ignored, as the standard says
        self._saw_field = True

    def _dispatch(self) -> SSEEvent | None:
        if not self._data:
            if self._block_comments:  # a block of comments only: its blank line is kept
                self._comments.append(None)
            self._reset_event()
            return None
        event = SSEEvent(
            data="\n".join(self._data),
            event=self._event or None,
            id=self.last_event_id,
            retry=self._retry,
            comments=tuple(self._comments),
        )
        self._comments.clear()
        self._reset_event()
        return event

    def finish(self) -> Truncated | None:
        """End of stream: report an event or line left incomplete, then reset.

        Returns ``None`` for a stream that ended cleanly on a blank line.
        """
        head = self._head or b""
        tail = self._decode_text(head + b"".join(self._pending))
        partial = None
        if self._saw_field or self._data:
            partial = SSEEvent(
                data="\n".join(self._data),
                event=self._event or None,
                id=self.last_event_id,
                retry=self._retry,
                comments=tuple(self._comments),
            )
        self._head, self._pending, self._pending_cr = None, [], False
        self._comments = []
        self._reset_event()
        if partial is None and not tail:
            return None
        return Truncated(partial=partial, unterminated_line=tail)


def iter_events(
    chunks: Iterable[bytes],
    *,
    keep_comments: bool = False,
    allow_truncated: bool = False,
) -> Iterator[SSEEvent]:
    """Decode a chunked byte stream lazily.

    Raises :class:`TruncatedStreamError` at the end when the last event was not
    terminated, unless ``allow_truncated`` (then the incomplete event is dropped,
    as a browser would drop it).
    """
    decoder = SSEDecoder(keep_comments=keep_comments)
    for chunk in chunks:
        yield from decoder.feed(chunk)
    truncated = decoder.finish()
    if truncated is not None and not allow_truncated:
        raise TruncatedStreamError(truncated)


@dataclass(frozen=True, slots=True)
class Decoded:
    """A whole body decoded: the events, and what was left if the stream was cut."""

    events: list[SSEEvent]
    truncated: Truncated | None


def decode(body: bytes | str, *, keep_comments: bool = False) -> Decoded:
    """Decode a complete body; never raises for well-formed-but-truncated input."""
    raw = body.encode("utf-8") if isinstance(body, str) else body
    decoder = SSEDecoder(keep_comments=keep_comments)
    events = decoder.feed(raw)
    return Decoded(events=events, truncated=decoder.finish())


def _check_line(value: str, what: str, *, allow_nul: bool = True) -> None:
    if "\r" in value or "\n" in value:
        raise SSEEncodeError(f"{what} {value[:40]!r} contains a line break; SSE cannot carry it")
    if not allow_nul and "\0" in value:
        raise SSEEncodeError(f"{what} {value[:40]!r} contains NUL; a decoder would ignore it")


class SSEEncoder:
    """Writes events as SSE, tracking the last event ID so ``id:`` lines are
    written only when it changes (IDs persist across events on the wire)."""

    def __init__(self, *, comments: bool = False, line_end: LineEnd = "\n") -> None:
        if line_end not in ("\n", "\r\n", "\r"):
            raise SSEEncodeError(f"line_end must be LF, CRLF or CR, got {line_end!r}")
        self.comments = comments
        self.line_end = line_end
        self._last_id = ""

    def encode(self, event: SSEEvent) -> bytes:
        """The bytes of one event, blank line included."""
        return self.lines(event).encode("utf-8")

    def lines(self, event: SSEEvent) -> str:
        """The text of one event, blank line included."""
        out: list[str] = []
        if self.comments:
            for comment in event.comments:
                if comment is None:  # the blank line closing a block of comments only
                    out.append("")
                    continue
                _check_line(comment, "comment")
                out.append(f": {comment}" if comment else ":")
        if event.event is not None:
            _check_line(event.event, "event name")
            out.append(f"event: {event.event}" if event.event else "event:")
        if event.id != self._last_id:
            _check_line(event.id, "event id", allow_nul=False)
            out.append(f"id: {event.id}" if event.id else "id:")
            self._last_id = event.id
        if event.retry is not None:
            if event.retry < 0:
                raise SSEEncodeError(f"retry must be >= 0, got {event.retry}")
            out.append(f"retry: {event.retry}")
        if "\r" in event.data:
            raise SSEEncodeError(
                f"data {event.data[:40]!r} contains CR; SSE data lines are joined with LF only"
            )
        out.extend(f"data: {line}" if line else "data:" for line in event.data.split("\n"))
        out.append("")
        return self.line_end.join(out) + self.line_end


def event_bytes(data: str, event: str | None = None, line_end: LineEnd = "\n") -> bytes:
    """The bytes :class:`SSEEncoder` writes for an event of a name and data only, no id,
    retry or comment (the events a fake renders). The usual one (LF line ends, the name
    and the data on one line each) is written in one step, as the replay's encoder
    writes it (``transport.encode``); the encoder, a line at a time, costs several
    times as much."""
    if line_end == "\n" and "\n" not in data and "\r" not in data:
        line = f"data: {data}\n\n" if data else "data:\n\n"
        if event is None:
            return line.encode("utf-8")
        if "\n" not in event and "\r" not in event:
            return (f"event: {event}\n{line}" if event else f"event:\n{line}").encode("utf-8")
    return SSEEncoder(line_end=line_end).encode(SSEEvent(data=data, event=event))


def encode(
    events: Iterable[SSEEvent],
    *,
    comments: bool = False,
    line_end: LineEnd = "\n",
) -> bytes:
    """Encode a whole stream; ``decode(encode(events)).events == events``."""
    encoder = SSEEncoder(comments=comments, line_end=line_end)
    return b"".join(encoder.encode(event) for event in events)
