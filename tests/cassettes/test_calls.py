"""How a call is named in the test's log (``cassettes/calls.py``): after what the
client got, not after how the connection happened to end."""

from __future__ import annotations

import json

import pytest

from pytest_agentreplay.cassettes.calls import live_call, replayed_outcome
from pytest_agentreplay.cassettes.cassette import (
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)

ERROR = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


def _stream(*, error: bool, end: str) -> Interaction:
    events = [
        RecordedEvent(event="message_start", data=json.dumps({"type": "message_start"})),
        RecordedEvent(event="ping", data=json.dumps({"type": "ping"})),
    ]
    if error:
        events.append(RecordedEvent(event="error", data=json.dumps(ERROR)))
    return Interaction(
        request=RecordedRequest(method="POST", url="https://api.anthropic.com/v1/messages"),
        response=RecordedResponse(
            status=200,
            headers={"content-type": "text/event-stream"},
            events=events,
            end=end,  # type: ignore[arg-type]
        ),
    )


@pytest.mark.parametrize("end", ["complete", "cancelled", "cut"])
def test_a_stream_ending_in_an_error_event_is_an_error_event_however_it_closed(end: str) -> None:
    """An SDK hangs up once it has read the error event: recorded ``cancelled`` (and
    replayed as a cut). The call ended in the provider's error all the same; a run
    log that called it ``cut`` misnamed it (seen in the example suite's cassettes)."""
    interaction = _stream(error=True, end=end)
    assert live_call(0, interaction).outcome == "error_event"
    for delivered in ("completed", "cut", "cancelled"):
        assert replayed_outcome(interaction, delivered, 200, events_sent=3) == "error_event"


def test_a_stream_cut_before_its_error_event_was_sent_is_the_cut() -> None:
    interaction = _stream(error=True, end="cancelled")
    assert replayed_outcome(interaction, "cut", 200, events_sent=2) == "cut"
    assert replayed_outcome(interaction, "cancelled", 200, events_sent=1) == "cancelled"
    assert replayed_outcome(interaction, "timeout", 200, events_sent=3) == "timeout"


def test_a_stream_without_an_error_keeps_how_it_ended() -> None:
    assert live_call(0, _stream(error=False, end="cancelled")).outcome == "cancelled"
    assert live_call(0, _stream(error=False, end="cut")).outcome == "cut"
    assert live_call(0, _stream(error=False, end="complete")).outcome == "completed"
    interaction = _stream(error=False, end="complete")
    assert replayed_outcome(interaction, "cut", 200, events_sent=2) == "cut"
    assert replayed_outcome(interaction, "completed", 500, events_sent=2) == "http_error"
