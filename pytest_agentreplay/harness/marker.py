"""Giving the marker's fixture to the tests that need it, at collection.

The fixture goes where an autouse fixture would (after the test's fixtures of wider
scope, before its function-scoped ones, so those run inside the router), without
being autouse: see ``pytest_collection_modifyitems`` in
:mod:`pytest_agentreplay.plugin` for why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from .state import TestState

__all__ = ["MARKER_FIXTURE", "add_marker_fixture"]

MARKER_FIXTURE = "_agentreplay_marker"
"""The name of the fixture that opens a marked test's router and cassette."""


def add_marker_fixture(item: pytest.Item) -> None:
    """Put :data:`MARKER_FIXTURE` among ``item``'s fixtures and note that it must run."""
    names = getattr(item, "fixturenames", None)
    info = getattr(item, "_fixtureinfo", None)
    if names is None or info is None:
        return  # not a test that takes fixtures (another plugin's item): as with autouse
    if MARKER_FIXTURE not in names:  # parametrized tests share the list
        if isinstance(names, list):
            names.insert(_autouse_place(names, info.name2fixturedefs), MARKER_FIXTURE)
        if MARKER_FIXTURE not in getattr(item, "fixturenames", ()):
            raise pytest.UsageError(
                f"pytest-agentreplay could not add its fixture to {item.nodeid} (this pytest "
                f"version keeps a test's fixture names differently); it would run without "
                f"interception. Please report it with your pytest version."
            )
    TestState.of(item).marked = True


def _autouse_place(names: list[str], defs: Mapping[str, Sequence[Any]]) -> int:
    """Where pytest would put an autouse fixture: before the first function-scoped one."""
    return next(
        (
            i
            for i, name in enumerate(names)
            if name not in defs or defs[name][-1].scope == "function"
        ),
        len(names),
    )
