"""What each request of a test did: answered from the cassette or recorded live, and
how it ended, in the words replayed calls and fake models share (``completed``,
``cut``, ``error_event``, ``http_error``, ``timeout``, ``cancelled``)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import jsonparse
from ..urls import bare_url
from .cassette import Interaction, RecordedRequest

__all__ = ["ReplayedCall", "ends_in_error", "live_call", "played_whole", "replayed_outcome"]

_LIVE_OUTCOME = {"complete": "completed", "incomplete": "cancelled"}


@dataclass(frozen=True)
class ReplayedCall:
    """One request this test made, answered from the cassette or recorded live."""

    index: int
    method: str
    url: str
    source: str  # "cassette" or "live"
    interaction: int | None
    status: int | None = None
    outcome: str = "completed"
    events_sent: int = 0
    client: str | None = None
    """The client library that sent the request, from its headers (issue 30)."""
    request: RecordedRequest | None = None
    """The request as the client sent it (scrubbed), when it differs from the recorded
    one it matched: an interaction imported from a trace is matched by its conversation
    (:mod:`.conversation`), and a run log shows what the agent really asked."""

    def __repr__(self) -> str:
        # The live URL may carry a key (``?key=``, ``user:password@``): see ``urls``.
        return (
            f"ReplayedCall(index={self.index}, {self.method} {bare_url(self.url)}, "
            f"source={self.source!r}, interaction={self.interaction}, status={self.status}, "
            f"outcome={self.outcome!r}, events_sent={self.events_sent}, client={self.client!r})"
        )


def ends_in_error(interaction: Interaction) -> bool:
    """Whether a recorded stream ends with the provider's in-stream error event."""
    events = interaction.response.events
    if not events:
        return False
    last = events[-1]
    if last.event == "error":
        return True
    try:
        data = jsonparse.loads(last.data)
    except ValueError:
        return False
    return isinstance(data, dict) and (
        "error" in data or data.get("type") in ("error", "response.failed")
    )


def replayed_outcome(
    interaction: Interaction, outcome: str, status: int | None, events_sent: int
) -> str:
    """How a replayed call ended: the delivery's ``outcome``, named after what the client
    got (a recorded in-stream error, an HTTP error status)."""
    whole = events_sent >= len(interaction.response.events or ())
    if outcome in _AFTER_AN_ERROR and whole and ends_in_error(interaction):
        outcome = "error_event"  # the client got the error event whole
    if status is not None and status >= 400 and outcome == "completed":
        return "http_error"
    return outcome


_AFTER_AN_ERROR = frozenset({"completed", "cut", "cancelled"})
"""How a stream whose last event is an error may end once that event was read: an SDK
hangs up after it (recorded ``cancelled``, replayed as a cut). The call ended in the
error event all the same, and a run log that said ``cut`` misnamed it."""


def _live_outcome(interaction: Interaction) -> str:
    end = interaction.response.end
    if end != "complete":
        outcome = _LIVE_OUTCOME.get(end, end)
        return (
            "error_event" if outcome in _AFTER_AN_ERROR and ends_in_error(interaction) else outcome
        )
    if interaction.response.status >= 400:
        return "http_error"
    return "error_event" if ends_in_error(interaction) else "completed"


def live_call(index: int, interaction: Interaction) -> ReplayedCall:
    """The call that recorded ``interaction`` live, numbered ``index``."""
    return ReplayedCall(
        index=index,
        method=interaction.request.method,
        url=interaction.request.url,
        source="live",
        interaction=None,
        status=interaction.response.status,
        outcome=_live_outcome(interaction),
        events_sent=len(interaction.response.events or ()),
    )


def played_whole(index: int, url: str, interaction: Interaction, number: int) -> ReplayedCall:
    """Call ``index`` to ``url``, answered with the whole of recorded interaction
    ``number`` at once: vcrpy plays a body in one piece, as complete, for requests /
    urllib3 / aiohttp."""
    status = interaction.response.status
    return ReplayedCall(
        index=index,
        method=interaction.request.method,
        url=url,
        source="cassette",
        interaction=number,
        status=status,
        outcome=replayed_outcome(
            interaction, "completed", status, len(interaction.response.events or ())
        ),
        events_sent=len(interaction.response.events or ()),
    )
