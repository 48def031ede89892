"""OpenAI-compatible providers served with ``serve()``, through their own SDKs where
they have one (``groq``, ``mistralai``) and the ``openai`` SDK elsewhere; and a
request in a format no codec speaks, which fails the test saying what it looks like.
"""

from __future__ import annotations

import asyncio
import json

import groq
import httpx
import openai
import pytest
from mistralai.client import Mistral

from pytest_agentreplay import FakeModel, Fault, Reply, Usage
from pytest_agentreplay.providers.formats import SPOKEN, looks_like, unspoken

pytestmark = pytest.mark.sdk

# The table of docs/fake-models.md: provider, base URL to serve, the model name.
OPENAI_SDK_HOSTS = [
    ("OpenRouter", "https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4.6"),
    ("DeepSeek", "https://api.deepseek.com", "deepseek-chat"),
    ("Ollama", "http://localhost:11434/v1", "llama3.2"),
    ("vLLM", "http://localhost:8000/v1", "Qwen/Qwen2.5-7B-Instruct"),
    ("Groq", "https://api.groq.com/openai/v1", "llama-3.3-70b-versatile"),
    ("Mistral", "https://api.mistral.ai/v1", "mistral-large-latest"),
]
MESSAGES = [{"role": "user", "content": "Hi"}]


@pytest.mark.parametrize(("name", "base_url", "model"), OPENAI_SDK_HOSTS, ids=str)
@pytest.mark.parametrize("stream", [False, True])
def test_openai_sdk_on_a_compatible_host(
    name: str, base_url: str, model: str, stream: bool, scripted_model: FakeModel
) -> None:
    scripted_model.serve(base_url)
    scripted_model.script(Reply.text(f"hello from {name}"))
    client = openai.OpenAI(api_key="test", base_url=base_url, max_retries=0)
    if stream:
        chunks = client.chat.completions.create(model=model, messages=MESSAGES, stream=True)  # type: ignore[arg-type]
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    else:
        answer = client.chat.completions.create(model=model, messages=MESSAGES)  # type: ignore[arg-type]
        text = answer.choices[0].message.content or ""
    assert text == f"hello from {name}"
    [call] = scripted_model.log
    assert (call.provider, call.request.model) == ("openai_chat", model)
    assert call.url.startswith(base_url.rstrip("/") + "/chat/completions")


@pytest.mark.parametrize("stream", [False, True])
def test_groq_sdk(stream: bool, scripted_model: FakeModel) -> None:
    scripted_model.serve("https://api.groq.com/openai/v1")
    scripted_model.script(Reply.tool_call("weather", {"city": "Leeds"}, id="call_1"))
    client = groq.Groq(api_key="test", max_retries=0)
    if stream:
        chunks = list(
            client.chat.completions.create(
                model="llama-3.3-70b-versatile", messages=MESSAGES, stream=True
            )
        )  # type: ignore[arg-type]
        calls = [t for c in chunks if c.choices for t in c.choices[0].delta.tool_calls or []]
        names = [t.function.name for t in calls if t.function and t.function.name]
        args = "".join(t.function.arguments or "" for t in calls if t.function)
        assert (names, json.loads(args)) == (["weather"], {"city": "Leeds"})
    else:
        answer = client.chat.completions.create(model="llama-3.3-70b-versatile", messages=MESSAGES)  # type: ignore[arg-type]
        call = answer.choices[0].message.tool_calls[0]  # type: ignore[index]
        assert (call.id, call.function.name) == ("call_1", "weather")
        assert answer.choices[0].finish_reason == "tool_calls"


def test_groq_async_and_its_rate_limit(scripted_model: FakeModel) -> None:
    scripted_model.serve("https://api.groq.com/openai/v1")
    scripted_model.script(Fault.http(429, "slow down"), Reply.text("ok"))

    async def run() -> str:
        client = groq.AsyncGroq(api_key="test", max_retries=0)
        with pytest.raises(groq.RateLimitError):
            await client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
        answer = await client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
        return answer.choices[0].message.content or ""

    assert asyncio.run(run()) == "ok"


@pytest.mark.parametrize("stream", [False, True])
def test_mistral_sdk(stream: bool, scripted_model: FakeModel) -> None:
    scripted_model.serve("https://api.mistral.ai/v1")
    scripted_model.script(Reply.text("Bonjour.", usage=Usage(input_tokens=3, output_tokens=2)))
    client = Mistral(api_key="test")
    if stream:
        events = client.chat.stream(model="mistral-large-latest", messages=MESSAGES)  # type: ignore[arg-type]
        text = "".join(str(e.data.choices[0].delta.content or "") for e in events if e.data.choices)
    else:
        answer = client.chat.complete(model="mistral-large-latest", messages=MESSAGES)  # type: ignore[arg-type]
        text = str(answer.choices[0].message.content)
        assert answer.usage.prompt_tokens == 3
    assert text == "Bonjour."
    assert scripted_model.requests[0].model == "mistral-large-latest"


def test_mistral_async(scripted_model: FakeModel) -> None:
    scripted_model.serve("https://api.mistral.ai/v1")
    scripted_model.script(Reply.text("Salut."))

    async def run() -> str:
        answer = await Mistral(api_key="test").chat.complete_async(model="m", messages=MESSAGES)  # type: ignore[arg-type]
        return str(answer.choices[0].message.content)

    assert asyncio.run(run()) == "Salut."


# -- a format no codec speaks -----------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "url", "body", "looks"),
    [
        (
            "POST",
            "https://api.cohere.com/v2/chat",
            {"model": "command-r", "messages": MESSAGES},
            "Cohere Chat (v2)",
        ),
        (
            "POST",
            "http://localhost:11434/api/chat",
            {"model": "llama3.2", "messages": MESSAGES},
            "Ollama's native API",
        ),
        (
            "POST",
            "https://api.openai.com/v1/embeddings",
            {"model": "e", "input": "x"},
            "an embeddings call",
        ),
        (
            "POST",
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:embedContent",
            {"content": {}},
            "Gemini embeddings",
        ),
        (
            "POST",
            "https://api.anthropic.com/v1/complete",
            {"prompt": "x"},
            "Anthropic Text Completions (legacy)",
        ),
    ],
)
def test_an_unspoken_format_fails_saying_what_it_looks_like(
    method: str, url: str, body: dict[str, object], looks: str
) -> None:
    host = httpx.URL(url)
    fake = FakeModel(hosts=[host.host])
    fake.serve(
        f"{host.scheme}://{host.host}:{host.port}" if host.port else f"{host.scheme}://{host.host}"
    )
    with fake, httpx.Client() as client:
        response = client.request(method, url, json=body)
        problems = fake.take_problems()  # checked below: the block must not fail for them
    assert response.status_code == 404
    [problem] = problems
    assert f"{method} {host.raw_path.decode()} looks like {looks}, which no codec speaks" in problem
    for name, _ in SPOKEN:
        assert name in problem
    assert url in problem  # the request itself is shown


def test_the_hint_says_how_to_reach_a_spoken_format() -> None:
    message = unspoken("POST", "/v2/chat", {"model": "command-r"})
    assert "OpenAI Chat Completions at https://api.cohere.ai/compatibility/v1" in message
    vertex = "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude:rawPredict"
    assert "serve(url, provider='anthropic')" in unspoken("POST", vertex, {})
    assert looks_like("GET", "/v1/models", None) == ("a model list", "")
    assert "is not a model call in any format it speaks" in unspoken("POST", "/what", None)


def test_a_known_path_is_not_reported_as_unspoken(scripted_model: FakeModel) -> None:
    scripted_model.serve("https://api.cohere.com/compatibility/v1")
    scripted_model.script(Reply.text("compatible"))
    client = openai.OpenAI(api_key="test", base_url="https://api.cohere.com/compatibility/v1")
    answer = client.chat.completions.create(model="command-a", messages=MESSAGES)  # type: ignore[arg-type]
    assert answer.choices[0].message.content == "compatible"
