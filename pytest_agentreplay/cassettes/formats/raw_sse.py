"""A bare event-stream body (SDK test fixtures): told apart (:func:`sniff`) and read
as a one-interaction cassette (:func:`from_raw_sse`)."""

from __future__ import annotations

import re
from typing import Any

from ..from_wire import split_stream

__all__ = ["from_raw_sse", "sniff"]

_START = re.compile(r"(?:event|data|id|retry)[ \t]*:|:")


def sniff(head: str) -> bool:
    """Whether a text starting with ``head`` (no BOM, no leading blank line) is a bare
    event stream: it starts with a field name or a comment."""
    return _START.match(head) is not None


# Where a bare stream most likely came from, judged by its events.
_RAW_SSE_URLS = (
    ("message_start", "https://api.anthropic.com/v1/messages"),
    ("response.", "https://api.openai.com/v1/responses"),
    ("chat.completion.chunk", "https://api.openai.com/v1/chat/completions"),
)


def from_raw_sse(raw: bytes) -> dict[str, Any]:
    """A bare event-stream body as one ``POST`` interaction answered ``200``.

    The URL is guessed from the events (Anthropic Messages, OpenAI Responses or
    Chat Completions), ``https://raw-sse.invalid/`` when nothing matches.
    """
    fields = split_stream(raw)
    sample = " ".join(f"{e.event} {e.data[:200]}" for e in fields["events"][:3])
    url = next((url for marker, url in _RAW_SSE_URLS if marker in sample), None)
    response = {"status": 200, "headers": {"content-type": "text/event-stream"}, **fields}
    request = {"method": "POST", "url": url or "https://raw-sse.invalid/"}
    return {"version": 1, "interactions": [{"request": request, "response": response}]}
