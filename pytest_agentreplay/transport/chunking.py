"""Where a response body is cut into network chunks: one :class:`Chunking` class.

A chunking turns the stream of encoded events into the chunks a client reads. The
presets are what users name (``FakeModel(chunking=...)``, the cassette settings'
``chunking``, ``assert_stream_parity(chunkings=...)``): one chunk per event (what
a provider's server flushes), the whole body at once (how vcrpy and respx replay a
stream), one line a chunk, fixed byte sizes, seeded random sizes. On top of those
it cuts where decoders break — between the CR and the LF of a CRLF, inside a
multi-byte UTF-8 character — which is what :func:`..strategies.chunkings`
generates. :func:`resolve_chunking` turns every spelling a user may pass into a
:data:`Chunker`.

It imports no hypothesis, so a falsifying example's repr can be pasted into a
test as it is.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import cycle
from typing import ClassVar, Literal

__all__ = ["Chunker", "Chunking", "ChunkingSpec", "is_per_event", "resolve_chunking"]

Chunker = Callable[[Iterator[bytes]], Iterator[bytes]]
"""A chunking policy: turns the stream of encoded events into network chunks."""

ChunkingSpec = Literal["event", "whole", "lines"] | int | Chunker
"""What a user may pass: a preset's name, a byte size, a :class:`Chunking` or any
:data:`Chunker` function."""


@dataclass(frozen=True)
class Chunking:
    """Where to cut a byte stream into network chunks.

    ``sizes`` are chunk sizes in bytes, used in turn and repeated (``()``: no cut
    by size); with a ``seed``, each size is instead drawn at random (reproducibly,
    from that seed) between 1 and the largest of ``sizes``. On top of those:
    ``events`` also cuts at every event boundary, ``lines`` after every line end
    (LF, CR or CRLF), ``crlf`` between the CR and the LF of every CRLF, ``utf8``
    right after the first byte of every multi-byte UTF-8 character (a BOM
    included). With nothing set, the whole stream is one chunk.

    Cuts are made as bytes arrive: a chunk is handed over as soon as its end is
    known, so a chunking never holds back more than it must.
    """

    sizes: tuple[int, ...] = ()
    events: bool = False
    crlf: bool = False
    utf8: bool = False
    lines: bool = False
    seed: int | None = None

    PER_EVENT: ClassVar[Chunking]
    """One chunk per event: what a provider's server usually flushes (the default)."""
    WHOLE: ClassVar[Chunking]
    """The whole body as one chunk: how vcrpy and respx replay a stream (nothing for an
    empty body: a zero-length chunk would read as the end of the stream)."""
    PER_LINE: ClassVar[Chunking]
    """One chunk per line, line end included."""

    def __post_init__(self) -> None:
        if any(size < 1 for size in self.sizes):
            raise ValueError(f"chunk sizes must be >= 1, got {self.sizes}")
        if self.seed is not None and not self.sizes:
            raise ValueError("random chunk sizes (a seed) need a largest size in `sizes`")

    @classmethod
    def sized(cls, size: int) -> Chunking:
        """Chunks of ``size`` bytes, cutting through events, lines, CRLF and UTF-8."""
        return cls(sizes=(size,))

    @classmethod
    def random(cls, seed: int = 0, max_size: int = 64) -> Chunking:
        """Chunks of random sizes (1 to ``max_size``) drawn from ``seed``: reproducible."""
        return cls(sizes=(max_size,), seed=seed)

    def __call__(self, events: Iterator[bytes]) -> Iterator[bytes]:
        return _Cutter(self).run(events)

    def split(self, data: bytes) -> list[bytes]:
        """``data`` cut into chunks: ``b"".join(chunking.split(data)) == data``."""
        return list(self(iter([data])))


Chunking.PER_EVENT = Chunking(events=True)
Chunking.WHOLE = Chunking()
Chunking.PER_LINE = Chunking(events=True, lines=True)

_PRESETS: dict[str, Chunking] = {
    "event": Chunking.PER_EVENT,
    "whole": Chunking.WHOLE,
    "lines": Chunking.PER_LINE,
}


def resolve_chunking(spec: ChunkingSpec) -> Chunker:
    """A chunker from ``"event"``, ``"whole"``, ``"lines"``, a byte size, a
    :class:`Chunking` or any chunker function."""
    if callable(spec):
        return spec
    if isinstance(spec, int) and not isinstance(spec, bool):
        return Chunking.sized(spec)
    preset = _PRESETS.get(spec) if isinstance(spec, str) else None
    if preset is None:
        raise ValueError(
            f"unknown chunking {spec!r}: use 'event', 'whole', 'lines', a byte size or a callable"
        )
    return preset


def is_per_event(chunker: Chunker) -> bool:
    """Whether ``chunker`` hands over each event as it is: delivery then skips the
    chunking machinery (see :class:`~.delivery.Delivery`)."""
    return chunker is Chunking.PER_EVENT or chunker == Chunking.PER_EVENT


def _sizes(chunking: Chunking) -> Iterator[int]:
    """The chunk sizes of one run, in order (endless; empty without ``sizes``)."""
    if chunking.seed is None:
        return cycle(chunking.sizes)
    rng, largest = random.Random(chunking.seed), max(chunking.sizes)
    return iter(lambda: rng.randint(1, largest), 0)


class _Cutter:
    """The state of one chunking run: a buffer, its absolute offset, pending cuts."""

    def __init__(self, chunking: Chunking) -> None:
        self.chunking = chunking
        self.buffer = bytearray()
        self.base = 0  # absolute offset of buffer[0]
        self.scanned = 0  # absolute offset up to which CRLF / UTF-8 / line ends were looked for
        self.cuts: set[int] = set()
        self.sizes = _sizes(chunking)
        self.next_size = 0
        self._advance_size()

    def _advance_size(self) -> None:
        self.next_size += next(self.sizes, 0)

    def run(self, events: Iterator[bytes]) -> Iterator[bytes]:
        for event in events:
            if not event:
                continue
            self.buffer += event
            end = self.base + len(self.buffer)
            self._find_cuts(end)
            if self.chunking.events:
                self.cuts.add(end)
            yield from self._emit(end)
        if self.buffer:
            yield bytes(self.buffer)

    def _find_cuts(self, end: int) -> None:
        chunking = self.chunking
        while chunking.sizes and self.next_size <= end:
            self.cuts.add(self.next_size)
            self._advance_size()
        if chunking.crlf or chunking.utf8 or chunking.lines:
            self._scan(end)

    def _scan(self, end: int) -> None:
        """Look for CRLFs, UTF-8 lead bytes and line ends in the bytes not seen yet."""
        chunking, buffer, base = self.chunking, self.buffer, self.base
        for at in range(max(self.scanned, base), end):
            byte = buffer[at - base]
            if chunking.utf8 and byte >= 0xC0:
                self.cuts.add(at + 1)
            if byte == 0x0A and chunking.lines:
                self.cuts.add(at + 1)
            elif byte == 0x0D and at + 1 < end:
                crlf = buffer[at + 1 - base] == 0x0A
                if (chunking.crlf and crlf) or (chunking.lines and not crlf):
                    self.cuts.add(at + 1)
        # A CR at the very end may yet be followed by an LF: look at it again.
        last_cr = (chunking.crlf or chunking.lines) and buffer[-1] == 0x0D
        self.scanned = end - 1 if last_cr else end

    def _emit(self, end: int) -> Iterator[bytes]:
        ready = sorted(cut for cut in self.cuts if self.base < cut <= end)
        for cut in ready:
            size = cut - self.base
            chunk = bytes(self.buffer[:size])
            del self.buffer[:size]
            self.base = cut
            yield chunk
        self.cuts = {cut for cut in self.cuts if cut > end}
