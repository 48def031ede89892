"""Whether the installed aiohttp can be hooked (:mod:`.aio`), asked without importing it.

Apart from :mod:`.aio`, which imports asyncio: every session that starts intercepting
asks this question, and a suite of sync tests need not load asyncio for it (bench/ W4:
a few milliseconds at the first test). The version is read without ``packaging``, whose
import cost a replayed suite over a millisecond for one comparison (issue 29).
"""

from __future__ import annotations

import functools
import importlib.metadata
import re

__all__ = ["MIN_VERSION", "hookable", "supported"]

MIN_VERSION = (3, 12, 2)
"""aiohttp's client middlewares, which the hook is, came with 3.12; ``Payload.as_bytes``,
which reads a request's body without sending it, with 3.12.2 (3.12.0 failed every
hooked request with an ``AttributeError``: the lowest CI session found it)."""


_RELEASE = re.compile(r"\s*v?(?:[0-9]+!)?([0-9]+(?:\.[0-9]+)*)", re.IGNORECASE)
"""The release numbers of a PEP 440 version (after an epoch, before a pre-, post- or
dev-release or a local part): what ``packaging``'s ``Version(...).release`` gives."""


def hookable(version: str) -> bool:
    """Whether aiohttp ``version`` can be hooked (an older one goes through vcrpy, as
    does one whose version cannot be read)."""
    found = _RELEASE.match(version)
    if found is None:
        return False
    return tuple(int(part) for part in found.group(1).split(".")) >= MIN_VERSION


@functools.cache
def supported() -> bool:
    """Whether an aiohttp that can be hooked is installed (asked without importing it)."""
    try:
        version = importlib.metadata.version("aiohttp")
    except importlib.metadata.PackageNotFoundError:
        return False
    return hookable(version)
