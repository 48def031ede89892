"""Clients whose transport is aiohttp, served and recorded as users run them (issue 19).

The SDKs' documented aiohttp backend (``DefaultAioHttpClient``, from httpx-aiohttp)
builds an httpx2 client whose transport is no ``HTTPTransport``: a scripted fake
never saw its calls ("No fake model or cassette serves host 'api.anthropic.com'").
Each request is now seen once, by the aiohttp hook, and every fault reaches the SDK
as that backend maps aiohttp's errors in production. litellm (``completion`` over
httpx, ``acompletion`` over its own aiohttp transport) is run in a child pytest, as
a user's suite would run it: litellm fetches its price map over the network at import
unless ``LITELLM_LOCAL_MODEL_COST_MAP=True``, and warns at import.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import anthropic
import httpx2
import openai
import pytest

from pytest_agentreplay import FakeModel, Fault, Reply
from tests.cassettes._plugin_runs import cassette, interactions, run_subprocess
from tests.sdk_raises import raises_cut
from tests.servers import ProviderServer

pytestmark = [pytest.mark.sdk, pytest.mark.anyio]
pytest_plugins = ["pytester"]

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture
def through_aiohttp(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The URLs of the requests aiohttp's ``ClientSession`` was asked to send."""
    seen: list[str] = []
    request = aiohttp.ClientSession._request

    def spy(self: aiohttp.ClientSession, method: str, url: Any, **kwargs: Any) -> Any:
        seen.append(str(url))
        return request(self, method, url, **kwargs)

    monkeypatch.setattr(aiohttp.ClientSession, "_request", spy)
    return seen


def _anthropic(**options: Any) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key="k", http_client=anthropic.DefaultAioHttpClient(), **options
    )


def _openai(**options: Any) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key="k", http_client=openai.DefaultAioHttpClient(), **options)


async def test_anthropic_over_aiohttp_create_and_stream(
    scripted_model: FakeModel, through_aiohttp: list[str]
) -> None:
    scripted_model.script(Reply.text("Whole."), Reply.text("Streamed reply."))
    async with _anthropic(max_retries=0) as client:
        message = await client.messages.create(model="c", max_tokens=9, messages=MESSAGES)
        async with client.messages.stream(model="c", max_tokens=9, messages=MESSAGES) as s:
            deltas = [text async for text in s.text_stream]
    assert message.content[0].text == "Whole."
    assert "".join(deltas) == "Streamed reply."
    assert len(deltas) > 1, "the stream came event by event"
    assert len(through_aiohttp) == 2
    assert [c.outcome for c in scripted_model.log] == ["completed", "completed"]


async def test_openai_over_aiohttp_chat_and_responses(
    scripted_model: FakeModel, through_aiohttp: list[str]
) -> None:
    scripted_model.script(Reply.text("Chat."), Reply.text("Streamed chat."), Reply.text("Resp."))
    async with _openai(max_retries=0) as client:
        chat = await client.chat.completions.create(model="g", messages=MESSAGES)  # type: ignore[arg-type]
        stream = await client.chat.completions.create(
            model="g",
            messages=MESSAGES,  # type: ignore[arg-type]
            stream=True,
        )
        deltas = [c.choices[0].delta.content async for c in stream if c.choices]
        response = await client.responses.create(model="g", input="hi")
    assert chat.choices[0].message.content == "Chat."
    assert "".join(d or "" for d in deltas) == "Streamed chat."
    assert response.output_text == "Resp."
    assert len(through_aiohttp) == 3
    assert len(scripted_model.log) == 3, "each request served once"


async def test_a_cut_stream_is_the_backends_read_error_after_its_text(
    scripted_model: FakeModel,
) -> None:
    """httpx-aiohttp maps aiohttp's ``ClientPayloadError`` to ``ReadError``, as in
    production (anthropic 2.17 and later wrap it in ``APIConnectionError``); the text
    sent before the cut reached the caller."""
    scripted_model.script(Reply.text("one two three four", fault=Fault.cut(after_events=4)))
    seen: list[str] = []
    async with _anthropic(max_retries=0) as client:

        async def read() -> None:
            async with client.messages.stream(model="c", max_tokens=9, messages=MESSAGES) as s:
                async for text in s.text_stream:
                    seen.append(text)

        with raises_cut("anthropic", transport=httpx2.ReadError):
            await read()
    assert seen, "the text sent before the cut reached the caller"
    assert "one two three four".startswith("".join(seen))
    assert (scripted_model.log[0].outcome, scripted_model.log[0].events_sent) == ("cut", 4)


async def test_429_is_retried_by_the_sdk_and_a_timeout_is_its_timeout_error(
    scripted_model: FakeModel,
) -> None:
    scripted_model.script(Fault.http(429, retry_after=0), Reply.text("ok"), Fault.timeout())
    async with _anthropic(max_retries=1) as client:
        message = await client.messages.create(model="c", max_tokens=9, messages=MESSAGES)
        assert message.content[0].text == "ok"
        with pytest.raises(anthropic.APITimeoutError):
            await client.with_options(max_retries=0).messages.create(
                model="c", max_tokens=9, messages=MESSAGES
            )
    assert [c.outcome for c in scripted_model.log] == ["http_error", "completed", "timeout"]


async def test_openai_rate_limit_error_over_aiohttp(scripted_model: FakeModel) -> None:
    scripted_model.script(Fault.http(429, retry_after=0))
    async with _openai(max_retries=0) as client:
        with pytest.raises(openai.RateLimitError):
            await client.chat.completions.create(model="g", messages=MESSAGES)  # type: ignore[arg-type]


SDK_TEST = """
import asyncio, os
import anthropic, pytest

URL = os.environ["AR_SERVER"]


async def ask(stream):
    http = anthropic.DefaultAioHttpClient()
    async with anthropic.AsyncAnthropic(api_key="k", base_url=URL, http_client=http,
                                        max_retries=0) as client:
        args = dict(model="c", max_tokens=9, messages=[{"role": "user", "content": "hi"}])
        if not stream:
            return (await client.messages.create(**args)).content[0].text
        async with client.messages.stream(**args) as s:
            return "".join([t async for t in s.text_stream])


@pytest.mark.agentreplay
@pytest.mark.parametrize("stream", [False, True])
def test_sdk_over_aiohttp(stream):
    assert asyncio.run(ask(stream)) == ("streamed" if stream else "whole")
"""


def test_the_sdks_aiohttp_backend_is_recorded_once_and_replayed(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    """One request, one interaction: the httpx client over aiohttp is not recorded a
    second time by the httpx hook."""
    pytester.makepyfile(test_user=SDK_TEST)
    server.add(Reply.text("whole"))
    server.add(Reply.text("streamed"))
    run_subprocess(pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url)
    [whole] = interactions(cassette(pytester, "test_sdk_over_aiohttp[False]"))
    [streamed] = interactions(cassette(pytester, "test_sdk_over_aiohttp[True]"))
    assert whole["response"]["json"]["content"][0]["text"] == "whole"
    assert streamed["response"]["events"][-1]["event"] == "message_stop"
    replayed = run_subprocess(pytester, AR_SERVER=server.url)
    replayed.assert_outcomes(passed=2)
    assert len(server.requests) == 2, "the replay went live"


LITELLM_TEST = """
import asyncio, os
import litellm, pytest
from pytest_agentreplay import Fault, Reply

MODELS = ["anthropic/claude-3-5-haiku-latest", "openai/gpt-4o-mini"]
ARGS = dict(messages=[{"role": "user", "content": "hi"}], api_key="k", num_retries=0)


def text_of(response, stream):
    if stream:
        return "".join(c.choices[0].delta.content or "" for c in response)
    return response.choices[0].message.content


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("stream", [False, True])
def test_completion(scripted_model, model, stream):
    scripted_model.script(Reply.text("sync reply"))
    response = litellm.completion(model=model, stream=stream, **ARGS)
    assert text_of(response, stream) == "sync reply"


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("stream", [False, True])
def test_acompletion(scripted_model, model, stream):
    scripted_model.script(Reply.text("async reply"))

    async def ask():
        response = await litellm.acompletion(model=model, stream=stream, **ARGS)
        if stream:
            return "".join([c.choices[0].delta.content or "" async for c in response])
        return response.choices[0].message.content

    assert asyncio.run(ask()) == "async reply"
    assert len(scripted_model.log) == 1


def test_acompletion_sees_a_cut(scripted_model):
    scripted_model.script(Reply.text("one two three", fault=Fault.cut(after_events=3)))

    async def ask():
        response = await litellm.acompletion(model=MODELS[0], stream=True, **ARGS)
        return [c async for c in response]

    with pytest.raises(Exception) as info:
        asyncio.run(ask())
    assert scripted_model.log[0].outcome == "cut"
    with open(os.environ["AR_OUT"], "w") as out:
        out.write(type(info.value).__name__)


@pytest.mark.agentreplay
def test_recorded(request):
    async def ask():
        response = await litellm.acompletion(
            model=MODELS[0], stream=True, api_base=os.environ["AR_SERVER"] + "/v1/messages",
            **ARGS,
        )
        return "".join([c.choices[0].delta.content or "" async for c in response])

    assert asyncio.run(ask()) == "recorded reply"
"""


def test_litellm_completion_and_acompletion(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=LITELLM_TEST)
    server.add(Reply.text("recorded reply"))
    env = {"AR_SERVER": server.url, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    result = run_subprocess(pytester, "--agentreplay-record-mode=once", **env)
    result.assert_outcomes(passed=10)
    assert (pytester.path / "out.jsonl").read_text() == "MidStreamFallbackError"
    [recorded] = interactions(cassette(pytester, "test_recorded"))
    assert "content_block_delta" in [e["event"] for e in recorded["response"]["events"]]
    replayed = run_subprocess(pytester, "-k", "recorded", **env)
    replayed.assert_outcomes(passed=1)
    assert len(server.requests) == 1, "the replay went live"
