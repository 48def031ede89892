"""Synthetic, deterministic data: the interactions of W1 and the SSE streams of W2 / W3,
from fixed seeds."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from typing import Any

from .config import ANTHROPIC_MODEL, ANTHROPIC_URL, API_KEY, OPENAI_MODEL, OPENAI_URL

# ---------------------------------------------------------------------------------
# Synthetic, deterministic data
# ---------------------------------------------------------------------------------
VOCAB = (
    "the of and to in is you that it he was for on are as with his they at be this have from or "
    "one had by word but not what all were we when your can said there use an each which she do how "
    "their if will up other about out many then them these so some her would make like him into time "
    "has look two more write go see number no way could people my than first water been call who its "
    "now find long down day did get come made may part agent tool result stream token model replay "
    "record cassette request response plan step search read file patch test fix build run check"
).split()


def sentence(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(n_words))


def jdump(obj: Any) -> bytes:
    """Compact JSON, the way the SDKs put it on the wire."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


@dataclasses.dataclass
class Interaction:
    request_body: bytes
    response_body: bytes
    response_headers: list[tuple[str, str]]


@dataclasses.dataclass
class ScalingFixture:
    """N small JSON interactions: POST /v1/messages, all bodies distinct."""

    n: int
    seed: int
    url: str
    request_headers: dict[str, str]
    interactions: list[Interaction]

    def digest(self) -> str:
        h = hashlib.sha256()
        for it in self.interactions:
            h.update(it.request_body)
            h.update(it.response_body)
        return h.hexdigest()[:16]


def _json_response_headers(rng: random.Random, i: int) -> list[tuple[str, str]]:
    return [
        ("date", "Sun, 29 Nov 2026 12:00:00 GMT"),
        ("content-type", "application/json"),
        ("request-id", f"req_{rng.getrandbits(64):016x}"),
        ("anthropic-organization-id", "00000000-0000-4000-8000-000000000000"),
        ("anthropic-ratelimit-requests-limit", "4000"),
        ("anthropic-ratelimit-requests-remaining", str(3999 - i % 4000)),
        ("anthropic-ratelimit-requests-reset", "2026-11-29T12:00:01Z"),
        ("anthropic-ratelimit-input-tokens-limit", "400000"),
        ("anthropic-ratelimit-input-tokens-remaining", str(400000 - 25 * (i % 1000))),
        ("anthropic-ratelimit-output-tokens-limit", "80000"),
        ("anthropic-ratelimit-output-tokens-remaining", str(80000 - 60 * (i % 1000))),
        ("server", "cloudflare"),
        ("cf-ray", f"{rng.getrandbits(64):016x}-SJC"),
        ("x-robots-tag", "none"),
    ]


def make_scaling_fixture(n: int, seed: int = 1001) -> ScalingFixture:
    rng = random.Random(seed * 1_000_003 + n)
    interactions = []
    for i in range(n):
        prompt = f"[turn {i}] " + sentence(rng, 40)
        req = {
            "model": ANTHROPIC_MODEL,
            "max_tokens": 1024,
            "system": "You are a coding agent under benchmark.",
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0,
        }
        text = sentence(rng, 60)
        resp = {
            "id": f"msg_{seed:04d}{i:08d}",
            "type": "message",
            "role": "assistant",
            "model": ANTHROPIC_MODEL,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 40 + i % 7, "output_tokens": 60 + i % 11},
        }
        interactions.append(Interaction(jdump(req), jdump(resp), _json_response_headers(rng, i)))
    headers = {
        "content-type": "application/json",
        "accept": "application/json",
        "anthropic-version": "2023-06-01",
        "x-api-key": API_KEY,
    }
    return ScalingFixture(n, seed, ANTHROPIC_URL, headers, interactions)


@dataclasses.dataclass
class StreamFixture:
    """One streaming interaction; ``events`` holds one SSE event (wire bytes) per item."""

    kind: str  # "anthropic" | "openai"
    k: int  # number of text deltas
    url: str
    request_body: bytes
    request_headers: dict[str, str]
    response_headers: list[tuple[str, str]]
    events: list[bytes]
    body: bytes
    data_lines: int  # expected number of `data:` lines on the wire
    sdk_items: int  # expected number of objects the SDK iterator yields
    text: str  # expected concatenation of all text deltas

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.body).hexdigest()[:16]


_SSE_HEADERS = [
    ("date", "Sun, 29 Nov 2026 12:00:00 GMT"),
    ("content-type", "text/event-stream; charset=utf-8"),
    ("cache-control", "no-cache"),
    ("request-id", "req_0123456789abcdef"),
    ("server", "cloudflare"),
    ("cf-ray", "0123456789abcdef-SJC"),
]


def _sse(event: str | None, data: Any) -> bytes:
    payload = data if isinstance(data, str) else jdump(data).decode()
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def _deltas(rng: random.Random, k: int) -> list[str]:
    # token-ish pieces: mostly one word, sometimes two, always with a trailing space
    return [
        (rng.choice(VOCAB) + (" " + rng.choice(VOCAB) if rng.random() < 0.2 else "")) + " "
        for _ in range(k)
    ]


def make_anthropic_stream(k: int, seed: int = 2002) -> StreamFixture:
    rng = random.Random(seed * 1_000_003 + k)
    deltas = _deltas(rng, k)
    ev = [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_stream_{k}",
                    "type": "message",
                    "role": "assistant",
                    "model": ANTHROPIC_MODEL,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": 1234,
                        "output_tokens": 1,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                    },
                },
            },
        ),
        _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        _sse("ping", {"type": "ping"}),
    ]
    ev += [
        _sse(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": d}},
        )
        for d in deltas
    ]
    ev += [
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": k},
            },
        ),
        _sse("message_stop", {"type": "message_stop"}),
    ]
    req = {
        "model": ANTHROPIC_MODEL,
        "max_tokens": 64000,
        "stream": True,
        "messages": [{"role": "user", "content": "Write a very long story."}],
    }
    headers = {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "anthropic-version": "2023-06-01",
        "x-api-key": API_KEY,
    }
    return StreamFixture(
        "anthropic",
        k,
        ANTHROPIC_URL,
        jdump(req),
        headers,
        list(_SSE_HEADERS),
        ev,
        b"".join(ev),
        data_lines=len(ev),
        sdk_items=len(ev) - 1,
        text="".join(deltas),
    )


def make_openai_stream(k: int, seed: int = 3003) -> StreamFixture:
    rng = random.Random(seed * 1_000_003 + k)
    deltas = _deltas(rng, k)
    base = {
        "id": f"chatcmpl-bench{k}",
        "object": "chat.completion.chunk",
        "created": 1796040000,
        "model": OPENAI_MODEL,
        "service_tier": "default",
        "system_fingerprint": "fp_bench",
    }

    def chunk(delta: dict, finish: str | None = None) -> bytes:
        return _sse(
            None,
            {
                **base,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
                "usage": None,
            },
        )

    ev = [chunk({"role": "assistant", "content": "", "refusal": None})]
    ev += [chunk({"content": d}) for d in deltas]
    ev += [
        chunk({}, "stop"),
        _sse(
            None,
            {
                **base,
                "choices": [],
                "usage": {"prompt_tokens": 1234, "completion_tokens": k, "total_tokens": 1234 + k},
            },
        ),
        _sse(None, "[DONE]"),
    ]
    req = {
        "model": OPENAI_MODEL,
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "Write a very long story."}],
    }
    headers = {
        "content-type": "application/json",
        "accept": "text/event-stream",
        "authorization": "Bearer " + API_KEY,
    }
    return StreamFixture(
        "openai",
        k,
        OPENAI_URL,
        jdump(req),
        headers,
        list(_SSE_HEADERS),
        ev,
        b"".join(ev),
        data_lines=len(ev),
        sdk_items=len(ev) - 1,
        text="".join(deltas),
    )


def make_stream_fixture(kind: str, k: int) -> StreamFixture:
    return make_anthropic_stream(k) if kind == "anthropic" else make_openai_stream(k)


def text_from_payloads(kind: str, payloads: list[str]) -> str:
    """Rebuild the streamed text from raw `data:` payloads (used only to verify)."""
    out = []
    for p in payloads:
        if p == "[DONE]":
            continue
        obj = json.loads(p)
        if kind == "anthropic":
            if obj.get("type") == "content_block_delta":
                out.append(obj["delta"]["text"])
        elif obj.get("choices") and obj["choices"][0]["delta"].get("content"):
            out.append(obj["choices"][0]["delta"]["content"])
    return "".join(out)
