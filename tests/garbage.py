"""Collecting the garbage of nested pytest runs without walking the whole heap."""

from __future__ import annotations

import gc
import warnings


def collect_garbage() -> None:
    """Collect the garbage cycles made since the last call, then freeze what survives.

    A full collection walks every object the worker holds, the SDKs and frameworks
    imported by earlier tests too: about 0.3 s each, paid after every nested run (most
    of the docs examples' time). What survives a collection is frozen (``gc.freeze``),
    so the next one walks only what was made after it. Frozen objects are still freed
    when their last reference goes; only a cycle of them that becomes garbage later is
    not, and no test here relies on that."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    gc.freeze()
