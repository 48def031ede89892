"""The headers a recorded JSON body is played with: the recorded ones in their order,
less those the plugin writes itself (length, encoding), whatever their case."""

from __future__ import annotations

import pytest

from pytest_agentreplay.cassettes.cassette import Interaction, RecordedRequest, RecordedResponse
from pytest_agentreplay.cassettes.replay import playback_for
from pytest_agentreplay.transport.answer import Plan
from pytest_agentreplay.transport.chunking import Chunking


def _played(headers: dict[str, str]) -> list[tuple[str, str]]:
    interaction = Interaction(
        request=RecordedRequest(method="POST", url="https://h/v1/messages", json_body={}),
        response=RecordedResponse(status=200, headers=headers, json_body={"ok": True}),
    )
    plan = Plan(chunker=Chunking.PER_EVENT)
    playback = playback_for(interaction, method="POST", path="/v1/messages", fault=None, plan=plan)
    return playback.headers


def test_the_recorded_headers_are_played_in_order_with_the_length_of_the_body() -> None:
    played = _played({"x-b": "2", "content-type": "application/json", "x-a": "1"})
    assert played == [
        ("x-b", "2"),
        ("content-type", "application/json"),
        ("x-a", "1"),
        ("content-length", str(len(b'{"ok":true}'))),
    ]


@pytest.mark.parametrize("name", ["Content-Length", "TRANSFER-ENCODING", "content-encoding"])
def test_a_header_the_plugin_writes_itself_is_left_out_in_any_case(name: str) -> None:
    played = _played({"x-b": "2", name: "99", "x-a": "1"})
    assert [k for k, _ in played] == ["x-b", "x-a", "content-length"]
    assert dict(played)["content-length"] == str(len(b'{"ok":true}'))


def _answer(*, end: str = "complete", stream: bool = False) -> Interaction:
    from pytest_agentreplay.cassettes.cassette import RecordedEvent

    events = [RecordedEvent(event="ping", data='{"type":"ping"}')] if stream else None
    return Interaction(
        request=RecordedRequest(method="POST", url="https://h/v1/messages", json_body={}),
        response=RecordedResponse(
            status=200,
            headers={"content-type": "text/event-stream" if stream else "application/json"},
            json_body=None if stream else {"ok": True},
            events=events,
            end=end,  # type: ignore[arg-type]
        ),
    )


def test_the_path_is_asked_only_when_a_fault_is_rendered() -> None:
    """The path picks the provider whose error a fault is rendered in: a call played as
    recorded never asks for it (issue 29: splitting the URL cost every replayed call)."""
    from pytest_agentreplay.neutral import Fault

    asked: list[str] = []

    def path() -> str:
        asked.append("/v1/messages")
        return "/v1/messages"

    plan = Plan(chunker=Chunking.PER_EVENT)
    for interaction in (_answer(), _answer(stream=True)):
        playback_for(interaction, method="POST", path=path, fault=None, plan=plan)
    assert asked == []
    failed = playback_for(_answer(), method="POST", path=path, fault=Fault.http(529), plan=plan)
    assert asked and failed.status == 529
    assert b"overloaded_error" in b"".join(failed.events)  # Anthropic's own error body
    asked.clear()
    cut = playback_for(
        _answer(stream=True, end="cut"), method="POST", path=path, fault=None, plan=plan
    )
    assert asked  # a recorded cut is replayed as the provider's codec plays a fault
    assert cut.ending == "cut"


def test_a_header_changed_in_place_in_another_case_is_still_left_out() -> None:
    """The model stores names lower-case, and replay looks them up as they are; a dict
    changed in place afterwards (objects stay mutable) is read in any case."""
    interaction = Interaction(
        request=RecordedRequest(method="POST", url="https://h/v1/messages", json_body={}),
        response=RecordedResponse(status=200, headers={"x-a": "1"}, json_body={"ok": True}),
    )
    interaction.response.headers["Content-Length"] = "99"
    plan = Plan(chunker=Chunking.PER_EVENT)
    playback = playback_for(interaction, method="POST", path="/v1/messages", fault=None, plan=plan)
    assert playback.headers == [("x-a", "1"), ("content-length", str(len(b'{"ok":true}')))]
