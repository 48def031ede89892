"""Response bodies that play out event by event, and fail, stall or get hung up on.

A :class:`Playback` describes one response: status, headers, the body as a lazy
sequence of *events* (encoded SSE events, or one JSON body), where a fault
strikes, and gates where delivery pauses. A :class:`Player` runs it for one
client — sync or async — handing each chunk over as it is produced, so the time
to the first event does not depend on the length of the stream. The player
notices a client that closes the response early (``break`` out of the loop,
task cancellation, interrupt) and reports every call's ending exactly once
through ``Playback.on_end``.

Nothing here knows an HTTP client library: the module family (httpx or httpx2)
supplies the exceptions a real connection failure raises, through
:class:`FaultRaiser`.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from bisect import bisect_right
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import count, islice
from typing import Any, Literal, Protocol

__all__ = [
    "Chunker",
    "Ending",
    "FaultRaiser",
    "Gate",
    "Playback",
    "Player",
    "Tee",
    "TeeSink",
    "chunk_by_event",
    "chunk_bytes",
    "chunk_lines",
    "chunk_random",
    "chunk_whole",
    "resolve_chunking",
    "wait_event_async",
]

Ending = Literal["complete", "cut", "timeout"]
"""How a body ends after its last delivered event."""

Chunker = Callable[[Iterator[bytes]], Iterator[bytes]]
"""A chunking policy: turns the stream of encoded events into network chunks."""

ChunkingSpec = Literal["event", "whole", "lines"] | int | Chunker


def chunk_by_event(events: Iterator[bytes]) -> Iterator[bytes]:
    """One chunk per event: what a provider's server usually flushes."""
    return events


def chunk_whole(events: Iterator[bytes]) -> Iterator[bytes]:
    """The whole body as one chunk: how vcrpy and respx replay a stream (nothing for an
    empty body: a zero-length chunk would read as the end of the stream)."""
    body = b"".join(events)
    if body:
        yield body


def chunk_lines(events: Iterator[bytes]) -> Iterator[bytes]:
    """One chunk per line, line end included."""
    for event in events:
        yield from event.splitlines(keepends=True)


def chunk_bytes(size: int) -> Chunker:
    """Fixed-size chunks of ``size`` bytes, cutting through events, lines, CRLF and UTF-8."""
    if size < 1:
        raise ValueError(f"chunk size must be >= 1, got {size}")

    def chunker(events: Iterator[bytes]) -> Iterator[bytes]:
        buffer = b""
        for event in events:
            buffer += event
            while len(buffer) >= size:
                yield buffer[:size]
                buffer = buffer[size:]
        if buffer:
            yield buffer

    return chunker


def chunk_random(seed: int = 0, max_size: int = 64) -> Chunker:
    """Chunks of random sizes (1..``max_size``) from a seeded generator: reproducible."""

    def chunker(events: Iterator[bytes]) -> Iterator[bytes]:
        rng = random.Random(seed)
        buffer = b""
        for event in events:
            buffer += event
            while len(buffer) >= max_size:
                size = rng.randint(1, max_size)
                yield buffer[:size]
                buffer = buffer[size:]
        while buffer:
            size = rng.randint(1, max_size)
            yield buffer[:size]
            buffer = buffer[size:]

    return chunker


def resolve_chunking(spec: ChunkingSpec) -> Chunker:
    """A chunker from ``"event"``, ``"whole"``, ``"lines"``, a byte size or a callable."""
    if callable(spec):
        return spec
    if isinstance(spec, int) and not isinstance(spec, bool):
        return chunk_bytes(spec)
    named: dict[str, Chunker] = {
        "event": chunk_by_event,
        "whole": chunk_whole,
        "lines": chunk_lines,
    }
    if spec in named:
        return named[spec]
    raise ValueError(
        f"unknown chunking {spec!r}: use 'event', 'whole', 'lines', a byte size or a callable"
    )


class Gate:
    """A one-way door, shared between threads and event loops.

    Players block on it (:meth:`wait` / :meth:`wait_async`) until :meth:`open`;
    :attr:`reached` is set as soon as anyone starts waiting, which is what
    ``wait_blocked()`` in a test waits for.
    """

    def __init__(self, on_reach: Callable[[], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._opened = threading.Event()
        self.reached = threading.Event()
        self._on_reach = on_reach
        self._wakers: list[Callable[[], None]] = []

    @property
    def is_open(self) -> bool:
        return self._opened.is_set()

    def open(self) -> None:
        """Let every waiter (present and future) through."""
        with self._lock:
            self._opened.set()
            wakers, self._wakers = self._wakers, []
        for wake in wakers:
            wake()

    def _register(self, wake: Callable[[], None]) -> bool:
        """Register a waker; ``False`` if the gate is already open."""
        with self._lock:
            if self._opened.is_set():
                return False
            self._wakers.append(wake)
            self.reached.set()
        if self._on_reach is not None:
            self._on_reach()
        return True

    def _unregister(self, wake: Callable[[], None]) -> None:
        with self._lock, _suppress_value_error():
            self._wakers.remove(wake)

    def wait(self, wake: threading.Event) -> None:
        """Block the calling thread until the gate opens or ``wake`` is set by a hang-up."""
        if not self._register(wake.set):
            return
        try:
            wake.wait()
        finally:
            self._unregister(wake.set)

    async def wait_async(self) -> None:
        """Wait in the running event loop until the gate opens; cancellable."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            loop.call_soon_threadsafe(_resolve, future)

        if not self._register(wake):
            return
        try:
            await future
        finally:
            self._unregister(wake)


async def wait_event_async(event: threading.Event, timeout: float | None) -> bool:
    """``event.wait(timeout)`` for async code: polls without blocking the loop."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while not event.is_set():
        if deadline is not None and time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.001)
    return True


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class _suppress_value_error:  # noqa: N801 - used like contextlib.suppress, cheaper
    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: object, exc: object, tb: object) -> bool:
        return exc_type is ValueError


class FaultRaiser(Protocol):
    """Raises what a real connection failure raises in the client's module family."""

    def cut(self) -> BaseException: ...

    def timeout(self) -> BaseException: ...


@dataclass
class Playback:
    """One response to play.

    ``events`` yields the encoded events lazily (a JSON body is one "event");
    after ``deliver`` events (all when ``None``) the body ends as ``ending`` says.
    ``gates`` maps an event count to a :class:`Gate` to wait on before sending
    event number *count* (``0``: after the headers, before the first byte).
    ``delay`` paces chunks (seconds between chunks); ``schedule[i]`` (seconds
    since the response started) is when event *i* may be complete at the
    earliest (replay paced like the recording); ``on_end(outcome, events_sent)``
    is called once. ``before_headers`` makes the ending strike before any
    response exists (a read timeout while waiting for the status line).
    """

    status: int
    headers: list[tuple[str, str]]
    events: Iterable[bytes]
    deliver: int | None = None
    ending: Ending = "complete"
    before_headers: bool = False
    chunker: Chunker = chunk_by_event
    gates: dict[int, Gate] = field(default_factory=dict)
    delay: float = 0.0
    schedule: Sequence[float] | None = None
    on_end: Callable[[str, int], None] | None = None

    def ended(self, outcome: str, events_sent: int) -> None:
        """Call ``on_end`` (once) and let go of it.

        The callback usually refers back to this playback (a replayed call's logger
        reads the status the client got): dropping it breaks that cycle, so a finished
        call and its cassette are freed at once instead of waiting for the cyclic
        garbage collector (bench/ W4: about a third of the collector's extra work).
        """
        on_end, self.on_end = self.on_end, None
        if on_end is not None:
            on_end(outcome, events_sent)


class Player:
    """Plays one :class:`Playback` to one client, sync or async.

    ``close()`` is what the client calls when it is done with the response. If the
    body was not read to its end, the call was hung up on (``cancelled``) — unless
    nothing was left to send (OpenAI clients stop at ``[DONE]`` and close without
    reading the end of the body), which still counts as the body's own ending.
    """

    def __init__(self, playback: Playback, faults: FaultRaiser) -> None:
        self.playback = playback
        self.faults = faults
        self.events_sent = 0
        self.ended: str | None = None
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._closing = False
        self._chunks: Iterator[tuple[bytes, int]] | None = None

    def end(self, outcome: str) -> None:
        """Record how the call ended; only the first ending counts."""
        with self._lock:
            if self.ended is not None:
                return
            self.ended = outcome
        self.playback.ended(outcome, self.events_sent)

    def hang_up(self) -> None:
        """The client went away mid-body: an unfinished call becomes ``cancelled``."""
        self._closing = True
        self._wake.set()
        self.end("cancelled")

    def close(self) -> None:
        """The client closed the response (normally or early)."""
        if self.ended is not None:
            return
        self._closing = True
        self._wake.set()
        chunks = self._chunks
        if chunks is None:
            self.end("cancelled")
            return
        try:
            more = next(chunks, None) is not None
        except ValueError:  # the client's own thread is inside the generator (blocked)
            more = True
        if more:
            self.end("cancelled")
        else:
            self.end(_OUTCOME[self.playback.ending])

    async def aclose(self) -> None:
        """:meth:`close`, for async clients."""
        self.close()

    def _segments(self) -> Iterator[tuple[Gate | None, Iterator[bytes]]]:
        """The body split at the gates: (gate to pass first, events up to the next gate)."""
        pb = self.playback
        source: Iterator[bytes] = iter(pb.events)
        if pb.deliver is not None:
            source = islice(source, pb.deliver)
        stops = sorted(k for k in pb.gates if pb.deliver is None or k <= pb.deliver)
        gate: Gate | None = None
        position = 0
        for stop in stops:
            yield gate, islice(source, stop - position)
            gate, position = pb.gates[stop], stop
        yield gate, source

    def _iter_chunks(self, gate_wait: Callable[[Gate], None]) -> Iterator[tuple[bytes, int]]:
        """(chunk, events complete once it is delivered) pairs, waiting at gates."""
        pb = self.playback
        if pb.gates or pb.chunker is not chunk_by_event:
            return self._rechunked(gate_wait)
        # The common case (one chunk per event, nothing to wait for): chunk i completes
        # event i. Pairing in C keeps the per-event cost near a bare iterator's (issue 9).
        source: Iterator[bytes] = iter(pb.events)
        if pb.deliver is not None:
            source = islice(source, pb.deliver)
        return zip(source, count(1))

    def _rechunked(self, gate_wait: Callable[[Gate], None]) -> Iterator[tuple[bytes, int]]:
        """:meth:`_iter_chunks` through the chunking policy and the gates."""
        ends: list[int] = []
        produced = 0
        delivered = 0

        def counted(events: Iterator[bytes]) -> Iterator[bytes]:
            nonlocal produced
            for event in events:
                produced += len(event)
                ends.append(produced)
                yield event

        for gate, events in self._segments():
            if gate is not None and not self._closing:
                gate_wait(gate)
            if self.ended is not None:
                return
            for chunk in self.playback.chunker(counted(events)):
                delivered += len(chunk)
                yield chunk, bisect_right(ends, delivered)

    def _finish(self) -> None:
        """After the last chunk: log completion, or log and raise the fault."""
        if self.ended is not None:
            return
        ending = self.playback.ending
        self.end(_OUTCOME[ending])
        if ending == "cut":
            raise self.faults.cut()
        if ending == "timeout":
            raise self.faults.timeout()

    @property
    def _paced(self) -> bool:
        return bool(self.playback.delay or self.playback.schedule)

    def iterate(self) -> Iterator[bytes]:
        """Sync delivery, in the client's thread."""
        self._chunks = chunks = self._iter_chunks(self._wait_sync)
        if not self._paced:
            for chunk, complete in chunks:
                if self.ended is not None:
                    return
                self.events_sent = complete
                yield chunk
            self._finish()
            return
        start = time.monotonic()
        for i, (chunk, complete) in enumerate(chunks):
            pause = self._pause(i, complete, start)
            if pause > 0:
                time.sleep(pause)
            if self.ended is not None:
                return
            self.events_sent = complete
            yield chunk
        self._finish()

    def _pause(self, index: int, complete: int, start: float) -> float:
        """How long to wait before handing over chunk ``index`` (pacing)."""
        pause = self.playback.delay if index else 0.0
        schedule = self.playback.schedule
        if schedule and complete:
            due = start + schedule[min(complete, len(schedule)) - 1]
            pause = max(pause, due - time.monotonic())
        return pause

    def _wait_sync(self, gate: Gate) -> None:
        gate.wait(self._wake)

    async def aiterate(self) -> AsyncIterator[bytes]:
        """Async delivery; cancellation while waiting or pacing counts as a hang-up."""
        pending: list[Gate] = []
        self._chunks = chunks = self._iter_chunks(pending.append)
        start = time.monotonic()
        try:
            i = 0
            while True:
                item = next(chunks, None)
                if pending:
                    await pending.pop().wait_async()
                if self.ended is not None:
                    return
                if item is None:
                    break
                pause = self._pause(i, item[1], start)
                if pause > 0:
                    await asyncio.sleep(pause)
                i += 1
                self.events_sent = item[1]
                yield item[0]
        except (asyncio.CancelledError, GeneratorExit):
            self.hang_up()
            raise
        self._finish()


_OUTCOME = {"complete": "completed", "cut": "cut", "timeout": "timeout"}


class TeeSink(Protocol):
    """Receives a live body as it passes: every chunk, then how it ended (once)."""

    def chunk(self, data: bytes) -> None: ...

    def end(self, how: str) -> None: ...


class Tee:
    """Passes a live body to the client unchanged, chunk by chunk, as it arrives,
    while a :class:`TeeSink` records it.

    The client never waits for the recording: each chunk is handed on as soon as the
    sink has seen it. How the body ended is reported once: ``complete``; ``cut`` /
    ``timeout`` (as ``classify`` names the exception, which is re-raised);
    ``cancelled`` when the client closes early; ``incomplete`` on ``KeyboardInterrupt``.
    """

    def __init__(self, inner: Any, sink: TeeSink, classify: Callable[[BaseException], str]) -> None:
        self.inner = inner
        self.sink = sink
        self.classify = classify
        self.ended = False

    def _end(self, how: str) -> None:
        if not self.ended:
            self.ended = True
            self.sink.end(how)

    def _failed(self, exc: BaseException) -> None:
        if isinstance(exc, KeyboardInterrupt):
            self._end("incomplete")
        elif isinstance(exc, (GeneratorExit, asyncio.CancelledError)):
            self._end("cancelled")
        else:
            self._end(self.classify(exc))

    def iterate(self) -> Iterator[bytes]:
        try:
            for data in self.inner:
                self.sink.chunk(data)
                yield data
        except BaseException as exc:
            self._failed(exc)
            raise
        self._end("complete")

    async def aiterate(self) -> AsyncIterator[bytes]:
        try:
            async for data in self.inner:
                self.sink.chunk(data)
                yield data
        except BaseException as exc:
            self._failed(exc)
            raise
        self._end("complete")

    def close(self) -> None:
        self._end("cancelled")
        self.inner.close()

    async def aclose(self) -> None:
        self._end("cancelled")
        await self.inner.aclose()
