"""Call logs say which client library sent each call (issue 30, item 7): read from the
``User-Agent``, the Stainless SDKs' ``x-stainless-*`` headers (anthropic, openai),
google-genai's ``x-goog-api-client`` and the HTTP clients' defaults. Checked with the
real SDKs and clients, each through a fake in this process."""

from __future__ import annotations

import asyncio
import platform

import aiohttp
import anthropic
import httpx
import httpx2
import openai
import pytest
from google import genai

from pytest_agentreplay import FakeModel, Reply, UnexpectedModelCall
from pytest_agentreplay.transport.clients import client_library

ASK = {"model": "claude-test", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}]}
CHAT = {"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}]}
RUNTIME = f"{platform.python_implementation()} {platform.python_version()}"


def test_the_sdks_and_clients_are_named_in_the_fakes_log(scripted_model: FakeModel) -> None:
    scripted_model.script(*[Reply.text(str(n)) for n in range(7)])

    anthropic.Anthropic(api_key="test", max_retries=0).messages.create(**ASK)

    async def asynchronous() -> None:
        async with anthropic.AsyncAnthropic(api_key="test", max_retries=0) as client:
            await client.messages.create(**ASK)

    asyncio.run(asynchronous())
    openai.OpenAI(api_key="test", max_retries=0).chat.completions.create(**CHAT)
    sdk = genai.Client(api_key="test-key")
    sdk.models.generate_content(model="gemini-3.5-flash-lite", contents="hi")
    httpx.post("https://api.openai.com/v1/chat/completions", json=CHAT)
    httpx2.post("https://api.openai.com/v1/chat/completions", json=CHAT)

    async def with_aiohttp() -> None:
        async with aiohttp.ClientSession() as session:
            url = "https://api.openai.com/v1/chat/completions"
            async with session.post(url, json=CHAT) as response:
                await response.read()

    asyncio.run(with_aiohttp())

    clients = [call.client for call in scripted_model.log]
    assert clients[:3] == [
        f"anthropic {anthropic.__version__} (python, {RUNTIME})",
        f"anthropic {anthropic.__version__} (python, {RUNTIME}, async)",
        f"openai {openai.__version__} (python, {RUNTIME})",
    ]
    assert clients[3] == f"google-genai {genai.__version__} (python {platform.python_version()})"
    assert clients[4:] == [
        f"httpx {httpx.__version__}",
        f"httpx2 {httpx2.__version__}",
        f"aiohttp {aiohttp.__version__}",
    ]
    # The raw request shows the same, for the calls the log has not ended yet.
    assert [call.client for call in scripted_model.calls] == clients


@pytest.mark.parametrize(
    ("headers", "named"),
    [
        ({"user-agent": "node"}, "node fetch (node)"),
        ({"User-Agent": "undici"}, "node fetch (undici)"),
        ({"user-agent": "curl/8.5.0"}, "curl 8.5.0"),
        ({"user-agent": "python-requests/2.32.3"}, "requests 2.32.3"),
        ({"user-agent": "Python-urllib/3.12"}, "urllib 3.12"),
        (
            {
                "user-agent": "OpenAI/JS 5.1.0",
                "x-stainless-lang": "js",
                "x-stainless-package-version": "5.1.0",
                "x-stainless-runtime": "node",
                "x-stainless-runtime-version": "v20.20.2",
            },
            "openai 5.1.0 (js, node v20.20.2)",
        ),
        (
            {"user-agent": "my-agent/1.0 (+https://example.org)"},
            "my-agent/1.0 (+https://example.org)",
        ),
        ({"user-agent": "x" * 200}, "x" * 79 + "…"),
        ({"accept": "*/*"}, None),
    ],
)
def test_what_each_library_sends_is_named(headers: dict[str, str], named: str | None) -> None:
    assert client_library(headers) == named
    assert client_library(list(headers.items())) == named
    # as the client module holds them (a replayed call's log reads them undecoded)
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    assert client_library(raw) == named
    shouting = [(k.upper().encode(), v.encode()) for k, v in headers.items()]
    assert client_library([(b"X-Api-Key", b"sk-secret"), *shouting]) == named


def test_a_call_past_the_script_names_its_client() -> None:
    fake = FakeModel()
    with fake:
        with pytest.raises(UnexpectedModelCall) as surprise:
            openai.OpenAI(api_key="test", max_retries=0).chat.completions.create(**CHAT)
        fake.take_problems()  # the surprise is what this test is about
    assert (
        "POST https://api.openai.com/v1/chat/completions "
        f"(sent by openai {openai.__version__} (python, {RUNTIME}))\n"
    ) in str(surprise.value)
