"""Delivering a :class:`~.playback.Playback` to one client, chunk by chunk.

A :class:`Delivery` runs a playback for one client — sync or async — handing each
chunk over as it is produced, so the time to the first event does not depend on
the length of the stream. It waits at the playback's gates, paces chunks, and
notices a client that closes the response early (``break`` out of the loop, task
cancellation, interrupt). Every call's ending is reported exactly once through
``Playback.on_end``; a body that ends ``cut`` or ``timeout`` raises, after its
last chunk, what a real connection failure raises in the client's module family
(:class:`FaultRaiser`, which :class:`~.family.Family` is).
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_right
from collections.abc import AsyncIterator, Callable, Iterator
from itertools import count, islice
from typing import Protocol

from .chunking import Chunking, is_per_event
from .gate import Gate
from .playback import Playback

__all__ = ["ENDING", "Delivery", "FaultRaiser"]


class FaultRaiser(Protocol):
    """Raises what a real connection failure raises in the client's module family."""

    def cut(self) -> BaseException: ...

    def timeout(self) -> BaseException: ...


class Delivery:
    """Plays one :class:`~.playback.Playback` to one client, sync or async.

    ``close()`` is what the client calls when it is done with the response. If the
    body was not read to its end, the call was hung up on (``cancelled``) — unless
    nothing was left to send (OpenAI clients stop at ``[DONE]`` and close without
    reading the end of the body; an MCP client never reads the empty body of a
    ``202``), which still counts as the body's own ending.
    """

    def __init__(self, playback: Playback, faults: FaultRaiser) -> None:
        self.playback = playback
        self.faults = faults
        self.events_sent = 0
        self.ended: str | None = None
        # what a hang-up sets to stop a wait at a gate: a body without gates never waits
        # (an Event is most of what a Delivery costs to build: bench/ W5)
        self._wake = threading.Event() if playback.gates else None
        self._closing = False
        self._chunks: Iterator[tuple[bytes, int]] | None = None

    def end(self, outcome: str) -> None:
        """Record how the call ended; only the first ending counts."""
        with ENDING:
            if self.ended is not None:
                return
            self.ended = outcome
        self.playback.ended(outcome, self.events_sent)

    def hang_up(self) -> None:
        """The client went away mid-body: an unfinished call becomes ``cancelled``."""
        self._stop_waiting()
        self.end("cancelled")

    def _stop_waiting(self) -> None:
        self._closing = True
        if self._wake is not None:
            self._wake.set()

    def wake(self) -> None:
        """Stop waiting at gates now, without ending the call: the caller noticed the
        client may be gone and decides at its next write (the port server, which must
        not count a client that read every byte as hung up)."""
        self._stop_waiting()

    def close(self) -> None:
        """The client closed the response (normally or early)."""
        if self.ended is not None:
            return
        self._stop_waiting()
        chunks = self._chunks
        if chunks is None:  # never read: hung up on, unless there was nothing to read
            empty = isinstance(self.playback.events, list) and not self.playback.events
            self.end(_OUTCOME[self.playback.ending] if empty else "cancelled")
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
        if pb.gates or not (pb.chunker is Chunking.PER_EVENT or is_per_event(pb.chunker)):
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
        """Whether chunks go out at a pace (a delay, recorded timing), not when asked."""
        return bool(self.playback.delay or self.playback.schedule)

    @property
    def ready_at_once(self) -> bool:
        """Whether each chunk is there as soon as it is asked for: no gate to wait at,
        no recorded timing to keep, no live response to wait for."""
        pb = self.playback
        return not pb.gates and not self._paced and not pb.arriving

    def iterate(self) -> Iterator[bytes]:
        """Sync delivery, in the client's thread. An event that cannot be sent (a bad
        line deep in a cassette's stream, read as replay reaches it) ends the call
        ``cut`` after the events before it, and its error reaches the client."""
        self._chunks = chunks = self._iter_chunks(self._wait_sync)
        try:
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
        except Exception:
            self.end("cut")  # the first ending counts: a fault already logged stays
            raise

    def _pause(self, index: int, complete: int, start: float) -> float:
        """How long to wait before handing over chunk ``index`` (pacing)."""
        pause = self.playback.delay if index else 0.0
        schedule = self.playback.schedule
        if schedule and complete:
            due = start + schedule[min(complete, len(schedule)) - 1]
            pause = max(pause, due - time.monotonic())
        return pause

    def _wait_sync(self, gate: Gate) -> None:
        wake = self._wake  # made with the delivery when its playback had gates then
        if wake is None:  # gates given to the playback later
            wake = self._wake = threading.Event()
            if self._closing:  # a hang-up that came before the event: it found none to set
                wake.set()
        gate.wait(wake)

    async def aiterate(self) -> AsyncIterator[bytes]:
        """Async delivery; cancellation while waiting or pacing counts as a hang-up."""
        # Imported here: a suite of sync tests never loads asyncio (bench/ W4); an
        # async client runs in an event loop, which loaded it already.
        import asyncio  # noqa: PLC0415

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
        except Exception:
            self.end("cut")  # as in iterate(): an event that cannot be sent
            raise
        self._finish()


_OUTCOME = {"complete": "completed", "cut": "cut", "timeout": "timeout"}

ENDING = threading.Lock()
"""Makes a body's first ending the one that counts (:meth:`Delivery.end`, and
:class:`~.family.WholeBody`'s ``take`` and ``close``). One for every body: a call ends
once, its callback runs outside it, and a lock made for each body was made on every
call (bench/ W5)."""
