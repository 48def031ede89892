"""One response to play: status, headers, the body as lazy events, and how it ends.

A :class:`Playback` is what a handler (a fake model, a cassette) answers a request
with, built by :mod:`.answer` (from a reply, a fault or recorded events) or by
:mod:`..cassettes.replay`. It only describes the response; a
:class:`~.delivery.Delivery` plays it to one client.
"""

from __future__ import annotations

import http
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .chunking import Chunker, Chunking
from .gate import Gate

__all__ = ["Ending", "Playback", "reason_phrase"]

Ending = Literal["complete", "cut", "timeout"]
"""How a body ends after its last delivered event."""


@dataclass
class Playback:
    """One response to play.

    ``events`` yields the encoded events lazily (a JSON body is one "event");
    after ``deliver`` events (all when ``None``) the body ends as ``ending`` says.
    ``gates`` maps an event count to a :class:`~.gate.Gate` to wait on before
    sending event number *count* (``0``: after the headers, before the first byte).
    ``delay`` paces chunks (seconds between chunks); ``schedule[i]`` (seconds
    since the response started) is when event *i* may be complete at the
    earliest (replay paced like the recording); ``on_end(outcome, events_sent)``
    is called once. ``before_headers`` makes the ending strike before any
    response exists (a read timeout while waiting for the status line).
    ``arriving``: the events come as they arrive from elsewhere (a live response
    relayed by ``agentreplay serve``), so each goes out as soon as it is there; the
    port server holds no event of it back (see :attr:`~.delivery.Delivery.ready_at_once`).
    """

    status: int
    headers: list[tuple[str, str]]
    events: Iterable[bytes]
    deliver: int | None = None
    ending: Ending = "complete"
    before_headers: bool = False
    chunker: Chunker = Chunking.PER_EVENT
    gates: dict[int, Gate] = field(default_factory=dict)
    delay: float = 0.0
    schedule: Sequence[float] | None = None
    on_end: Callable[[str, int], None] | None = None
    arriving: bool = False

    def ended(self, outcome: str, events_sent: int) -> None:
        """Call ``on_end`` (once) and let go of it.

        The callback usually refers back to this playback (a replayed call's logger
        reads the status the client got): dropping it breaks that cycle, so a finished
        call and its cassette are freed at once instead of waiting for the cyclic
        garbage collector (bench/ W4: about a third of the collector's extra work).
        """
        on_end, self.on_end = self.on_end, None
        if on_end is not None:
            on_end(outcome, events_sent)


def reason_phrase(status: int) -> str:
    """The standard reason phrase of ``status``, empty for a status that has none (529, a
    provider's own): what the loopback server puts in its status line, what aiohttp's
    ``response.reason`` holds, and what a vcrpy cassette stores. One function, so that
    the three agree (the server used to say ``Unknown`` where the others said nothing)."""
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""
