"""A recorded JSON-RPC answer re-addressed to the live request: its id, a progress
token, and the session header the client sent."""

from __future__ import annotations

import json

from pytest_agentreplay.cassettes.cassette import (
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.mcp.readdress import header, readdress

CALL = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "add"}}


def _interaction(response: RecordedResponse) -> Interaction:
    request = RecordedRequest(
        method="POST", url="http://127.0.0.1:1/mcp", headers={"mcp-session-id": "s-old"},
        json_body=CALL,
    )  # fmt: skip
    return Interaction(request=request, response=response)


def _live(id_: int) -> bytes:
    return json.dumps({**CALL, "id": id_}).encode()


def test_a_json_answer_and_its_session_follow_the_live_request() -> None:
    recorded = _interaction(
        RecordedResponse(
            status=200,
            headers={"content-type": "application/json", "Mcp-Session-Id": "s-old"},
            json_body={"jsonrpc": "2.0", "id": 4, "result": {"x": 1}},
        )
    )
    played = readdress(recorded, _live(1), {"mcp-session-id": "s-new"})
    assert played.response.json_body == {"jsonrpc": "2.0", "id": 1, "result": {"x": 1}}
    assert header(played.response.headers, "mcp-session-id") == "s-new"
    assert recorded.response.json_body["id"] == 4  # the recording is not changed


def test_an_sse_answer_moves_its_response_and_progress_events() -> None:
    progress = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": 4, "progress": 0.5}}  # fmt: skip
    answer = {"jsonrpc": "2.0", "id": 4, "result": {}}
    recorded = _interaction(
        RecordedResponse(
            status=200,
            headers={"content-type": "text/event-stream"},
            events=[
                RecordedEvent(data=""),
                RecordedEvent(data=json.dumps(progress)),
                RecordedEvent(data=json.dumps(answer), event="message"),
            ],
        )
    )
    played = readdress(recorded, _live(2), {})
    events = played.response.events or []
    assert events[0].data == ""  # a priming event stays as it was
    assert json.loads(events[1].data)["params"]["progressToken"] == 2
    assert json.loads(events[2].data) == {**answer, "id": 2}
    assert events[2].event == "message"


def test_nothing_changes_when_ids_and_sessions_agree() -> None:
    recorded = _interaction(RecordedResponse(status=202))
    assert readdress(recorded, _live(4), {"mcp-session-id": "s-old"}) is recorded
    assert readdress(recorded, b"not json", {}) is recorded


def test_the_live_session_is_read_from_the_request_pairs_too() -> None:
    """The session replays hand over the request's (name, value) pairs: read (any case)
    only for an answer that names a session."""
    recorded = _interaction(
        RecordedResponse(
            status=200,
            headers={"content-type": "application/json", "Mcp-Session-Id": "s-old"},
            json_body={"jsonrpc": "2.0", "id": 4, "result": {"x": 1}},
        )
    )
    pairs = (("content-type", "application/json"), ("MCP-Session-Id", "s-new"))
    played = readdress(recorded, _live(1), pairs)
    assert header(played.response.headers, "mcp-session-id") == "s-new"
    plain = _interaction(RecordedResponse(status=200, headers={"content-type": "text/plain"}))
    assert readdress(plain, b"{}", pairs) is plain


def test_the_live_session_is_read_from_the_bytes_the_client_module_holds() -> None:
    """A replayed request hands over its headers undecoded (``headers_as_sent``): they are
    decoded for an answer that names a session, and only then."""
    recorded = _interaction(
        RecordedResponse(
            status=200,
            headers={"content-type": "application/json", "mcp-session-id": "s-old"},
            json_body={"jsonrpc": "2.0", "id": 4, "result": {"x": 1}},
        )
    )
    raw = [(b"Content-Type", b"application/json"), (b"Mcp-Session-Id", b"s-new")]
    played = readdress(recorded, _live(1), raw)
    assert header(played.response.headers, "mcp-session-id") == "s-new"
    assert played.response.json_body["id"] == 1


def test_a_standalone_stream_is_told_from_its_headers_decoded_or_not() -> None:
    from pytest_agentreplay.mcp.streams import is_standalone_stream

    raw = [(b"Accept", b"text/event-stream"), (b"Mcp-Session-Id", b"s-1")]
    text = [(k.decode(), v.decode()) for k, v in raw]
    for headers in (raw, text):
        assert is_standalone_stream("GET", headers)
        assert not is_standalone_stream("POST", headers)
    assert not is_standalone_stream("GET", [(b"Accept", b"text/event-stream")])
    assert not is_standalone_stream("GET", [(b"Mcp-Session-Id", b"s-1")])


def test_a_header_is_found_in_any_case_and_absent_as_none() -> None:
    assert header({"mcp-session-id": "s", "date": "d"}, "Mcp-Session-Id") == "s"
    assert header({"Mcp-Session-Id": "s", "date": "d"}, "mcp-session-id") == "s"
    assert header({"MCP-SESSION-ID": "s"}, "mcp-session-id") == "s"
    assert header({"date": "d", "X-Other": "o"}, "mcp-session-id") is None
    assert header({"date": "d"}, "mcp-session-id") is None
    assert header({"123": "n"}, "123") == "n"  # a name without letters: read as it is
