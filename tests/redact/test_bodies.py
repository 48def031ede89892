"""Body scrubbing: JSON keys at any depth, form bodies, and secrets inside SSE ``data:``."""

from __future__ import annotations

import json

import pytest

from pytest_agentreplay.cassettes.cassette import RecordedResponse
from pytest_agentreplay.redact import Scrubber
from pytest_agentreplay.sse import decode, encode
from tests.redact._helpers import interaction, request, response

SECRET = "Zk39vPq0xLmN7aBc"


def _json(body: object, scrubber: Scrubber | None = None) -> object:
    return (scrubber or Scrubber()).scrub_request(request(json_body=body)).json_body


@pytest.mark.parametrize(
    "key",
    [
        "api_key",
        "apiKey",
        "API-KEY",
        "client_secret",
        "clientSecret",
        "access_token",
        "refresh_token",
        "id_token",
        "password",
        "Password",
        "secret",
        "private_key",
        "aws_secret_access_key",
        "session_token",
    ],
)
def test_secret_key_is_redacted_at_any_depth(key: str) -> None:
    body = {"model": "m", "outer": [{"inner": {key: SECRET, "keep": 1}}], key: SECRET}
    assert _json(body) == {
        "model": "m",
        "outer": [{"inner": {key: "REDACTED", "keep": 1}}],
        key: "REDACTED",
    }


@pytest.mark.parametrize(
    "key",
    [
        "max_tokens",
        "tokens",
        "token",
        "token_count",
        "key",
        "key_points",
        "secretary",
        "passwords_seen",
        "api",
        "secret_santa_list",
        "input_tokens",
    ],
)
def test_keys_that_merely_contain_a_secret_word_are_kept(key: str) -> None:
    body = {key: "value-1", "nested": {key: 7}}
    assert _json(body) == body


def test_logprob_tokens_are_kept() -> None:
    body = {"logprobs": {"content": [{"token": "Hello", "logprob": -0.1, "bytes": [72]}]}}
    assert _json(body) == body


def test_authorization_key_in_json_keeps_its_scheme() -> None:
    """OpenAI Responses MCP tools carry ``authorization`` / ``headers`` in the body."""
    body = {
        "tools": [
            {
                "type": "mcp",
                "server_url": "https://mcp.example/sse",
                "authorization": SECRET,
                "headers": {"Authorization": f"Bearer {SECRET}"},
            }
        ]
    }
    assert _json(body) == {
        "tools": [
            {
                "type": "mcp",
                "server_url": "https://mcp.example/sse",
                "authorization": "REDACTED",
                "headers": {"Authorization": "Bearer REDACTED"},
            }
        ]
    }


def test_client_secret_object_keeps_its_shape() -> None:
    """OpenAI Realtime sends ``client_secret: {value, expires_at}``: the SDK must still parse it."""
    body = {"id": "sess_1", "client_secret": {"value": "ek_" + SECRET, "expires_at": 1762}}
    scrubbed = Scrubber().scrub_interaction(interaction(resp=response(json_body=body)))
    assert scrubbed.response.json_body == {
        "id": "sess_1",
        "client_secret": {"value": "REDACTED", "expires_at": 1762},
    }


def test_tool_schema_with_a_password_parameter_is_untouched() -> None:
    tool = {
        "name": "login",
        "input_schema": {
            "type": "object",
            "properties": {"password": {"type": "string", "description": "the password"}},
            "required": ["password"],
            "$defs": {"Secret": {"type": "string"}},
        },
    }
    assert _json({"tools": [tool]}) == {"tools": [tool]}


def test_list_of_secrets_is_redacted_item_by_item() -> None:
    assert _json({"api_keys": 1, "api_key": [SECRET, "", 3]}) == {
        "api_keys": 1,
        "api_key": ["REDACTED", "", 3],
    }


def test_non_string_secret_values_are_kept() -> None:
    body = {"password": None, "secret": False, "api_key": ""}
    assert _json(body) == body


def test_extra_body_keys_are_redacted_whatever_the_spelling() -> None:
    scrubber = Scrubber(extra_body_keys=["tenant_id"])
    assert _json({"TenantId": "acme", "tenant-ID": "acme", "tenant": "x"}, scrubber) == {
        "TenantId": "REDACTED",
        "tenant-ID": "REDACTED",
        "tenant": "x",
    }


def test_json_body_without_secrets_is_the_same_object() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    r = request(json_body=body)
    assert Scrubber().scrub_request(r).json_body is r.json_body


def test_form_body_request_is_scrubbed_by_parameter() -> None:
    body = f"grant_type=refresh_token&refresh_token={SECRET}&client_id=app&client_secret={SECRET}"
    req = request(
        "https://auth.example/token",
        headers={"content-type": "application/x-www-form-urlencoded"},
        body=body,
    )
    scrubbed = Scrubber().scrub_request(req)
    assert scrubbed.body == (
        "grant_type=refresh_token&refresh_token=REDACTED&client_id=app&client_secret=REDACTED"
    )


def test_form_body_response_is_scrubbed_by_parameter() -> None:
    resp = response(
        headers={"content-type": "application/x-www-form-urlencoded; charset=utf-8"},
        body=f"access_token={SECRET}&scope=repo&token_type=bearer",
    )
    scrubbed = Scrubber().scrub_interaction(interaction(resp=resp)).response
    assert scrubbed.body == "access_token=REDACTED&scope=repo&token_type=bearer"


def test_text_body_with_a_json_content_type_is_scrubbed() -> None:
    req = request(
        headers={"content-type": "application/json"}, body=json.dumps({"api_key": SECRET})
    )
    assert json.loads(Scrubber().scrub_request(req).body or "") == {"api_key": "REDACTED"}


def test_plain_text_body_is_untouched() -> None:
    req = request(headers={"content-type": "text/plain"}, body=f"api_key={SECRET}")
    assert Scrubber().scrub_request(req).body == f"api_key={SECRET}"


# -- SSE ------------------------------------------------------------------------------------

UNTOUCHED = [
    '{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":3}}}',
    '{"type": "ping"}',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}    }',
    "[DONE]",
    "not json at all",
    # passes the cheap pre-check (a URL with a query), so it is parsed, but holds no secret
    '{"type": "web_search_result", "url": "https://example.com/p?id=1&lang=en#top"}',
]
WITH_SECRET = json.dumps(
    {"type": "session.created", "session": {"client_secret": {"value": SECRET}, "n": 1.0}}
)


def _stream_response() -> RecordedResponse:
    return response(
        headers={"content-type": "text/event-stream"},
        events=[UNTOUCHED[0], UNTOUCHED[1], WITH_SECRET, *UNTOUCHED[2:]],
    )


def test_secret_in_sse_data_is_redacted_and_the_data_stays_valid_json() -> None:
    resp = _stream_response()
    scrubbed = Scrubber().scrub_interaction(interaction(resp=resp)).response
    events = scrubbed.events or []
    assert SECRET not in events[2].data
    assert json.loads(events[2].data) == {
        "type": "session.created",
        "session": {"client_secret": {"value": "REDACTED"}, "n": 1.0},
    }
    # re-serialised compactly, as providers send it
    assert events[2].data == (
        '{"type":"session.created","session":{"client_secret":{"value":"REDACTED"},"n":1.0}}'
    )


def test_untouched_sse_events_keep_their_exact_bytes() -> None:
    resp = _stream_response()
    scrubbed = Scrubber().scrub_interaction(interaction(resp=resp)).response
    data = [e.data for e in scrubbed.events or []]
    assert [data[0], data[1], *data[3:]] == UNTOUCHED


def test_scrubbed_sse_stream_still_parses() -> None:
    resp = _stream_response()
    scrubbed = Scrubber().scrub_interaction(interaction(resp=resp)).response
    wire = encode(e.to_sse() for e in scrubbed.events or [])
    decoded = decode(wire)
    assert decoded.truncated is None
    assert [e.data for e in decoded.events] == [e.data for e in scrubbed.events or []]
    assert SECRET.encode() not in wire


def test_sse_event_fields_other_than_data_are_kept() -> None:
    resp = response(events=[WITH_SECRET])
    resp = resp.replace(
        events=[e.replace(event="session.created", id="7", t=0.25) for e in resp.events or []]
    )
    event = (Scrubber().scrub_interaction(interaction(resp=resp)).response.events or [])[0]
    assert (event.event, event.id, event.t) == ("session.created", "7", 0.25)


def test_signed_url_inside_sse_data_is_redacted() -> None:
    data = f'{{"type":"image","url":"https://b.example/i.png?se=1&sig={SECRET}"}}'
    resp = response(events=[data])
    event = (Scrubber().scrub_interaction(interaction(resp=resp)).response.events or [])[0]
    assert event.data == '{"type":"image","url":"https://b.example/i.png?se=1&sig=REDACTED"}'


def test_escaped_secret_key_in_sse_data_is_still_found() -> None:
    data = f'{{"api\\u005fkey": "{SECRET}"}}'
    resp = response(events=[data])
    event = (Scrubber().scrub_interaction(interaction(resp=resp)).response.events or [])[0]
    assert json.loads(event.data) == {"api_key": "REDACTED"}
