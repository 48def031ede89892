"""Collecting the garbage of nested pytest runs without walking the whole heap."""

from __future__ import annotations

import gc
import warnings

import hypothesis
import hypothesis.strategies


def collect_garbage(*, freeze: bool = False) -> None:
    """Collect the garbage cycles, ResourceWarnings of what they held ignored;
    ``freeze``: then freeze what survives.

    A full collection walks every object the worker holds, the SDKs and frameworks
    imported by earlier tests too: about 0.3 s, paid after every nested run (most of
    the docs examples' time). Frozen objects (``gc.freeze``) are left out of later
    collections, so those walk only what was made since. Freeze only between tests,
    once pytest has let go of the test's fixtures: a frozen object is still freed
    when its last reference goes, but a cycle of frozen objects that becomes garbage
    later is not collected until the next thaw (:data:`THAW_EVERY`)."""
    global _freezes  # noqa: PLW0603 - one count per worker process
    if freeze:
        if not _freezes:
            _let_hypothesis_register_its_random()
        _freezes += 1
        if _freezes % THAW_EVERY == 0:
            gc.unfreeze()  # this collection walks everything again, frees what died
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    if freeze:
        gc.freeze()


THAW_EVERY = 20
"""Every this many freezes, the frozen objects are collected again: some that were
alive when frozen die later in cycles (a nested run's modules, held by caches for a
while), about 4,700 objects per docs example, which a freeze alone would keep until
the worker exits."""

_freezes = 0


def _let_hypothesis_register_its_random() -> None:
    """Run one trivial property test before anything is frozen.

    Hypothesis registers its own random generator when it first runs a test, and
    checks then that something refers to it with ``gc.get_referrers``, which does not
    look at frozen objects: with the module that holds it frozen, the releases of the
    lowest session (6.100) warned, failing the worker's first property test after a
    nested run. Registered once before the first freeze, it is never checked again."""

    @hypothesis.settings(max_examples=1, database=None, derandomize=True)
    @hypothesis.given(hypothesis.strategies.none())
    def once(value: None) -> None:
        assert value is None

    once()
