"""The exceptions of the cassettes: a bad value, a request no recording matches, a write
or read that failed, a body that cannot be decoded."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

from ..errors import AgentReplayError, CassetteFormatError, field_path
from ..transport.errors import EgressBlocked

__all__ = [
    "CassetteMiss",
    "CassetteValueError",
    "CassetteWriteError",
    "ContentDecodingError",
    "IncompleteRecordingError",
    "MatchOnError",
    "NotAFileError",
    "UnreadableFileError",
]


class NotAFileError(OSError):
    """The target is a device, a named pipe, a socket or a directory: replacing it would
    put a regular file in its place (issue 27: ``convert -o`` through a link to
    ``/dev/zero`` replaced the device node, run as root)."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            errno.EEXIST, "it is not a regular file, and a write would replace it", str(path)
        )


class CassetteValueError(AgentReplayError, ValueError):
    """A cassette value is wrong: ``loc`` is the path of the field (``("events", 3,
    "data")``), ``problem`` what is wrong with it. Neither quotes the value."""

    def __init__(self, problem: str, loc: tuple[str | int, ...] = ()) -> None:
        self.problem = problem
        self.loc = loc
        super().__init__(f"{field_path(loc)}: {problem}" if loc else problem)

    def within(self, *outer: str | int) -> CassetteValueError:
        """The same error, its path prefixed with ``outer`` (where the object sits)."""
        return CassetteValueError(self.problem, (*outer, *self.loc))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.problem, self.loc))


class ContentDecodingError(ValueError):
    """A body the plugin cannot decode: ``coding`` (``br``, ``x-custom``) and why.

    ``too_large`` marks a body that would expand beyond the limit (a bomb)."""

    def __init__(self, coding: str, reason: str, *, too_large: bool = False) -> None:
        self.coding = coding
        self.reason = reason
        self.too_large = too_large
        super().__init__(f"content-encoding {coding!r}: {reason}")


class MatchOnError(AgentReplayError, ValueError):
    """``match_on`` names an unknown part, or a custom matcher failed or returned an
    unhashable value."""


class CassetteMiss(EgressBlocked):
    """A request matched no recorded interaction and may not go out live.

    Like :class:`~..transport.errors.EgressBlocked` (its base) it is a ``BaseException``,
    so SDK retry loops cannot turn it into a vague connection error.
    """


class UnreadableFileError(CassetteFormatError):
    """The path is not a file that can be read as a cassette (see the message)."""

    def __init__(self, problem: str, *, path: str | os.PathLike[str]) -> None:
        super().__init__(problem, path=os.fspath(path), hint="")


class IncompleteRecordingError(EgressBlocked):
    """The recording was interrupted (Ctrl-C) before its body ended.

    A ``BaseException`` (through :class:`~..transport.errors.EgressBlocked`), like a cassette
    miss: SDK retry loops catch ``Exception`` and would turn it into a vague
    connection error after retries, when the test should fail at once.
    """


class CassetteWriteError(AgentReplayError):
    """A recording could not be written (see the message for what and why)."""
