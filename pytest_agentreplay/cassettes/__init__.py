"""Cassettes: the recorded interactions of a test, on disk and in memory.

``load`` / ``loads`` read a cassette in any supported format (``from_data`` builds
one from parsed data, ``from_replies`` from replies), ``save`` scrubs and writes
one atomically, ``locked`` guards a read-merge-write cycle; ``Cassette``,
``Interaction``, ``RecordedRequest``, ``RecordedResponse`` and ``RecordedEvent``
are what a cassette holds, and a bad value in them is a ``CassetteValueError``.
Names load on first use: replaying a cassette imports only what replay needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..errors import CassetteFormatError
    from .build import from_replies
    from .cassette import Cassette, Interaction, RecordedEvent, RecordedRequest, RecordedResponse
    from .checks import CassetteValueError
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

_LAZY = {
    "CassetteFormatError": "..errors",
    "CassetteValueError": ".checks",
    "detect_format": ".io",
    "dumps": ".io",
    "from_data": ".io",
    "from_replies": ".build",
    "load": ".io",
    "loads": ".io",
    "locked": ".io",
    "save": ".io",
    "Cassette": ".cassette",
    "Interaction": ".cassette",
    "RecordedEvent": ".cassette",
    "RecordedRequest": ".cassette",
    "RecordedResponse": ".cassette",
}


def __getattr__(name: str) -> Any:
    # Not cached here: the plugin imports this package at start-up (for the record
    # modes), and a name cached from a submodule that a test run later drops and
    # imports again (pytester in-process runs do) would be a stale second class.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)


def __dir__() -> list[str]:
    return sorted(__all__)
