"""The interactions no test played, left in pytest's cache for ``agentreplay lint``.

At the end of every run, the plugin merges into pytest's cache
(``.pytest_cache/v/agentreplay/unplayed``), per cassette it replayed, the
interactions no test played; ``agentreplay lint`` reads them back from the cache
nearest above a cassette. Both sides know the cache's key and shape from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from .. import jsonparse

__all__ = ["CACHE_KEY", "Cache", "last_run_unplayed", "remember"]

CACHE_KEY = "agentreplay/unplayed"
"""The pytest cache key under which a run leaves, per cassette it replayed, the
interactions no test played (``.pytest_cache/v/agentreplay/unplayed``)."""

_CACHE_FILE = Path(".pytest_cache", "v", *CACHE_KEY.split("/"))


class Cache(Protocol):
    """What is used of pytest's ``config.cache``."""

    def get(self, key: str, default: Any) -> Any: ...

    def set(self, key: str, value: object) -> None: ...


def remember(cache: Cache, found: dict[str, list[int]]) -> None:
    """Merge this run's unplayed interactions (by cassette path) into ``cache``:
    cassettes this run did not use keep what an earlier run found."""
    cache.set(CACHE_KEY, {**(cache.get(CACHE_KEY, {}) or {}), **found})


def last_run_unplayed(path: Path) -> list[int] | None:
    """The interactions of ``path`` no test played in the last run that used it, from
    the nearest pytest cache above the file; ``None`` when no run recorded it."""
    absolute = path.resolve()
    for folder in absolute.parents:
        cache = folder / _CACHE_FILE
        if cache.is_file():
            try:
                known = jsonparse.loads(cache.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            value = known.get(str(absolute)) if isinstance(known, dict) else None
            return [i for i in value if isinstance(i, int)] if isinstance(value, list) else None
    return None
