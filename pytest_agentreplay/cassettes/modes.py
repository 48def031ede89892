"""Record modes: the names, and which of them replay.

Kept apart so that the matching code, the session and the command-line options
share one definition without importing each other (the options sit in the
surface layer, above the cassettes).
"""

from __future__ import annotations

__all__ = ["RECORDING_MODES", "RECORD_MODES", "REPLAYING_MODES"]

RECORD_MODES = ("none", "once", "new_episodes", "all", "rewrite")
"""Record modes, with pytest-recording's meaning; ``none`` replays only and blocks egress."""

REPLAYING_MODES = frozenset({"none", "once", "new_episodes"})
"""Modes that answer requests from the recorded interactions."""

RECORDING_MODES = frozenset({"all", "rewrite", "new_episodes"})
"""Modes that always record what is not replayed (``once`` records only a new cassette)."""
