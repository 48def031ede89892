"""Whether the installed aiohttp can be hooked (:mod:`.aio`), asked without importing it.

Apart from :mod:`.aio`, which imports asyncio: every session that starts intercepting
asks this question, and a suite of sync tests need not load asyncio for it (bench/ W4:
a few milliseconds at the first test).
"""

from __future__ import annotations

import functools
import importlib.metadata

from packaging.version import Version

__all__ = ["MIN_VERSION", "hookable", "supported"]

MIN_VERSION = (3, 12, 2)
"""aiohttp's client middlewares, which the hook is, came with 3.12; ``Payload.as_bytes``,
which reads a request's body without sending it, with 3.12.2 (3.12.0 failed every
hooked request with an ``AttributeError``: the lowest CI session found it)."""


def hookable(version: str) -> bool:
    """Whether aiohttp ``version`` can be hooked (an older one goes through vcrpy)."""
    return Version(version).release >= MIN_VERSION


@functools.cache
def supported() -> bool:
    """Whether an aiohttp that can be hooked is installed (asked without importing it)."""
    try:
        version = importlib.metadata.version("aiohttp")
    except importlib.metadata.PackageNotFoundError:
        return False
    return hookable(version)
