"""Cassettes: the recorded interactions of a test, on disk and in memory.

``load`` / ``loads`` read a cassette in any supported format (``from_data`` builds
one from parsed data, ``from_replies`` from replies), ``save`` scrubs and writes
one atomically, ``locked`` guards a read-merge-write cycle; ``Cassette``,
``Interaction``, ``RecordedRequest``, ``RecordedResponse`` and ``RecordedEvent``
are what a cassette holds, and a bad value in them is a ``CassetteValueError``.
Names load on first use: replaying a cassette imports only what replay needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ..errors import CassetteFormatError
    from .build import from_replies
    from .cassette import Cassette, Interaction, RecordedEvent, RecordedRequest, RecordedResponse
    from .errors import CassetteValueError
    from .io import detect_format, dumps, from_data, load, loads, locked, save

__all__ = [
    "Cassette",
    "CassetteFormatError",
    "CassetteValueError",
    "Interaction",
    "RecordedEvent",
    "RecordedRequest",
    "RecordedResponse",
    "detect_format",
    "dumps",
    "from_data",
    "from_replies",
    "load",
    "loads",
    "locked",
    "save",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "..errors": ("CassetteFormatError",),
            ".build": ("from_replies",),
            ".errors": ("CassetteValueError",),
            ".io": ("detect_format", "dumps", "from_data", "load", "loads", "locked", "save"),
            ".cassette": (
                "Cassette",
                "Interaction",
                "RecordedEvent",
                "RecordedRequest",
                "RecordedResponse",
            ),
        },
    )
