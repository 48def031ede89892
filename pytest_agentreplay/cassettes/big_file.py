"""A big file the plugin wrote, loaded without its text.

Loading a file reads it whole, decodes it, splits it into lines, parses a dict per
stream event, builds the model, and writes the model again to check it gives back
the file's exact text: replaying a 50 MB stream held about seven times the body at
once (issue 18). Here a file beyond :data:`STREAMED_FROM` bytes that starts as the
canonical writer's files do is read by the canonical reader a block of lines at a
time, each event's line let go once the event is built, and the check compares the
writer's text with the file a piece at a time. Only the model is held. Anything else
(a hand edit, another tool's file, an error to explain) returns ``None``, and the
whole-text reader takes over.

Replay loads with ``lazy=True`` (issue 29): a stream's event lines are not read at all
on load. Each block of them is kept as the file's bytes in a
:class:`~.lazy_events.LazyEvents`, which builds (and checks) an event when replay
reaches it; the rest of the file (a stand-in line for each block) is read and checked
against the writer as before. Entering a 100,000-event cassette then costs reading its
bytes, not building and writing 100,000 events.
"""

from __future__ import annotations

import mmap
import os
import re
import stat
from pathlib import Path
from typing import Any

from .cassette import Cassette, Interaction, RecordedEvent, cassette_from_data
from .errors import CassetteValueError
from .fields import looks_canonical
from .lazy_events import LazyEvents, non_printable
from .reading import MAX_FILE_BYTES
from .yaml.emit import event_line, iter_interactions
from .yaml.errors import NotCanonicalError, UnstorableError
from .yaml.fast import read_canonical, read_canonical_file
from .yaml.layout import lays_out

__all__ = ["STREAMED_FROM", "built_event", "load_big"]

STREAMED_FROM = 1024 * 1024
"""Bytes: a file from this size on is loaded without its text."""


def load_big(path: str, *, lazy: bool = False) -> Cassette | None:
    """The cassette in the canonical file at ``path``, read a block at a time; ``None``
    for a small file, one the canonical reader does not read, or one whose text the
    writer does not give back exactly. ``lazy``: its streams' events are built when
    reached (see the module docstring)."""
    try:
        info = os.stat(path)
        regular = stat.S_ISREG(info.st_mode) and info.st_size <= MAX_FILE_BYTES
        if not regular or info.st_size < STREAMED_FROM or not _looks_canonical(Path(path)):
            return None  # the whole-file reader reads it, or says why it cannot
        if lazy:
            deferred = _load_deferred(path)
            if deferred is not None:
                return deferred
        data, proven = read_canonical_file(Path(path), event=built_event)
        cassette = cassette_from_data(data, json_checked=True)
        same = (proven and lays_out(cassette.interactions, cassette.version, data)) or (
            _writes_back(Path(path), cassette)
        )
    except (OSError, NotCanonicalError, CassetteValueError, UnstorableError, RecursionError):
        return None
    return cassette if same else None


def built_event(data: Any) -> RecordedEvent:
    """Each event built as it is read: no dict per event is held (checked as a file's
    events are, by the same constructor), and the canonical reader holds each event's
    line to the writer's line for the event."""
    return RecordedEvent._from_data(data)


def _looks_canonical(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(64)
        handle.seek(-64, os.SEEK_END)
        end = handle.read()
    return looks_canonical(head.decode("utf-8", "replace") + "\n" + end.decode("utf-8", "replace"))


def _writes_back(path: Path, cassette: Cassette) -> bool:
    """Whether the writer gives back the file's exact bytes, compared a piece at a time
    (for a file the reader could not prove so as it read it)."""
    with path.open("rb") as handle:
        for piece in iter_interactions(cassette.interactions, cassette.version):
            expected = piece.encode("utf-8")
            if handle.read(len(expected)) != expected:
                return False
        return handle.read(1) == b""


# --- streams kept as their lines (lazy=True) ------------------------------------------

_EVENTS_KEY = b"\n    events:\n"
_EVENT_START = b"    - {"
_BLOCK_END = re.compile(rb"\n(?!    - \{)")
_STAND_IN = RecordedEvent(data="deferred")
"""The event whose line stands in for a stream's lines while the rest is read."""


def _load_deferred(path: str) -> Cassette | None:
    """The cassette at ``path`` with each stream's events kept as the file's lines;
    ``None`` for a file with no stream, or one this reader does not read (the eager
    reader, then the whole-file reader, take over and explain any problem)."""
    with open(path, "rb") as handle:
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            if mapped.find(_EVENTS_KEY) < 0:
                return None  # no stream: nothing to defer (read without a copy)
        raw = handle.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES or b"\r" in raw or b"\t" in raw:
        return None
    parts: list[bytes] = []
    blocks: dict[int, LazyEvents] = {}
    stand_in = (event_line(_STAND_IN) + "\n").encode("utf-8")
    pos = line = skeleton_line = 0  # in the file; lines before pos; in the skeleton
    while (found := raw.find(_EVENTS_KEY, pos)) >= 0:
        start = found + len(_EVENTS_KEY)
        if not raw.startswith(_EVENT_START, start):
            parts.append(raw[pos:start])
            line += raw.count(b"\n", pos, start)
            skeleton_line += raw.count(b"\n", pos, start)
            pos = start
            continue
        end_match = _BLOCK_END.search(raw, start)
        end = len(raw) if end_match is None else end_match.start() + 1
        if raw[end - 1 : end] != b"\n" or not _printable(raw, start, end):
            return None
        before = raw.count(b"\n", pos, start)
        parts += (raw[pos:start], stand_in)
        line += before
        skeleton_line += before
        # The streams keep the file's bytes (no copy): the rest of it is small beside them.
        events = LazyEvents(raw, start, end, path=path, first_line=line + 1)
        blocks[skeleton_line] = events
        line += len(events)
        skeleton_line += 1
        pos = end
    if not blocks:
        return None
    parts.append(raw[pos:])
    if sum(map(len, parts)) > len(raw) // 2:  # mostly not streams: keep only their bytes
        for events in blocks.values():
            events.own_copy()
    del raw
    try:
        skeleton = b"".join(parts).decode("utf-8")
        del parts
        lazy = list(blocks.values())
        data = read_canonical(skeleton, event=built_event, deferred=blocks)
        cassette = cassette_from_data(data, json_checked=True)
        if not _placed(cassette, lazy):
            return None
        shown = [_standing_in(interaction) for interaction in cassette.interactions]
        written = "".join(iter_interactions(shown, cassette.version))
    except (
        UnicodeDecodeError,
        NotCanonicalError,
        CassetteValueError,
        UnstorableError,
        RecursionError,
    ):
        return None
    return cassette if written == skeleton else None


def _printable(raw: bytes, start: int, end: int) -> bool:
    """Whether YAML reads every character of the lines ``raw[start:end]``, about a
    megabyte of lines at a time (ASCII: replay's line reader checks the control
    characters of each line)."""
    at = start
    while at < end:
        cut = raw.find(b"\n", min(at + (1 << 20), end) - 1, end) + 1 or end
        piece = raw[at:cut]
        if not piece.isascii():
            try:
                if non_printable().search(piece.decode("utf-8")) is not None:
                    return False
            except UnicodeDecodeError:
                return False
        at = cut
    return True


def _placed(cassette: Cassette, lazy: list[LazyEvents]) -> bool:
    """Whether each block became a response's events (a stand-in anywhere else, such as
    an ``events`` key of an imported interaction's origin, sends the file the eager
    way), each told where it is for its errors."""
    placed = 0
    for n, interaction in enumerate(cassette.interactions):
        events = interaction.response.events
        if isinstance(events, LazyEvents):
            events.where = f"interactions[{n}].response.events"
            placed += 1
    return placed == len(lazy) == len({id(events) for events in lazy})


def _standing_in(interaction: Interaction) -> Interaction:
    """The interaction as the skeleton shows it: a stream's events as the stand-in line."""
    response = interaction.response
    if not isinstance(response.events, LazyEvents):
        return interaction
    return Interaction(
        request=interaction.request,
        response=response.replace(events=[_STAND_IN]),
        origin=interaction.origin,
    )
