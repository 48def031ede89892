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
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from .cassette import Cassette, RecordedEvent, cassette_from_data
from .errors import CassetteValueError
from .fields import looks_canonical
from .reading import MAX_FILE_BYTES
from .yaml.emit import iter_interactions
from .yaml.errors import NotCanonicalError, UnstorableError
from .yaml.fast import read_canonical_file

__all__ = ["STREAMED_FROM", "load_big"]

STREAMED_FROM = 1024 * 1024
"""Bytes: a file from this size on is loaded without its text."""


def load_big(path: str) -> Cassette | None:
    """The cassette in the canonical file at ``path``, read a block at a time; ``None``
    for a small file, one the canonical reader does not read, or one whose text the
    writer does not give back exactly."""
    try:
        info = os.stat(path)
        regular = stat.S_ISREG(info.st_mode) and info.st_size <= MAX_FILE_BYTES
        if not regular or info.st_size < STREAMED_FROM or not _looks_canonical(Path(path)):
            return None  # the whole-file reader reads it, or says why it cannot
        data = read_canonical_file(Path(path), event=_event)
        cassette = cassette_from_data(data, json_checked=True)
        same = _writes_back(Path(path), cassette)
    except (OSError, NotCanonicalError, CassetteValueError, UnstorableError, RecursionError):
        return None
    return cassette if same else None


def _event(data: Any) -> RecordedEvent:
    """Each event built as it is read: no dict per event is held (checked as a file's
    events are, by the same constructor)."""
    return RecordedEvent._from_data(data)


def _looks_canonical(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(64)
        handle.seek(-64, os.SEEK_END)
        end = handle.read()
    return looks_canonical(head.decode("utf-8", "replace") + "\n" + end.decode("utf-8", "replace"))


def _writes_back(path: Path, cassette: Cassette) -> bool:
    """Whether the writer gives back the file's exact bytes, compared a piece at a time."""
    with path.open("rb") as handle:
        for piece in iter_interactions(cassette.interactions, cassette.version):
            expected = piece.encode("utf-8")
            if handle.read(len(expected)) != expected:
                return False
        return handle.read(1) == b""
