"""A big stream's events, built when replay reaches them (issue 29).

Entering a cassette that holds a 100,000-event stream built 100,000 event objects
and wrote them all again to check the file (about half a second; vcrpy, which keeps
a stream as one string, took a tenth). :func:`~.big_file.load_big` now keeps a
stream's event lines as the file's own bytes in a :class:`LazyEvents`: a read-only
list of :class:`~.cassette.RecordedEvent` for every reader (``len``, indexing,
slices, iteration, ``==``), which builds an event the first time it is asked for
and keeps it (a scrubber or a test may edit it: the edit stays). Replay asks for
neither: :meth:`LazyEvents.plain_batches` hands the transport the wire bytes of the
usual lines (a time, a name, single-quoted data) rewritten from the file's bytes by
one regular expression substitution per batch of lines, in C.

Each line is checked when it is reached, by the same strict match that reads it, or
else by the canonical reader plus the writer (the line must come back exactly),
or else by the safe YAML loader, one line at a time: what the line holds is what
loading the whole file would have built. A line none of them reads raises
:class:`~..errors.CassetteFormatError` naming the file and the line at that moment:
the stream never ends early and quietly (see docs/cassettes.md, "Big streams").
Every other reader (the CLI, a write) loads eagerly: such a line fails its load.
"""

from __future__ import annotations

import functools
import re
import sys
from bisect import bisect_left
from collections.abc import Generator, Iterable, Iterator, MutableSequence
from itertools import accumulate
from typing import Any, overload

from ..errors import CassetteFormatError, field_path
from ..transport.encode import plain_bytes
from .cassette import DeferredEvents, RecordedEvent
from .errors import CassetteValueError
from .yaml.emit import event_line
from .yaml.errors import NotCanonicalError
from .yaml.fast import read_event

__all__ = ["LazyEvents", "non_printable"]

# The usual line of a recording, in the writer's layout: a time, maybe a name, and
# single-quoted data, nothing YAML could read another way. A name that YAML 1.1 would
# read as a bool or null is quoted by the writer, so such a line takes the general path;
# data holds no control character (a non-ASCII block is checked whole, on load); the
# time is finite (an exponent of at most two digits up).
_TIME = rb"t: ([0-9]+\.[0-9]*(?:e-[0-9]{1,3}|e\+[0-9]{1,2})?), "
_NAME = (
    rb"event: (?!(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE"
    rb"|on|On|ON|off|Off|OFF|null|Null|NULL|y|Y|n|N),)([A-Za-z_][A-Za-z0-9_]*), "
)
_DATA = rb"data: '([^'\x00-\x1f\x7f]*(?:''[^'\x00-\x1f\x7f]*)*)'\}\n"
_FAST = re.compile(rb"    - \{" + _TIME + rb"(?:" + _NAME + rb")?" + _DATA)
# The same, read a batch of lines at a time (``findall``, in C), with the name and the
# data only, for data without a quote (a batch is checked whole for control bytes).
_T = rb"t: [0-9]+\.[0-9]*(?:e-[0-9]{1,3}|e\+[0-9]{1,2})?, "
_REST = rb"data: '([^']*)'\}(?=\n)"
_CONTROL = bytes(range(32)).replace(b"\n", b"") + b"\x7f"
# A match starts at the newline before its line (a batch starts with one) and ends at
# the line's end: so as many matches as lines is every line read whole.
# (`` {4}``, not four literal spaces: the search for a match then looks for the newline
# alone, and the name is checked per batch against YAML's words, not per line.)
_NAMED = re.compile(rb"\n {4}- \{" + _T + rb"event: ([A-Za-z_][A-Za-z0-9_]*), " + _REST)
_UNNAMED = re.compile(rb"\n {4}- \{" + _T + _REST)
_YAML_WORDS = frozenset(
    b"yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF "
    b"null Null NULL y Y n N".split()
)
_BATCH_BYTES = 16 * 1024
"""About how much of a stream's lines is encoded at a time (time to first event)."""


@functools.cache
def non_printable() -> re.Pattern[str]:
    """What YAML refuses in a file (PyYAML's reader): a non-ASCII block holding one of
    these is not kept lazily, so the whole-file reader reports it on load. Compiled when
    a non-ASCII block is first met: the class spans most of Unicode, and compiling it
    was 3 ms of every run's first replayed test, though few runs meet one (issue 29)."""
    return re.compile("[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _wire(batch: bytes, lines: int) -> list[bytes] | None:
    """The wire bytes of each of the ``lines`` lines of ``batch`` (a newline, then whole
    lines), as :func:`~..transport.encode._plain` writes an event with one data line;
    ``None`` unless every line is a usual one with no quote in its data (see ``_FAST``;
    the others are read one by one)."""
    if len(batch.translate(None, _CONTROL)) != len(batch) or b"data: ''}" in batch:
        return None
    named: list[tuple[bytes, bytes]] = _NAMED.findall(batch)
    if len(named) == lines:
        if not _YAML_WORDS.isdisjoint({name for name, _ in named}):
            return None
        return [b"event: %b\ndata: %b\n\n" % pair for pair in named]
    unnamed: list[bytes] = _UNNAMED.findall(batch)
    if len(unnamed) == lines:
        return [b"data: %b\n\n" % data for data in unnamed]
    return None


class LazyEvents(DeferredEvents, MutableSequence[RecordedEvent]):
    """The events of one stream, kept as the file's lines (see the module docstring).

    ``source[start:end]`` is the stream's event lines as the file holds them (each
    ends with a newline; ``source`` may be the whole file, shared by its streams);
    ``first_line`` is the file's 1-based number of the first; ``where`` is the field
    path of the event list (``interactions[3].response.events``), for errors.
    Changing the list (not an event) turns it into a plain list inside first.
    """

    __slots__ = (
        "_built",
        "_count",
        "_end",
        "_plain",
        "_source",
        "_start",
        "_starts",
        "first_line",
        "path",
        "where",
    )

    def __init__(
        self,
        source: bytes,
        start: int = 0,
        end: int | None = None,
        *,
        path: str,
        first_line: int,
        where: str = "",
        count: int | None = None,
    ) -> None:
        """``count``: the number of lines, when known (else counted)."""
        self._source, self._start = source, start
        self._end = len(source) if end is None else end
        self._built: dict[int, RecordedEvent] = {}  # what was asked for, kept
        self._starts: list[int] | None = None  # where each line starts, when first needed
        self._plain: list[RecordedEvent] | None = None  # once the list itself changed
        self._count = source.count(b"\n", start, self._end) if count is None else count
        self.path = path
        self.first_line = first_line
        self.where = where

    # --- what replay reads ---------------------------------------------------------

    def plain_batches(self) -> Generator[list[bytes], None, Iterable[RecordedEvent]]:
        """The wire bytes (``event: …\\ndata: …\\n\\n``) of the stream's events, a batch
        at a time, from the first, while each is a usual line not built yet (a built
        event may have been edited) or an event
        :func:`~..transport.encode.plain_bytes` writes; returns the rest (from an event
        with an id, or any the encoder must write), built when reached, for the encoder."""
        if self._plain is not None:
            return self
        source, count, size = self._source, self._count, self._end
        built = sorted(self._built)  # the events asked for before: these are played
        pos, done = self._start, 0
        while pos < size:
            cut = source.find(b"\n", min(pos + _BATCH_BYTES, size - 1)) + 1
            lines = source.count(b"\n", pos, cut)
            edited = built and bisect_left(built, done) < bisect_left(built, done + lines)
            pieces = None if edited else _wire(b"\n" + source[pos:cut], lines)
            if pieces is None:  # line by line: a built one, or a line of another kind
                for index in range(done, done + lines):
                    piece = self._plain_line(index)  # (a bad line raises, after the ones
                    if piece is None:  # before it were sent)
                        return self._rest(index)
                    yield [piece]
            else:
                yield pieces
            pos, done = cut, done + lines
        return self._rest(count)

    def _plain_line(self, index: int) -> bytes | None:
        """The wire bytes of event ``index`` alone, or ``None`` if the encoder must write it."""
        event = self._built.get(index)
        if event is None:
            line = self._line(index)
            pieces = _wire(b"\n" + line + b"\n", 1)
            if pieces is not None:
                return pieces[0]
            event = self._event(index)
        return plain_bytes(event)

    def _rest(self, start: int) -> Iterator[RecordedEvent]:
        for index in range(start, len(self)):
            yield self[index]

    def copy(self) -> LazyEvents:
        """Another list of the same events: the file's bytes and the events built so far
        shared, the list itself not (editing one list leaves the other as it was)."""
        other = LazyEvents(
            self._source,
            self._start,
            self._end,
            path=self.path,
            first_line=self.first_line,
            where=self.where,
            count=self._count,
        )
        other._built = dict(self._built)
        other._starts = self._starts
        other._plain = None if self._plain is None else list(self._plain)
        return other

    def own_copy(self) -> None:
        """Keep a copy of the stream's own bytes, not the whole file they came from."""
        if self._plain is None and (self._start or self._end != len(self._source)):
            self._source = self._source[self._start : self._end]
            self._start, self._end, self._starts = 0, len(self._source), None

    # --- the list ------------------------------------------------------------------

    def __len__(self) -> int:
        return self._count if self._plain is None else len(self._plain)

    @overload
    def __getitem__(self, index: int) -> RecordedEvent: ...

    @overload
    def __getitem__(self, index: slice) -> list[RecordedEvent]: ...

    def __getitem__(self, index: int | slice) -> RecordedEvent | list[RecordedEvent]:
        if self._plain is not None:
            return self._plain[index]
        if isinstance(index, slice):
            return [self._event(i) for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("event index out of range")
        return self._event(index)

    def __iter__(self) -> Iterator[RecordedEvent]:
        if self._plain is not None:
            yield from self._plain
            return
        source, built, pos = self._source, self._built, self._start
        for index in range(self._count):
            end = source.index(b"\n", pos)
            event = built.get(index)
            if event is None:
                event = built[index] = self._read(source[pos:end], index)
            yield event
            pos = end + 1

    @overload
    def __setitem__(self, index: int, value: RecordedEvent) -> None: ...

    @overload
    def __setitem__(self, index: slice, value: Iterable[RecordedEvent]) -> None: ...

    def __setitem__(self, index: int | slice, value: Any) -> None:
        self._materialized()[index] = value

    def __delitem__(self, index: int | slice) -> None:
        del self._materialized()[index]

    def insert(self, index: int, value: RecordedEvent) -> None:
        self._materialized().insert(index, value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, LazyEvents)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a list: compared by value

    def __repr__(self) -> str:
        return f"<{self._count} events of {self.path}, line {self.first_line} on>"

    def _materialized(self) -> list[RecordedEvent]:
        """The events as a plain list, which every later access uses (the list changed)."""
        if self._plain is None:
            self._plain = list(self)
            self._source, self._start, self._end = b"", 0, 0
            self._built, self._starts = {}, None
        return self._plain

    # --- building one ----------------------------------------------------------------

    def _event(self, index: int) -> RecordedEvent:
        event = self._built.get(index)
        if event is None:
            event = self._built[index] = self._read(self._line(index), index)
        return event

    def _line(self, index: int) -> bytes:
        """Line ``index`` of the block (no newline): the first and the last are found
        directly, any other through the lines' offsets (computed once)."""
        source, first, end = self._source, self._start, self._end
        if index == self._count - 1:
            before = source.rfind(b"\n", first, end - 1)
            return source[first if before < 0 else before + 1 : end - 1]
        if index == 0:
            return source[first : source.index(b"\n", first)]
        if self._starts is None:
            lines = source[first:end].split(b"\n")
            self._starts = list(accumulate((len(line) + 1 for line in lines), initial=first))
        start = self._starts[index]
        return source[start : self._starts[index + 1] - 1]

    def _read(self, raw: bytes, index: int) -> RecordedEvent:
        """The event on line ``index`` of the block, read as the whole file would be."""
        found = _FAST.fullmatch(raw + b"\n")
        try:
            if found is not None:
                t, name, data = found.groups()
                return RecordedEvent(
                    data=data.decode("utf-8").replace("''", "'"),
                    event=None if name is None else sys.intern(name.decode("ascii")),
                    t=float(t),
                )
            return self._general(raw.decode("utf-8"), index)
        except CassetteValueError as exc:
            raise self._error(exc.problem, index, field_path(exc.loc)) from None

    def _general(self, line: str, index: int) -> RecordedEvent:
        """Any other line: the canonical reader's event if the writer gives the line back,
        else the safe YAML loader's (a hand edit the canonical reader does not read)."""
        try:
            event = RecordedEvent._from_data(read_event(line[6:]))
            if event_line(event) == line:
                return event
        except NotCanonicalError:
            pass
        from .yaml.load import load_yaml  # noqa: PLC0415 - PyYAML only for an odd line

        try:
            data = load_yaml(line, self.path)
        except CassetteFormatError as exc:
            raise self._error(exc.problem, index) from None
        if not isinstance(data, list) or len(data) != 1:
            raise self._error("not one event on its line", index)
        return RecordedEvent._from_data(data[0])

    def _error(self, problem: str, index: int, field: str = "") -> CassetteFormatError:
        where = f"{self.where}[{index}]" if self.where else f"events[{index}]"
        return CassetteFormatError(
            f"event {index} of this stream cannot be read ({problem})",
            path=self.path,
            line=self.first_line + index,
            field=f"{where}.{field}" if field else where,
            hint="Fix the line, or re-record the cassette; `agentreplay lint` checks every "
            "line of a file ahead of a test.",
        )
