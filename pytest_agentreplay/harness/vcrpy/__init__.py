"""vcrpy compatibility, pytest side: what a pytest-recording suite brings along.

The cassette side (vcrpy's file format, the bridge for non-httpx clients, vcrpy's
filters) is :mod:`pytest_agentreplay.cassettes.formats.vcrpy`; this folder is what
the plugin adds to a test for it, and the rest of the plugin asks the names
re-exported here:

* :mod:`.config`: vcrpy's ``VCR()`` keys in ``agentreplay_config`` and the marker
  (a renamed ``vcr_config``), each mapped to what does the same here or refused
  with what to do instead;
* :mod:`.scope`: what they add to a test's cassette scope (vcrpy's filters, and the
  bridge when it is wanted);
* :mod:`.fixture`: pytest-recording's ``vcr`` fixture, answered from the
  ``agentreplay`` handle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

if TYPE_CHECKING:
    from .config import FILTER_KEYS, REFUSED, VCRPY_KEYS, VcrOptions, record_mode_value, split
    from .fixture import VcrBesidePytestRecording, VcrCassette, VcrFixture, VcrRequest
    from .scope import bridge_for, filters_for

__all__ = [
    "FILTER_KEYS",
    "REFUSED",
    "VCRPY_KEYS",
    "VcrBesidePytestRecording",
    "VcrCassette",
    "VcrFixture",
    "VcrOptions",
    "VcrRequest",
    "bridge_for",
    "filters_for",
    "record_mode_value",
    "split",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            ".config": (
                "FILTER_KEYS",
                "REFUSED",
                "VCRPY_KEYS",
                "VcrOptions",
                "record_mode_value",
                "split",
            ),
            ".fixture": (
                "VcrBesidePytestRecording",
                "VcrCassette",
                "VcrFixture",
                "VcrRequest",
            ),
            ".scope": (
                "bridge_for",
                "filters_for",
            ),
        },
    )
