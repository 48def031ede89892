"""Per-test settings: the marker's keywords over the ini file, the command line over both.

Marker arguments are validated when the test is set up, with a ``UsageError``
that names the test and the bad keyword, so a typo never silently falls back
to a default.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pytest

from .options import RECORD_MODES

__all__ = ["MARKER_KEYS", "Settings", "resolve"]

MARKER_KEYS = frozenset(
    {"cassette", "record_mode", "match_on", "allow_hosts", "strict", "block_loopback"}
)


@dataclass(frozen=True)
class Settings:
    """What the plugin does for one test."""

    record_mode: str = "none"
    cassette: str | None = None
    match_on: tuple[str, ...] | None = None
    allow_hosts: tuple[str, ...] = ()
    strict: bool = False
    block_loopback: bool = False

    @property
    def replay_only(self) -> bool:
        """Replay mode: no live traffic at all (besides loopback and allowed hosts)."""
        return self.record_mode == "none"


def _marker_kwargs(item: pytest.Item) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    # Closest marker wins: iter_markers yields the function's first, then class, module.
    for marker in reversed(list(item.iter_markers("agentreplay"))):
        if marker.args:
            raise pytest.UsageError(
                f"{item.nodeid}: @pytest.mark.agentreplay takes keyword arguments only "
                f"({', '.join(sorted(MARKER_KEYS))}), got positional {marker.args!r}"
            )
        unknown = set(marker.kwargs) - MARKER_KEYS
        if unknown:
            raise pytest.UsageError(
                f"{item.nodeid}: unknown @pytest.mark.agentreplay argument(s) "
                f"{', '.join(sorted(unknown))}; known: {', '.join(sorted(MARKER_KEYS))}"
            )
        merged.update(marker.kwargs)
    return merged


def _hosts(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Iterable) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise pytest.UsageError(
        f"{where}: allow_hosts must be a host or a list of hosts, got {value!r}"
    )


def resolve(item: pytest.Item) -> Settings:
    """The settings of ``item``: CLI > marker > ini > defaults."""
    config = item.config
    marker = _marker_kwargs(item)
    mode = (
        config.getoption("agentreplay_record_mode")
        or marker.get("record_mode")
        or config.getini("agentreplay_record_mode")
        or "none"
    )
    if mode not in RECORD_MODES:
        raise pytest.UsageError(
            f"{item.nodeid}: record_mode {mode!r} is not one of {', '.join(RECORD_MODES)}"
        )
    hosts = (
        *config.getini("agentreplay_allow_hosts"),
        *_hosts(marker.get("allow_hosts", ()), item.nodeid),
    )
    strict = config.getoption("agentreplay_strict") or bool(marker.get("strict", False))
    block_loopback = bool(marker.get("block_loopback", config.getini("agentreplay_block_loopback")))
    match_on = marker.get("match_on")
    return Settings(
        record_mode=mode,
        cassette=marker.get("cassette"),
        match_on=tuple(match_on) if match_on is not None else None,
        allow_hosts=hosts,
        strict=strict,
        block_loopback=block_loopback,
    )
