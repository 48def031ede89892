"""Drive the real google-genai SDK (and pydantic-ai's Google model) over given bytes.

The codec tests serve our bytes through ``httpx.MockTransport`` (google-genai's
default client is ``httpx``) or ``httpx2.MockTransport`` (pydantic-ai gives it an
``httpx2`` client) and compare what the SDK makes of them. :class:`Seen` reduces a
``generate_content`` answer, or the chunks of a stream, to what an agent reads: the
text, the thoughts, the function calls, the finish reason, the last usage.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx
import httpx2
from google import genai
from google.genai import types
from pydantic_ai.direct import model_request, model_request_stream
from pydantic_ai.messages import ModelRequest, ModelResponse
from pydantic_ai.models import ModelRequestParameters
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.providers.google import GoogleProvider

MODEL = "gemini-3.5-flash-lite"
Handler = Callable[[Any], Any]


@dataclass
class Seen:
    """What an agent reads from one answer (or from the chunks of a stream, joined)."""

    text: str = ""
    thoughts: str = ""
    calls: list[tuple[str, dict[str, Any], str | None]] = field(default_factory=list)
    signatures: list[bytes] = field(default_factory=list)
    finish: str | None = None
    usage: dict[str, Any] | None = None
    chunks: int = 0

    def add(self, response: types.GenerateContentResponse) -> Seen:
        """Fold one response (or chunk) in."""
        self.chunks += 1
        if response.usage_metadata is not None:
            self.usage = response.usage_metadata.model_dump(exclude_none=True)
        for candidate in response.candidates or []:
            if candidate.finish_reason is not None:
                self.finish = candidate.finish_reason.value
            for part in (candidate.content.parts if candidate.content else None) or []:
                self._part(part)
        return self

    def _part(self, part: types.Part) -> None:
        if part.thought_signature:
            self.signatures.append(part.thought_signature)
        if part.function_call is not None:
            call = part.function_call
            self.calls.append((call.name or "", dict(call.args or {}), call.id))
        elif part.thought:
            self.thoughts += part.text or ""
        elif part.text is not None:
            self.text += part.text


def b64(signature: str) -> bytes:
    """A thought signature as the SDK holds it (bytes)."""
    return base64.b64decode(signature)


def client(handler: Handler, *, retry: types.HttpRetryOptions | None = None) -> genai.Client:
    """A google-genai client whose requests ``handler`` answers (``httpx`` transport)."""
    options = types.HttpOptions(
        httpx_client=httpx.Client(transport=httpx.MockTransport(handler)), retry_options=retry
    )
    return genai.Client(api_key="test-key", http_options=options)


def async_client(handler: Handler) -> genai.Client:
    """The async twin of :func:`client` (an httpx ``AsyncClient``: no aiohttp)."""
    transport = httpx.MockTransport(handler)
    options = types.HttpOptions(httpx_async_client=httpx.AsyncClient(transport=transport))
    return genai.Client(api_key="test-key", http_options=options)


def json_handler(body: dict[str, Any], status: int = 200) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json=body)

    return handler


def sse_handler(chunks: Iterable[bytes]) -> Handler:
    chunks = list(chunks)

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.params.get("alt") == "sse"
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=iter(chunks)
        )

    return handler


def async_sse_handler(chunks: Iterable[bytes]) -> Handler:
    chunks = list(chunks)

    async def gen() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=gen())

    return handler


def generate(sdk: genai.Client, **config: Any) -> Seen:
    return Seen().add(
        sdk.models.generate_content(model=MODEL, contents="Hi", config=config or None)
    )


def stream(sdk: genai.Client, seen: Seen | None = None, **config: Any) -> Seen:
    """A streamed call, chunk by chunk into ``seen`` (which keeps what came before a raise)."""
    seen = seen if seen is not None else Seen()
    for chunk in sdk.models.generate_content_stream(
        model=MODEL, contents="Hi", config=config or None
    ):
        seen.add(chunk)
    return seen


async def agenerate(sdk: genai.Client) -> Seen:
    return Seen().add(await sdk.aio.models.generate_content(model=MODEL, contents="Hi"))


async def astream(sdk: genai.Client) -> Seen:
    seen = Seen()
    async for chunk in await sdk.aio.models.generate_content_stream(model=MODEL, contents="Hi"):
        seen.add(chunk)
    return seen


# --- pydantic-ai's Google model: the assembler of a stream -----------------------------


def _model(handler: Callable[[httpx2.Request], httpx2.Response]) -> GoogleModel:
    # A long timeout, as pydantic-ai asks of a client handed to its Google provider.
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(handler), timeout=600)
    return GoogleModel(MODEL, provider=GoogleProvider(api_key="test-key", http_client=http))


def pydantic_ai_pair(
    body: dict[str, Any], stream_bytes: bytes
) -> tuple[ModelResponse, ModelResponse]:
    """pydantic-ai's response built from ``body`` and from the stream ``stream_bytes``."""

    def json_answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json=body)

    def sse_answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=stream_bytes
        )

    messages = [ModelRequest.user_text_prompt("Hi")]
    params = ModelRequestParameters()

    async def both() -> tuple[ModelResponse, ModelResponse]:
        created = await model_request(
            _model(json_answer), messages, model_request_parameters=params
        )
        async with model_request_stream(
            _model(sse_answer), messages, model_request_parameters=params
        ) as streamed:
            async for _ in streamed:
                pass
        return created, streamed.get()

    return asyncio.run(both())


def default_client(api_version: str | None = None) -> genai.Client:
    """A google-genai client as users make it: its own HTTP client (httpx2 from
    google-genai 3.0, httpx before), which the plugin intercepts (replay, fakes).
    ``api_version`` as a recording was made with (3.0 sends to v1 by default)."""
    return genai.Client(api_key="test-key", http_options=types.HttpOptions(api_version=api_version))
