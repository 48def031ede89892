"""What a fake does on every call, done once or only when read (issue 29, W5): where a
method and URL go is decided once per fake and decided again when ``serve()`` adds a
route; the headers of a call are decoded and made a dict only when the log is read; a
body is read as JSON as ``json.loads`` reads it. Each through real clients."""

from __future__ import annotations

import json
import operator
from urllib.parse import urlsplit

import anthropic
import httpx2
import pytest

from pytest_agentreplay import EgressBlocked, FakeModel, Fault, Reply
from pytest_agentreplay.fakes import HTTPCall
from pytest_agentreplay.fakes.call_log import CallLog
from pytest_agentreplay.neutral import Request
from pytest_agentreplay.neutral.parts import ServerToolCall, Text, ToolCall
from pytest_agentreplay.providers import codec_for
from pytest_agentreplay.transport.router import HTTPRequest

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


GEMINI = "https://generativelanguage.googleapis.com/v1beta/models/gemini-test:generateContent"
BODIES = {  # url: a body its provider's SDK could send, with a bit of everything
    "https://api.anthropic.com/v1/messages": {
        **ASK,
        "system": [{"type": "text", "text": "be brief"}],
        "tools": [{"name": "weather", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
        ],
    },
    "https://api.openai.com/v1/chat/completions": {
        "model": "gpt-test",
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
    },
    "https://api.openai.com/v1/responses": {"model": "gpt-test", "input": "hi"},
    GEMINI: {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
}


@pytest.mark.parametrize("url", list(BODIES))
def test_a_calls_request_read_after_it_ended_is_the_one_it_was_answered_from(url: str) -> None:
    """A finished call's parsed request is not kept (issue 29, W5): read, it is parsed
    again from the call's body, equal to the parse the call was answered from, and the
    same object at every read, in ``requests`` and in ``log``."""
    seen = []

    def respond(request: Request) -> str:
        seen.append(request)
        return "again"

    hosts = ["api.anthropic.com", "api.openai.com", "generativelanguage.googleapis.com"]
    with FakeModel("hi", respond=respond, hosts=hosts) as fake, httpx2.Client() as client:
        for _ in range(2):  # scripted, then answered by respond=
            assert client.post(url, json=BODIES[url]).status_code == 200
        first = fake.requests
        assert first[1] is seen[0]  # the one handed to respond=, kept
        assert first == fake.requests and all(map(operator.is_, first, fake.requests))
        assert [c.request for c in fake.log] == first
        assert all(map(operator.is_, first, [c.request for c in fake.log]))
    provider = fake.log[0].provider
    parsed = codec_for(provider).parse_call("POST", urlsplit(url).path, BODIES[url])
    assert first == [parsed, parsed]
    assert fake.last_request is first[-1]
    if provider == "gemini":  # read from the path, the first time and again
        assert first[0].model == "gemini-test"


def test_a_request_read_while_its_call_is_open_is_the_one_kept() -> None:
    with FakeModel("a", "b") as fake, httpx2.Client() as client:
        with client.stream("POST", "https://api.anthropic.com/v1/messages", json=ASK) as r:
            during = fake.requests
            r.read()
        client.post("https://api.anthropic.com/v1/messages", json=ASK)
        after = fake.requests
    assert len(during) == 1 and after[0] is during[0]
    assert after[1] == after[0] and after[1] is not after[0]


def test_a_request_is_read_again_as_it_was_read_first_after_serve_changes_the_route() -> None:
    url = f"{GATEWAY}/v1/chat/completions"
    with FakeModel("first", "second") as fake, httpx2.Client() as client:
        fake.serve(GATEWAY)  # detected from the path: OpenAI Chat
        client.post(url, json=BODIES["https://api.openai.com/v1/chat/completions"])
        fake.serve(GATEWAY, provider="anthropic")
        client.post(url, json=ASK)
    assert [r.provider for r in fake.requests] == ["openai_chat", "anthropic"]
    assert fake.requests[0].system == "be brief"


def test_the_requests_of_a_reset_fake_are_gone_and_new_ones_read_again() -> None:
    with FakeModel("a", check_unused=False) as fake, httpx2.Client() as client:
        client.post("https://api.anthropic.com/v1/messages", json=ASK)
        fake.reset()
        assert fake.requests == [] and fake.calls == []
        with pytest.raises(IndexError):
            fake.last_request  # noqa: B018 - the read is the test
        fake.script("b")
        client.post("https://api.anthropic.com/v1/messages", json={**ASK, "model": "other"})
    assert [r.model for r in fake.requests] == ["other"]
    assert fake.last_request is fake.requests[0]
    assert [c.request.model for c in fake.log] == ["other"]


def test_the_log_reads_a_calls_request_again_until_a_reset_forgets_the_call() -> None:
    body = json.dumps(ASK).encode()
    sent = HTTPRequest("POST", "https://api.anthropic.com/v1/messages", (), body, "httpx2")
    codec = codec_for("anthropic")
    facts = codec.check_call("POST", "/v1/messages", ASK)

    def read_again(call: HTTPCall) -> Request:
        return codec.parse_call(call.method, "/v1/messages", call.json())

    log = CallLog()
    first = log.open(sent, facts, read_again)
    log.ended(first, "completed", 1, None)
    assert log.request(first) == codec.parse_call("POST", "/v1/messages", ASK)
    assert log.request(first) is log.requests[0]
    second = log.open(sent, facts, read_again)
    log.reset()  # the second call was open: forgotten with the first
    assert log.request(first) is None and log.request(second) is None
    assert log.requests == [] and log.entries == []


def test_each_logged_call_keeps_the_url_it_was_sent_to() -> None:
    """A call of a URL seen before keeps the route decision's string for it (one string
    for the calls of a URL, bench/ W5); whichever way it is kept, each call's URL, in
    ``calls`` and in ``log``, is the one its client sent, query and all."""
    base = "https://api.anthropic.com/v1/messages"
    urls = [base, f"{base}?beta=true", base, f"{base}?beta=true", f"{base}?beta=false"]
    with FakeModel(*["ok"] * len(urls)) as fake, httpx2.Client() as client:
        for url in urls:
            assert client.post(url, json=ASK).status_code == 200
    assert [c.url for c in fake.calls] == urls
    assert [c.url for c in fake.log] == urls
    assert fake.calls[0].url is fake.calls[2].url  # one string for the calls of a URL


@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("fault", [None, Fault.http(429)], ids=["no fault", "429"])
def test_a_reply_the_format_cannot_send_is_answered_with_the_providers_400_naming_it(
    stream: bool, fault: Fault | None
) -> None:
    """A plain JSON reply is checked where its bytes are written (``Codec.body_wire``), any
    other before anything is rendered: either way the call gets the provider's 400 naming
    the part, the fake reports it, and the log shows an ``http_error``."""
    reply = Reply(parts=[Text(text="Looking."), ServerToolCall.web_search("q")], fault=fault)
    ask = {"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}], "stream": stream}
    with FakeModel(reply) as fake, httpx2.Client() as client:
        answer = client.post("https://api.openai.com/v1/chat/completions", json=ask)
        problems = fake.take_problems()
    assert answer.status_code == 400
    assert "provider-side 'web_search'" in answer.json()["error"]["message"]
    [problem] = problems
    assert "cannot serve" in problem and "as openai_chat" in problem
    assert [(c.outcome, c.status) for c in fake.log] == [("http_error", 400)]


def test_stop_reason_is_tool_use_when_any_part_is_a_tool_call() -> None:
    """``Reply.stop_reason``: ``stop`` when given, else ``tool_use`` if a part (any) is a
    tool call, else ``end_turn``."""
    call = ToolCall(name="weather", args={})
    assert Reply(parts=[Text(text="a"), call, Text(text="b")]).stop_reason == "tool_use"
    assert Reply(parts=[Text(text="a"), Text(text="b")]).stop_reason == "end_turn"
    assert Reply(parts=[]).stop_reason == "end_turn"
    assert Reply(parts=[call], stop="max_tokens").stop_reason == "max_tokens"
