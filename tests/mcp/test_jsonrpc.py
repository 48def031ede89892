"""JSON-RPC 2.0 messages: told apart, keyed for matching, and their ids re-addressed."""

from __future__ import annotations

import json

import pytest

from pytest_agentreplay.mcp import jsonrpc

CALL = {
    "jsonrpc": "2.0",
    "id": 4,
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"a": 1}, "_meta": {"progressToken": 4}},
}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {"sampling": {}},
        "clientInfo": {"name": "mcp", "version": "2.3.0"},
    },
}


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (CALL, "request"),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, "notification"),
        ({"jsonrpc": "2.0", "id": 4, "result": {}}, "response"),
        ({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "x"}}, "response"),
    ],
)
def test_kinds(message: dict[str, object], expected: str) -> None:
    assert jsonrpc.is_message(message)
    assert jsonrpc.kind(message) == expected


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"  ",
        b"[]",
        b'{"model": "x"}',
        b'{"jsonrpc": "1.0", "method": "a"}',
        b"{not json",
        b"[1]",
    ],
)
def test_non_jsonrpc_bodies_are_none(body: bytes) -> None:
    assert jsonrpc.parse(body) is None


def test_a_batch_is_a_list_of_messages() -> None:
    batch = [CALL, {"jsonrpc": "2.0", "method": "notifications/cancelled"}]
    assert jsonrpc.parse(json.dumps(batch).encode()) == batch
    assert jsonrpc.request_ids(batch) == [4]


def test_match_view_drops_id_meta_and_client_info() -> None:
    view = jsonrpc.match_view(CALL)
    assert view == {
        "jsonrpc": "2.0",
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1}},
    }
    assert CALL["params"]["_meta"] == {"progressToken": 4}  # the original is untouched


def test_initialize_is_matched_by_method_and_protocol_version() -> None:
    other = {
        **INIT,
        "id": 9,
        "params": {**INIT["params"], "clientInfo": {"name": "x", "version": "9"}},
    }
    assert jsonrpc.match_view(INIT) == jsonrpc.match_view(other)
    newer = {**INIT, "params": {**INIT["params"], "protocolVersion": "2026-07-28"}}
    assert jsonrpc.match_view(INIT) != jsonrpc.match_view(newer)


def test_id_map_pairs_requests_in_order_and_skips_equal_ids() -> None:
    live = {**CALL, "id": 7}
    assert jsonrpc.id_map(CALL, live) == {4: 7}
    assert jsonrpc.id_map(CALL, CALL) == {}
    assert jsonrpc.id_map([CALL, {**CALL, "id": 5}], [{**CALL, "id": "a"}, {**CALL, "id": 5}]) == {
        4: "a"
    }


def test_rewrite_ids_in_a_json_body() -> None:
    body = b'{"jsonrpc": "2.0", "id": 4, "result": {"content": []}}'
    out = json.loads(jsonrpc.rewrite_ids(body, {4: 7}))
    assert out == {"jsonrpc": "2.0", "id": 7, "result": {"content": []}}
    assert jsonrpc.rewrite_ids(body, {5: 7}) is body
    assert jsonrpc.rewrite_ids(b"not json", {4: 7}) == b"not json"


def test_an_int_id_is_not_a_string_id() -> None:
    body = b'{"jsonrpc": "2.0", "id": "4", "result": {}}'
    assert jsonrpc.rewrite_ids(body, {4: 7}) is body


def test_rewrite_event_data_moves_response_ids_and_progress_tokens() -> None:
    data = '{"jsonrpc":"2.0","id":4,"result":{}}'
    assert json.loads(jsonrpc.rewrite_event_data(data, {4: 1}))["id"] == 1
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 4, "progress": 1},
    }
    moved = json.loads(jsonrpc.rewrite_event_data(json.dumps(progress), {4: 1}))
    assert moved["params"] == {"progressToken": 1, "progress": 1}
    assert jsonrpc.rewrite_event_data("", {4: 1}) == ""


def test_a_server_request_in_a_stream_keeps_its_own_id() -> None:
    ask = '{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{}}'
    assert jsonrpc.rewrite_event_data(ask, {4: 1}) == ask


def test_answers_says_when_every_request_has_its_response() -> None:
    assert jsonrpc.answers([4], {"jsonrpc": "2.0", "id": 4, "result": {}})
    assert not jsonrpc.answers([4], {"jsonrpc": "2.0", "id": "4", "result": {}})
    assert not jsonrpc.answers([], {"jsonrpc": "2.0", "id": 4, "result": {}})
    assert not jsonrpc.answers([4, 5], [{"jsonrpc": "2.0", "id": 4, "result": {}}])


def test_error_response_shape() -> None:
    error = jsonrpc.error_response(3, jsonrpc.SERVER_ERROR, "no recording", {"closest": "x"})
    assert error == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32000, "message": "no recording", "data": {"closest": "x"}},
    }
    assert jsonrpc.error_response(True, -32600, "bad")["id"] is None
