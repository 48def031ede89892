"""A bare event-stream body (SDK test fixtures): told apart (:func:`sniff`) and read
as a one-interaction cassette (:func:`from_raw_sse`)."""

from __future__ import annotations

import re
from typing import Any

from ...providers.catalog import stream_guess
from ..from_wire import split_stream

__all__ = ["from_raw_sse", "sniff"]

_START = re.compile(r"(?:event|data|id|retry)[ \t]*:|:")


def sniff(head: str) -> bool:
    """Whether a text starting with ``head`` (no BOM, no leading blank line) is a bare
    event stream: it starts with a field name or a comment."""
    return _START.match(head) is not None


def from_raw_sse(raw: bytes) -> dict[str, Any]:
    """A bare event-stream body as one ``POST`` interaction answered ``200``.

    The URL is the provider's own, guessed from the events by the first event each
    provider's stream starts with (:func:`~...providers.catalog.stream_guess`),
    ``https://raw-sse.invalid/`` when nothing matches.
    """
    fields = split_stream(raw)
    sample = " ".join(f"{e.event} {e.data[:200]}" for e in fields["events"][:3])
    guessed = stream_guess(sample)
    url = None if guessed is None else guessed.origin + guessed.path
    response = {"status": 200, "headers": {"content-type": "text/event-stream"}, **fields}
    request = {"method": "POST", "url": url or "https://raw-sse.invalid/"}
    return {"version": 1, "interactions": [{"request": request, "response": response}]}
