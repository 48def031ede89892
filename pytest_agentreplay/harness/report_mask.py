"""Mask secrets in the reports of a test, before pytest prints or ships them.

CI logs are often public. A test that fails under interception can show a
credential in many places the plugin does not write itself: the repr of an
``httpx`` request in a traceback frame's arguments (``request = <Request('GET',
'https://...?key=...')>``), a local variable under ``--showlocals``, the
exception message, captured output. :func:`mask_report` passes every string of
the report's structured ``longrepr`` (pytest's ``TerminalRepr`` dataclasses) and
of its captured sections and ``record_property`` values through the scrubber's
``mask``, keeping the structure, so the terminal, ``-ra``'s one-line summary, JUnit
XML and xdist all see the masked text. Every report is masked, a passing test's
too: ``junit_logging=all`` and ``-rA`` write its captured output (issue 18).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

__all__ = ["mask_report", "masked_reprs"]

DEFAULT_MAXSIZE = 240
"""pytest's length for a repr in a traceback."""

Mask = Callable[[str], str]


WITHHELD = (
    "pytest-agentreplay could not mask this failure report ({error}); it is withheld "
    "because it may show a secret. Run the test again with -p no:agentreplay to see it "
    "unmasked (locally, not in a public CI log)."
)


def mask_report(report: pytest.TestReport, mask: Mask) -> None:
    """Mask, in place, the traceback, message, captured output and properties of ``report``.

    It never raises: it runs inside ``pytest_runtest_makereport``, where an error
    is an INTERNALERROR that ends the whole session. If masking fails, the report
    is replaced by a note saying so — never shown unmasked.
    """
    try:
        report.longrepr = _masked(report.longrepr, mask, set())
        report.sections = [(title, mask(content)) for title, content in report.sections]
        # record_property values: JUnit XML writes them for passing tests too.
        report.user_properties = [
            (name, mask(value) if isinstance(value, str) else value)
            for name, value in report.user_properties
        ]
    except Exception as exc:  # see the docstring
        report.longrepr = WITHHELD.format(error=type(exc).__name__)
        report.sections = []
        report.user_properties = []


def _masked(value: Any, mask: Mask, seen: set[int]) -> Any:
    """``value`` with every string in it masked; dataclasses (pytest's report parts)
    are changed in place, each once however often it is shared."""
    if isinstance(value, str):
        return mask(value)
    if type(value) in (list, tuple):
        return type(value)(_masked(item, mask, seen) for item in value)
    if _mutable_dataclass(value) and id(value) not in seen:
        seen.add(id(value))
        for f in dataclasses.fields(value):
            setattr(value, f.name, _masked(getattr(value, f.name), mask, seen))
    return value


def _mutable_dataclass(value: Any) -> bool:
    return (
        dataclasses.is_dataclass(value)
        and not isinstance(value, type)
        and not value.__dataclass_params__.frozen  # type: ignore[attr-defined]
    )


_FULL = 100_000
"""How long a value's repr may be before it is masked; pytest then cuts the masked text."""


@contextmanager
def masked_reprs(mask: Mask) -> Iterator[None]:
    """While pytest builds a report: the reprs of traceback arguments and ``-l`` locals
    are masked *before* pytest cuts them to length.

    Issue 18: pytest cuts a long repr in its middle (``'...?key=sk-pr...xyz'``); the
    cut left pieces of a key that no mask recognises afterwards. Here the repr is
    made long (its own middle cut, if any, far from both ends), masked whole, then
    cut as pytest would; what a cut can then split is the placeholder. Without the
    function this relies on (another pytest), the report is still masked as before.
    """
    code: Any = sys.modules.get("_pytest._code.code")
    original = getattr(code, "saferepr", None)
    if code is None or original is None:
        yield
        return

    def saferepr(obj: object, maxsize: int | None = DEFAULT_MAXSIZE, **kwargs: Any) -> str:
        whole = mask(original(obj, maxsize=None if maxsize is None else _FULL, **kwargs))
        return whole if maxsize is None else _ellipsize(whole, maxsize)

    code.saferepr = saferepr
    try:
        yield
    finally:
        code.saferepr = original


def _ellipsize(text: str, maxsize: int) -> str:
    """``text`` cut to ``maxsize`` in its middle, as pytest cuts a repr."""
    if len(text) <= maxsize:
        return text
    head = max(0, (maxsize - 3) // 2)
    tail = max(0, maxsize - 3 - head)
    return text[:head] + "..." + text[len(text) - tail :]
