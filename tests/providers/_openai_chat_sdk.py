"""Test plumbing: the real ``openai`` SDK talking to our bytes through ``httpx2.MockTransport``.

Nothing here fakes the SDK: requests go through the real client (retries,
decoding, SSE parsing, stream accumulation); only the network is replaced by a
handler that renders with :class:`OpenAIChatCodec` or serves stored bytes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

import httpx2
import openai

from pytest_agentreplay.neutral import Reply
from pytest_agentreplay.providers.base import IdFactory, RenderContext
from pytest_agentreplay.providers.openai_chat import OpenAIChatCodec
from pytest_agentreplay.sse import encode

Handler = Callable[[httpx2.Request], httpx2.Response]
BASE_URL = "https://api.openai.com/v1"
MESSAGES: list[Any] = [{"role": "user", "content": "Hello"}]


def cut(body: bytes, sizes: Sequence[int]) -> list[bytes]:
    """``body`` cut into pieces whose byte sizes cycle through ``sizes`` (so cuts
    land anywhere, inside CRLF pairs and multi-byte UTF-8 sequences included)."""
    pieces, i, k = [], 0, 0
    while i < len(body):
        size = max(1, sizes[k % len(sizes)])
        pieces.append(body[i : i + size])
        i += size
        k += 1
    return pieces


class _Chunks(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """A response body delivered piece by piece, to sync and async clients alike."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    def __iter__(self) -> Iterator[bytes]:
        yield from self.pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            yield piece


def sse_response(
    body: bytes, headers: dict[str, str], sizes: Sequence[int] = ()
) -> httpx2.Response:
    """A 200 streaming response carrying ``body`` in pieces of ``sizes`` bytes."""
    pieces = cut(body, sizes) if sizes else [body]
    return httpx2.Response(200, headers=headers, stream=_Chunks(pieces))


class FakeServer:
    """Renders ``replies`` in turn with ``codec``, as a provider would: the request
    JSON the SDK sent picks streaming or not and the stream options. Each call
    uses a fresh ``IdFactory(seed)``, so a reply rendered streaming and
    non-streaming gets the same ids. ``responses`` are served first, if any."""

    def __init__(
        self,
        codec: OpenAIChatCodec,
        replies: Sequence[Reply],
        *,
        seed: str = "chat",
        sizes: Sequence[int] = (),
        responses: Sequence[httpx2.Response] = (),
    ) -> None:
        self.codec = codec
        self.replies = list(replies)
        self.seed = seed
        self.sizes = sizes
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []

    def context(self, body: dict[str, Any]) -> RenderContext:
        return RenderContext(request=self.codec.parse_request(body), ids=IdFactory(self.seed))

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        if self.responses:
            return self.responses.pop(0)
        reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
        ctx = self.context(body)
        if body.get("stream"):
            data = encode(self.codec.render_events(reply, ctx))
            headers = self.codec.response_headers(ctx, streaming=True)
            return sse_response(data, headers, self.sizes)
        payload = self.codec.render_body(reply, ctx)
        return httpx2.Response(
            200,
            headers=self.codec.response_headers(ctx, streaming=False),
            content=json.dumps(payload).encode(),
        )


def client(handler: Handler, *, max_retries: int = 0) -> openai.OpenAI:
    """A real sync client whose transport is ``handler``."""
    return openai.OpenAI(
        api_key="test",
        base_url=BASE_URL,
        max_retries=max_retries,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )


def async_client(handler: Handler, *, max_retries: int = 0) -> openai.AsyncOpenAI:
    """A real async client whose transport is ``handler``."""
    return openai.AsyncOpenAI(
        api_key="test",
        base_url=BASE_URL,
        max_retries=max_retries,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
    )


def drop_keys(value: Any, keys: frozenset[str]) -> Any:
    """``value`` with every dict key in ``keys`` removed, recursively."""
    if isinstance(value, dict):
        return {k: drop_keys(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [drop_keys(v, keys) for v in value]
    return value
