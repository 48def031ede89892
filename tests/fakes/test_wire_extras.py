"""What real gateways and overloaded providers add to a response, scripted.

``Reply(event_fields=...)`` adds fields to every streamed event (a gateway's
``"error": null``); a fault's ``retry_after`` / ``request_id`` / ``headers`` arrive
with the status line, also on a stream that fails after its 200. Each is checked on
the raw bytes the real SDK received and on what the SDK makes of them.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from pydantic import ValidationError

from pytest_agentreplay import FakeModel, Fault, Reply
from pytest_agentreplay.providers import codec_for
from pytest_agentreplay.providers.base import RenderContext
from pytest_agentreplay.transport.answer import with_fields
from tests import sdk

OPENAI = ("openai_chat", "openai_responses")
REQUEST_ID = {"anthropic": "request-id", "openai_chat": "x-request-id"}
REQUEST_ID["openai_responses"] = "x-request-id"


def _raw(provider: str) -> Any:
    """A streamed call through the SDK's raw-response API: headers and body lines."""
    client = sdk.client(provider)
    args = {**sdk._messages(provider, "Hi"), "stream": True}
    if provider == "anthropic":
        return client.messages.with_streaming_response.create(**args)
    if provider == "openai_chat":
        return client.chat.completions.with_streaming_response.create(**args)
    return client.responses.with_streaming_response.create(**args)


def _data(lines: list[str]) -> list[Any]:
    """The JSON data of every ``data:`` line ([DONE] left out)."""
    out = []
    for line in lines:
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            out.append(json.loads(line[5:]))
    return out


# -- extra fields on every event -------------------------------------------------------


@pytest.mark.parametrize("provider", sdk.PROVIDERS)
@pytest.mark.parametrize("value", [None, ""], ids=["null", "empty"])
def test_event_fields_reach_every_event_and_the_sdk_tolerates_them(
    provider: str, value: str | None, scripted_model: FakeModel
) -> None:
    reply = Reply.text("one two three", event_fields={"error": value})
    scripted_model.script(reply, reply)
    with _raw(provider) as response:
        records = _data(list(response.iter_lines()))
    assert records
    assert [r["error"] for r in records] == [value] * len(records)
    seen = sdk.call(provider, stream=True)
    assert (seen.text, "".join(seen.deltas)) == ("one two three", "one two three")


def test_event_fields_keep_the_fields_an_event_has(scripted_model: FakeModel) -> None:
    """Anthropic's error event has its own ``error`` object: the gateway's
    ``"error": null`` must not overwrite it, or the SDK would see no error."""
    scripted_model.script(
        Reply.text(
            "one two three",
            fault=Fault.error_event(after_events=2),
            event_fields={"error": None, "gateway": "edge-1"},
        )
    )
    with pytest.raises(anthropic.APIStatusError) as info:
        sdk.call("anthropic", stream=True)
    body: Any = info.value.body
    assert body["error"]["type"] == "overloaded_error"
    assert body["gateway"] == "edge-1"


def test_a_json_body_is_sent_as_the_provider_sends_it(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text("hi", event_fields={"error": None}))
    client = sdk.client("anthropic")
    raw = client.messages.with_raw_response.create(**sdk._messages("anthropic", "Hi"))
    assert "error" not in json.loads(raw.http_response.content)


def test_a_truthy_error_on_a_responses_event_is_an_error_for_the_sdk(
    scripted_model: FakeModel,
) -> None:
    """The SDK raises on any record whose ``error`` is truthy; the fold agrees."""
    reply = Reply.text("hi", event_fields={"error": "upstream hiccup"})
    scripted_model.script(reply)
    with pytest.raises(openai.APIError, match="An error occurred during streaming"):
        sdk.call("openai_responses", stream=True)
    codec = codec_for("openai_responses")
    events = with_fields(codec.render_events(reply, RenderContext()), reply.event_fields)
    folded = codec.fold_detailed(list(events))  # type: ignore[arg-type]
    assert folded.error == {"message": "upstream hiccup"}
    assert not folded.complete


@pytest.mark.parametrize("fields", [{"x": float("nan")}, {"x": object()}], ids=["nan", "obj"])
def test_event_fields_must_be_json(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="event_fields must be JSON data"):
        Reply.text("hi", event_fields=fields)


# -- headers of a response that fails after its 200 ------------------------------------


@pytest.mark.parametrize("provider", sdk.PROVIDERS)
def test_a_cut_stream_carries_retry_after_and_the_request_id(
    provider: str, scripted_model: FakeModel
) -> None:
    scripted_model.script(
        Reply.text(
            "a b c d e f",
            fault=Fault.cut(after_events=2, retry_after=7, request_id="req_cut_1"),
        )
    )
    with _raw(provider) as response:
        assert response.status_code == 200  # the headers came with the 200...
        assert response.headers["retry-after"] == "7"
        assert response.headers[REQUEST_ID[provider]] == "req_cut_1"
        with pytest.raises(httpx2.RemoteProtocolError):  # ...then the body failed
            list(response.iter_lines())
    assert scripted_model.log[0].outcome == "cut"


def test_an_anthropic_error_event_names_the_request_of_its_response(
    scripted_model: FakeModel,
) -> None:
    scripted_model.script(
        Reply.text("a b c", fault=Fault.error_event(after_events=1, retry_after=1.5)),
        Reply.text("a b c", fault=Fault.error_event(request_id="req_given", retry_after=3)),
    )
    with pytest.raises(anthropic.APIStatusError) as drawn:
        sdk.call("anthropic", stream=True)
    headers = drawn.value.response.headers
    assert headers["retry-after"] == "1.5"
    body: Any = drawn.value.body
    assert body["request_id"] == headers["request-id"]  # one id, as the live API sends
    assert body["request_id"].startswith("req_011C")
    with pytest.raises(anthropic.APIStatusError) as given:
        sdk.call("anthropic", stream=True)
    assert given.value.response.headers["request-id"] == "req_given"
    assert given.value.body["request_id"] == "req_given"  # type: ignore[index]
    assert given.value.request_id == "req_given"


@pytest.mark.parametrize("provider", OPENAI)
def test_an_openai_error_event_carries_the_faults_headers(
    provider: str, scripted_model: FakeModel
) -> None:
    scripted_model.script(
        Reply.text(
            "a b c",
            fault=Fault.error_event(
                "server_error", "boom", request_id="req_o1", headers={"x-ratelimit-x": "0"}
            ),
        )
    )
    with _raw(provider) as response:
        lines = list(response.iter_lines())
        assert response.headers["x-request-id"] == "req_o1"
        assert response.headers["x-ratelimit-x"] == "0"
    assert any("boom" in line for line in lines)


@pytest.mark.parametrize("provider", sdk.PROVIDERS)
def test_an_http_fault_sends_the_given_request_id(provider: str, scripted_model: FakeModel) -> None:
    scripted_model.script(Fault.http(529 if provider == "anthropic" else 503, request_id="req_h"))
    module = anthropic if provider == "anthropic" else openai
    with pytest.raises(module.APIStatusError) as info:
        sdk.call(provider, stream=False)
    assert info.value.response.headers[REQUEST_ID[provider]] == "req_h"
    assert info.value.request_id == "req_h"


def test_an_error_event_on_a_call_not_streamed_keeps_its_headers(
    scripted_model: FakeModel,
) -> None:
    scripted_model.script(Reply.text("x", fault=Fault.error_event(request_id="r1", retry_after=2)))
    with pytest.raises(anthropic.OverloadedError) as info:
        sdk.call("anthropic", stream=False)
    assert info.value.response.headers["retry-after"] == "2"
    assert info.value.request_id == "r1"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Fault.timeout(retry_after=1), "a timeout before the response sends no headers"),
        (lambda: Fault.cut(retry_after=-1), "retry_after must be >= 0"),
        (lambda: Fault.cut(headers={"x-a": "1\r\nset-cookie: a=b"}), "cannot hold CR, LF"),
        (lambda: Fault.cut(headers={"bad name": "1"}), "not a valid HTTP header name"),
        (lambda: Fault.cut(request_id="r\n1"), "cannot hold CR, LF"),
    ],
)
def test_fault_headers_are_checked_when_the_fault_is_built(build: Any, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        build()


def test_a_fault_describes_its_headers() -> None:
    fault = Fault.cut(after_events=3, retry_after=30, request_id="req_1", headers={"x-a": "b"})
    assert fault.describe() == "cut after 3 events [retry-after 30, request id req_1, x-a: b]"


def test_fault_headers_replace_the_defaults_whatever_their_case() -> None:
    cut = Fault.cut(1, headers={"Request-Id": "mine"})
    with FakeModel(Reply.text("a b", fault=cut)) as fake, _raw("anthropic") as response:
        assert response.headers.get_list("request-id") == ["mine"]
        with pytest.raises(httpx2.RemoteProtocolError):
            list(response.iter_lines())
    assert fake.log[0].outcome == "cut"
