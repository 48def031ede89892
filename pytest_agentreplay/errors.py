"""Exception types. Every error the plugin raises on bad input is one of these.

Callers can catch :class:`AgentReplayError` for "anything this plugin refused",
or a subclass for one layer. Each message names where the problem is (event
number, field path, file and line) and what to do about it.
"""

from __future__ import annotations

__all__ = ["AgentReplayError", "CodecError", "SSEDecodeError", "SSEEncodeError"]


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
