"""Exception types. Every error the plugin raises on bad input is one of these.

Callers can catch :class:`AgentReplayError` for "anything this plugin refused",
or a subclass for one layer. Each message names where the problem is (event
number, field path, file and line) and what to do about it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = [
    "AgentReplayError",
    "CassetteFormatError",
    "CodecError",
    "SSEDecodeError",
    "SSEEncodeError",
    "TooDeepError",
    "TraceImportError",
    "field_path",
]


class AgentReplayError(Exception):
    """Base class of every error raised by pytest-agentreplay."""


class SSEDecodeError(AgentReplayError, ValueError):
    """A byte stream is not a valid event stream under the decoder's settings."""


class SSEEncodeError(AgentReplayError, ValueError):
    """An event cannot be written as SSE so that decoding gives it back."""


class CodecError(AgentReplayError, ValueError):
    """A provider body or event does not have the shape its provider uses.

    ``event_index`` is the 0-based number of the offending SSE event (``None``
    for a JSON body) and ``field`` the dotted path of the offending field.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        event_index: int | None = None,
        field: str | None = None,
    ) -> None:
        self.provider = provider
        self.event_index = event_index
        self.field = field
        where = [provider]
        if event_index is not None:
            where.append(f"event #{event_index}")
        if field:
            where.append(f"field {field!r}")
        super().__init__(f"{', '.join(where)}: {message}")


RERECORD = "Fix the file by hand, or delete it and re-record with --agentreplay-record-mode=once."


def field_path(loc: tuple[str | int, ...]) -> str:
    """``("interactions", 3, "response", "status")`` → ``interactions[3].response.status``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


class TraceImportError(AgentReplayError, ValueError):
    """A trace cannot become a cassette: the file is not a trace, or a span lacks what a
    replay needs (its provider, its messages). The message names the file, the line or
    span and the setting that would have captured what is missing."""


class CassetteFormatError(AgentReplayError, ValueError):
    """A cassette file is empty, truncated, unsafe, or not shaped like a cassette.

    The message reads ``path:line:column: field: what is wrong. hint``; each part
    is also an attribute (``line`` and ``column`` are 1-based, ``None`` when the
    problem has no position, such as an empty file). Messages never quote a
    header or body value, so they are safe to print in CI logs.
    """

    def __init__(
        self,
        problem: str,
        *,
        path: str | Path,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
        hint: str = RERECORD,
    ) -> None:
        self.problem = problem
        self.path = Path(path)
        self.line = line
        self.column = column
        self.field = field
        self.hint = hint
        super().__init__(self._message())

    def _message(self) -> str:
        where = str(self.path)
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        parts = [where, f"{self.field}: {self.problem}" if self.field else self.problem]
        text = ": ".join(parts)
        if not text.endswith("."):
            text += "."
        return f"{text} {self.hint}" if self.hint else text

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only constructor: teach pickle (xdist ships errors between processes).
        state = {
            "path": str(self.path),
            "line": self.line,
            "column": self.column,
            "field": self.field,
            "hint": self.hint,
        }
        return (_rebuild, (self.problem, state))


def _rebuild(problem: str, state: dict[str, Any]) -> CassetteFormatError:
    return CassetteFormatError(problem, **state)


class TooDeepError(ValueError):
    """JSON text nests deeper than ``limit`` levels (:data:`~.jsonparse.MAX_DEPTH`)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"JSON nests deeper than {limit} levels")
