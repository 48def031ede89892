"""Helpers shared by the OpenAI Responses codec tests: the real ``openai`` SDK
served our bytes through ``httpx2.MockTransport``, and a byte-chunking strategy.

Nothing here knows the codec: every value comes from the SDK or the bytes given.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx2
import openai
from hypothesis import strategies as st
from openai.types.responses import Response

Handler = Callable[[httpx2.Request], httpx2.Response]
SSE_TYPE = "text/event-stream; charset=utf-8"
ASK: dict[str, Any] = {"model": "gpt-4.1", "input": "Hi"}

# Fields the SDK's *stream* helper adds while building its ``ParsedResponse``
# (structured-output parse results, ``None`` without ``text_format`` / tools).
# They are client-side conveniences, not wire fields: the non-streaming
# ``responses.create`` path never has them, so they are the only exclusion.
SDK_ONLY_FIELDS = frozenset({"parsed", "parsed_arguments"})


def client(handler: Handler, *, max_retries: int = 0) -> openai.OpenAI:
    transport = httpx2.MockTransport(handler)
    return openai.OpenAI(
        api_key="test", max_retries=max_retries, http_client=httpx2.Client(transport=transport)
    )


def async_client(handler: Any) -> openai.AsyncOpenAI:
    transport = httpx2.MockTransport(handler)
    return openai.AsyncOpenAI(
        api_key="test", max_retries=0, http_client=httpx2.AsyncClient(transport=transport)
    )


def json_response(
    body: Any, status: int = 200, headers: dict[str, str] | None = None
) -> httpx2.Response:
    return httpx2.Response(
        status, headers=headers or {"content-type": "application/json"}, json=body
    )


def sse_response(chunks: list[bytes]) -> httpx2.Response:
    return httpx2.Response(200, headers={"content-type": SSE_TYPE}, content=iter(chunks))


def async_sse_response(chunks: list[bytes]) -> httpx2.Response:
    async def gen() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return httpx2.Response(200, headers={"content-type": SSE_TYPE}, content=gen())


def sdk_create(body: dict[str, Any]) -> Response:
    """What ``client.responses.create`` makes of a JSON body."""
    return client(lambda _: json_response(body)).responses.create(**ASK)


def sdk_stream(chunks: list[bytes]) -> tuple[list[Any], Any]:
    """The SDK's own accumulator over a streamed body: (events it yielded, final)."""
    with client(lambda _: sse_response(chunks)).responses.stream(**ASK) as stream:
        events = list(stream)
        return events, final_of(stream, events)


def final_of(stream: Any, events: list[Any]) -> Any:
    """``get_final_response()``, except for a stream the API ended with
    ``response.incomplete`` (``max_output_tokens``): the SDK only finalizes on
    ``response.completed`` and raises there, so the next best reference is the
    response the SDK parsed from that terminal event."""
    if events and events[-1].type == "response.incomplete":
        return events[-1].response
    return stream.get_final_response()


def sdk_raw_events(chunks: list[bytes], *, method: str = "POST") -> Iterator[Any]:
    """The SDK's raw typed events (no accumulator): ``create(stream=True)``, or
    ``retrieve(id, stream=True)`` for a resumed background stream."""
    sdk = client(lambda _: sse_response(chunks))
    if method == "GET":
        return iter(sdk.responses.retrieve("resp_x", stream=True, starting_after=0))
    return iter(sdk.responses.create(**ASK, stream=True))


def dump(model: Any) -> Any:
    """``model_dump()`` without the SDK-only fields (see ``SDK_ONLY_FIELDS``)."""
    return strip(model.model_dump())


def strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in SDK_ONLY_FIELDS}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def cut(data: bytes, points: list[int]) -> list[bytes]:
    """``data`` split at byte offsets ``points`` (anywhere, even inside a character)."""
    edges = [0, *sorted({p for p in points if 0 < p < len(data)}), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges) if b > a]


@st.composite
def chunkings(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """A re-chunking of ``data``: whole, byte by byte, inside every multi-byte
    UTF-8 character, or at random offsets."""
    mode = draw(st.sampled_from(["whole", "bytes", "utf8", "random"]))
    if mode == "whole" or len(data) < 2:
        return [data]
    if mode == "bytes":
        return [data[i : i + 1] for i in range(len(data))]
    if mode == "utf8":  # one cut after the first byte of every multi-byte sequence
        return cut(data, [i + 1 for i, byte in enumerate(data) if byte >= 0xC0])
    return cut(data, draw(st.lists(st.integers(1, len(data) - 1), max_size=40)))
