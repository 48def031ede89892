"""A client that hangs up after its protocol's final event read the whole answer: the
stream is recorded complete, not ``cancelled`` (replayed as a cut) (issue 31).

The final events are a fact per provider in the catalog (``final_event``); for a
JSON-RPC stream the final event is the response to the request."""

from __future__ import annotations

import json

import httpx2
import pytest

from pytest_agentreplay.cassettes.cassette import Interaction
from pytest_agentreplay.cassettes.record import InteractionSink
from pytest_agentreplay.providers.catalog import CATALOG
from pytest_agentreplay.transport.router import HTTPRequest

SSE = {"content-type": "text/event-stream"}


def _recorded(url: str, body: object, status: int, headers: dict[str, str], chunks: list[bytes],
              how: str = "cancelled") -> Interaction:  # fmt: skip
    done: list[Interaction | str] = []
    request = HTTPRequest("POST", url, (("content-type", "application/json"),),
                          json.dumps(body).encode())  # fmt: skip
    sink = InteractionSink(request, httpx2.Response(status, headers=headers), 0.0, done.append)
    for chunk in chunks:
        sink.chunk(chunk)
    sink.end(how)
    (result,) = done
    assert isinstance(result, Interaction)
    return result


def _event(name: str | None, data: str) -> bytes:
    return (f"event: {name}\n" if name else "").encode() + f"data: {data}\n\n".encode()


ANTHROPIC = "https://api.anthropic.com/v1/messages"
MESSAGE = {"model": "m", "max_tokens": 9, "messages": [], "stream": True}


@pytest.mark.parametrize(
    ("url", "events", "end"),
    [
        (ANTHROPIC, [("message_start", "{}"), ("message_delta", "{}")], "complete"),
        (ANTHROPIC, [("message_start", "{}"), ("message_stop", "{}")], "complete"),
        (ANTHROPIC, [("message_start", "{}"), ("content_block_delta", "{}")], "cancelled"),
        (
            "https://api.openai.com/v1/chat/completions",
            [(None, "{}"), (None, "[DONE]")],
            "complete",
        ),
        ("https://api.openai.com/v1/chat/completions", [(None, "{}")], "cancelled"),
        ("https://api.openai.com/v1/responses", [("response.completed", "{}")], "complete"),
        (
            "https://api.openai.com/v1/responses",
            [("response.output_text.delta", "{}")],
            "cancelled",
        ),
    ],
)
def test_a_hang_up_after_the_final_event_is_complete(
    url: str, events: list[tuple[str | None, str]], end: str
) -> None:
    chunks = [_event(name, data) for name, data in events]
    assert _recorded(url, MESSAGE, 200, SSE, chunks).response.end == end


def test_every_streaming_provider_names_its_final_events() -> None:
    assert all(facts.final_event is not None for facts in CATALOG.values())


CALL = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "add"}}
MCP = "http://127.0.0.1:8000/mcp"


@pytest.mark.parametrize(
    ("data", "end"),
    [
        ('{"jsonrpc":"2.0","id":4,"result":{}}', "complete"),
        ('{"jsonrpc":"2.0","method":"notifications/progress","params":{}}', "cancelled"),
        ('{"jsonrpc":"2.0","id":5,"result":{}}', "cancelled"),  # another request's answer
    ],
)
def test_a_jsonrpc_stream_is_complete_after_its_response(data: str, end: str) -> None:
    assert _recorded(MCP, CALL, 200, SSE, [_event("message", data)]).response.end == end


def test_a_body_read_whole_and_an_unread_empty_202_are_complete() -> None:
    whole = _recorded(MCP, CALL, 200, {"content-length": "2"}, [b"{}"])
    assert whole.response.end == "complete"
    short = _recorded(MCP, CALL, 200, {"content-length": "9"}, [b"{}"])
    assert short.response.end == "cancelled"
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert _recorded(MCP, note, 202, {}, []).response.end == "complete"
