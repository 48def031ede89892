"""The stream consumers of W2, W3 and W6 (raw bytes, raw lines, httpx-sse, the SDKs) and
the physical floors they are compared with: the same body, already in memory."""

from __future__ import annotations

import json
from typing import Any

from .config import ANTHROPIC_MODEL, API_KEY, FAKE_BASE, OPENAI_BASE, OPENAI_MODEL, now
from .data import StreamFixture, text_from_payloads


# ---------------------------------------------------------------------------------
# Stream consumers (W2, W3, W6).  Each returns a sample dict; `collect` (a list) is
# only passed for the untimed verification run.
# ---------------------------------------------------------------------------------
def consume_raw_bytes(client, fx: StreamFixture, hx, collect=None) -> dict:
    first = None
    chunks = nbytes = 0
    first_len = 0
    t0 = now()
    with client.stream("POST", fx.url, content=fx.request_body, headers=fx.request_headers) as r:
        for chunk in r.iter_bytes():
            if first is None:
                first = now()
                first_len = len(chunk)
            chunks += 1
            nbytes += len(chunk)
            if collect is not None:
                collect.append(chunk)
    t1 = now()
    return {
        "total": t1 - t0,
        "ttfe": first - t0,
        "items": chunks,
        "bytes": nbytes,
        "chunks": chunks,
        "first_chunk_bytes": first_len,
    }


def consume_raw_lines(client, fx: StreamFixture, hx, collect=None) -> dict:
    first = None
    n = 0
    t0 = now()
    with client.stream("POST", fx.url, content=fx.request_body, headers=fx.request_headers) as r:
        for line in r.iter_lines():
            if line.startswith("data:"):
                if first is None:
                    first = now()
                n += 1
                if collect is not None:
                    collect.append(line[5:].strip())
    t1 = now()
    return {"total": t1 - t0, "ttfe": first - t0, "items": n}


def consume_httpx_sse(client, fx: StreamFixture, hx, collect=None) -> dict:
    from httpx_sse import EventSource

    first = None
    n = 0
    t0 = now()
    with client.stream("POST", fx.url, content=fx.request_body, headers=fx.request_headers) as r:
        for sse in EventSource(r).iter_sse():
            if first is None:
                first = now()
            n += 1
            if collect is not None:
                collect.append(sse.data)
    t1 = now()
    return {"total": t1 - t0, "ttfe": first - t0, "items": n}


def consume_anthropic_sdk(client, fx: StreamFixture, hx, collect=None) -> dict:
    import anthropic

    sdk = anthropic.Anthropic(
        api_key=API_KEY, base_url=FAKE_BASE, max_retries=0, http_client=client
    )
    first = None
    n = 0
    t0 = now()
    stream = sdk.messages.create(
        model=ANTHROPIC_MODEL,
        max_tokens=64000,
        stream=True,
        messages=[{"role": "user", "content": "Write a very long story."}],
    )
    for event in stream:
        if first is None:
            first = now()
        n += 1
        if collect is not None and event.type == "content_block_delta":
            collect.append(event.delta.text)
    t1 = now()
    return {"total": t1 - t0, "ttfe": first - t0, "items": n}


def consume_anthropic_helper(client, fx: StreamFixture, hx, collect=None) -> dict:
    """anthropic's high-level messages.stream() helper (accumulates a snapshot per event)."""
    import anthropic

    sdk = anthropic.Anthropic(
        api_key=API_KEY, base_url=FAKE_BASE, max_retries=0, http_client=client
    )
    first = None
    n = 0
    t0 = now()
    with sdk.messages.stream(
        model=ANTHROPIC_MODEL,
        max_tokens=64000,
        messages=[{"role": "user", "content": "Write a very long story."}],
    ) as stream:
        for text in stream.text_stream:
            if first is None:
                first = now()
            n += 1
            if collect is not None:
                collect.append(text)
        stream.get_final_message()
    t1 = now()
    return {"total": t1 - t0, "ttfe": first - t0, "items": n}


def consume_openai_sdk(client, fx: StreamFixture, hx, collect=None) -> dict:
    import openai

    sdk = openai.OpenAI(api_key=API_KEY, base_url=OPENAI_BASE, max_retries=0, http_client=client)
    first = None
    n = 0
    t0 = now()
    stream = sdk.chat.completions.create(
        model=OPENAI_MODEL,
        stream=True,
        stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "Write a very long story."}],
    )
    for chunk in stream:
        if first is None:
            first = now()
        n += 1
        if collect is not None and chunk.choices and chunk.choices[0].delta.content:
            collect.append(chunk.choices[0].delta.content)
    t1 = now()
    return {"total": t1 - t0, "ttfe": first - t0, "items": n}


# consumer name -> (function, stack, what `items` counts, expected items, how to verify)
CONSUMERS: dict[str, dict[str, Any]] = {
    "raw-bytes": {"fn": consume_raw_bytes, "stack": "httpx", "unit": "chunks", "floor": None},
    "raw-lines": {
        "fn": consume_raw_lines,
        "stack": "httpx",
        "unit": "data lines",
        "floor": "floor:lines",
    },
    "httpx-sse": {
        "fn": consume_httpx_sse,
        "stack": "httpx",
        "unit": "SSE events",
        "floor": "floor:lines",
        "needs": "httpx_sse",  # in the bench extra only: without it the consumer is skipped
    },
    "anthropic-sdk": {
        "fn": consume_anthropic_sdk,
        "stack": "httpx2",
        "unit": "SDK events",
        "floor": "floor:lines+json",
    },
    "anthropic-helper": {
        "fn": consume_anthropic_helper,
        "stack": "httpx2",
        "unit": "text deltas",
        "floor": "floor:lines+json",
    },
    "openai-sdk": {
        "fn": consume_openai_sdk,
        "stack": "httpx2",
        "unit": "SDK chunks",
        "floor": "floor:lines+json",
    },
}


def expected_items(consumer: str, fx: StreamFixture) -> int | None:
    if consumer == "raw-bytes":
        return None  # depends on the contender's chunking
    if consumer in ("raw-lines", "httpx-sse"):
        return fx.data_lines
    if consumer == "anthropic-helper":
        return fx.k
    return fx.sdk_items


def verify(consumer: str, fx: StreamFixture, collected: list) -> str | None:
    """None if the consumer saw exactly the recorded stream, else what went wrong."""
    if consumer == "raw-bytes":
        got = b"".join(collected)
        return None if got == fx.body else f"body differs ({len(got)} vs {len(fx.body)} bytes)"
    if consumer in ("raw-lines", "httpx-sse"):
        text = text_from_payloads(fx.kind, collected)
    else:
        text = "".join(collected)
    return None if text == fx.text else f"text differs ({len(text)} vs {len(fx.text)} chars)"


# ---------------------------------------------------------------------------------
# Physical floors (pure Python on bytes already in memory)
# ---------------------------------------------------------------------------------
def floor_lines(fx: StreamFixture) -> dict:
    """Split the in-memory body into lines and count the `data:` lines."""
    t0 = now()
    n = 0
    for line in fx.body.split(b"\n"):
        if line.startswith(b"data:"):
            n += 1
    return {"total": now() - t0, "ttfe": None, "items": n}


def floor_lines_json(fx: StreamFixture) -> dict:
    """Decode, split into lines, json.loads every `data:` payload: the least any SDK must do."""
    t0 = now()
    n = 0
    loads = json.loads
    for line in fx.body.decode().split("\n"):
        if line.startswith("data:"):
            payload = line[5:].strip()
            if payload != "[DONE]":
                loads(payload)
            n += 1
    return {"total": now() - t0, "ttfe": None, "items": n}


FLOORS = {"floor:lines": floor_lines, "floor:lines+json": floor_lines_json}
