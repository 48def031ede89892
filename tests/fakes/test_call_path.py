"""What a fake does on every call, done once or only when read (issue 29, W5): where a
method and URL go is decided once per fake and decided again when ``serve()`` adds a
route; the headers of a call are decoded and made a dict only when the log is read; a
body is read as JSON as ``json.loads`` reads it. Each through real clients."""

from __future__ import annotations

import json

import anthropic
import httpx2
import pytest

from pytest_agentreplay import EgressBlocked, FakeModel, Reply
from pytest_agentreplay.fakes import HTTPCall

ASK = {"model": "claude-test", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]}
GATEWAY = "https://gateway.example.com/llm"


def test_a_url_not_served_is_served_once_serve_adds_its_host() -> None:
    with FakeModel(Reply.text("served"), check_unused=False) as fake, httpx2.Client() as client:
        with pytest.raises(EgressBlocked):
            client.post(f"{GATEWAY}/v1/messages", json=ASK)
        fake.serve(GATEWAY)
        reply = client.post(f"{GATEWAY}/v1/messages", json=ASK).json()
    assert reply["content"][0]["text"] == "served"
    assert [c.url for c in fake.log] == [f"{GATEWAY}/v1/messages"]


def test_serving_a_url_again_with_a_provider_changes_how_its_next_call_is_read() -> None:
    url = f"{GATEWAY}/v1/chat/completions"
    with FakeModel("first", "second") as fake, httpx2.Client() as client:
        fake.serve(GATEWAY)  # detected from the path: OpenAI Chat
        first = client.post(url, json=ASK).json()
        fake.serve(GATEWAY, provider="anthropic")  # the newest route wins
        second = client.post(url, json=ASK).json()
    assert first["choices"][0]["message"]["content"] == "first"
    assert second["content"][0]["text"] == "second"
    assert [c.provider for c in fake.log] == ["openai_chat", "anthropic"]


def test_a_calls_headers_are_the_ones_the_sdk_sent_when_read(scripted_model: FakeModel) -> None:
    scripted_model.script("hi")
    client = anthropic.Anthropic(api_key="sk-ant-test", max_retries=0)
    client.messages.create(**ASK)
    call = scripted_model.calls[0]
    assert call.headers["Authorization"] == "Bearer sk-ant-test"  # as sent: names in their case
    assert call.headers["anthropic-version"]
    assert json.loads(call.headers["Content-Length"]) == len(call.content)
    assert call.headers is call.headers  # made once
    assert json.loads(call.content) == ASK
    whole = HTTPCall(call.method, call.url, dict(call.headers), call.content)
    assert call == whole and whole == call
    assert repr(call) == repr(whole) and repr(call).startswith("HTTPCall(method='POST'")
    assert scripted_model.log[0].client is not None
    assert scripted_model.log[0].client.startswith("anthropic ")


@pytest.mark.parametrize(
    "body",
    [b'{"model": "caf\xe9", "messages": []}', b'{"model": "m", "messages": [}'],
    ids=["not UTF-8", "not JSON"],
)
def test_a_body_that_is_not_json_is_refused_with_what_json_loads_says(body: bytes) -> None:
    try:
        json.loads(body)
    except ValueError as exc:
        why = str(exc)
    with FakeModel(check_unused=False) as fake, httpx2.Client() as client:
        response = client.post(
            "https://api.anthropic.com/v1/messages",
            content=body,
            headers={"content-type": "application/json"},
        )
        problems = fake.take_problems()
    assert response.status_code == 400
    assert len(problems) == 1 and f"its body is not a valid request: {why}" in problems[0]
    assert fake.log == []
