"""A chunker that cuts a byte stream where decoders break: inside CRLF, inside UTF-8.

:class:`Chunking` is what :func:`..strategies.chunkings`
generates. It is a :data:`~.playback.Chunker` (a callable from
the encoded events to network chunks), so it plugs into
``FakeModel(chunking=...)``, ``fake.chunker = ...`` and the cassette settings'
``chunking``. It imports no hypothesis, so a falsifying example's repr can be
pasted into a test as it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Chunking"]


@dataclass(frozen=True)
class Chunking:
    """Where to cut a byte stream into network chunks.

    ``sizes`` are chunk sizes in bytes, used in turn and repeated (``()``: no cut
    by size). On top of those: ``events`` also cuts at every event boundary,
    ``crlf`` between the CR and the LF of every CRLF, ``utf8`` right after the
    first byte of every multi-byte UTF-8 character (a BOM included). With
    nothing set, the whole stream is one chunk.

    Cuts are made as bytes arrive: a chunk is handed over as soon as its end is
    known, so a chunking never holds back more than it must.
    """

    sizes: tuple[int, ...] = ()
    events: bool = False
    crlf: bool = False
    utf8: bool = False

    def __post_init__(self) -> None:
        if any(size < 1 for size in self.sizes):
            raise ValueError(f"chunk sizes must be >= 1, got {self.sizes}")

    def __call__(self, events: Iterator[bytes]) -> Iterator[bytes]:
        return _Cutter(self).run(events)

    def split(self, data: bytes) -> list[bytes]:
        """``data`` cut into chunks: ``b"".join(chunking.split(data)) == data``."""
        return list(self(iter([data])))


class _Cutter:
    """The state of one chunking run: a buffer, its absolute offset, pending cuts."""

    def __init__(self, chunking: Chunking) -> None:
        self.chunking = chunking
        self.buffer = bytearray()
        self.base = 0  # absolute offset of buffer[0]
        self.scanned = 0  # absolute offset up to which CRLF / UTF-8 were looked for
        self.cuts: set[int] = set()
        self.next_size = 0
        self.size_index = 0
        self._advance_size()

    def _advance_size(self) -> None:
        sizes = self.chunking.sizes
        if sizes:
            self.next_size += sizes[self.size_index % len(sizes)]
            self.size_index += 1

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
        if not (chunking.crlf or chunking.utf8):
            return
        buffer, base = self.buffer, self.base
        for at in range(max(self.scanned, base), end):
            byte = buffer[at - base]
            if chunking.utf8 and byte >= 0xC0:
                self.cuts.add(at + 1)
            if chunking.crlf and byte == 0x0D and at + 1 < end and buffer[at + 1 - base] == 0x0A:
                self.cuts.add(at + 1)
        # A CR at the very end may yet be followed by an LF: look at it again.
        self.scanned = end - 1 if chunking.crlf and buffer[-1] == 0x0D else end

    def _emit(self, end: int) -> Iterator[bytes]:
        ready = sorted(cut for cut in self.cuts if self.base < cut <= end)
        for cut in ready:
            size = cut - self.base
            chunk = bytes(self.buffer[:size])
            del self.buffer[:size]
            self.base = cut
            yield chunk
        self.cuts = {cut for cut in self.cuts if cut > end}
