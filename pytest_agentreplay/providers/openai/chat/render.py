"""Render a neutral :class:`~....neutral.Reply` as a ``chat.completion`` body, or as the
``chat.completion.chunk`` stream OpenAI sends for it (see :mod:`.codec` for the
format).

Both renderings start from one :class:`_Plan`, so they draw ``ctx.ids`` in the same
order and agree on every value. Thinking is rendered only where the codec names a
host's reasoning field (``OpenAIChatCodec(reasoning_field=...)``): OpenAI's own API
has none.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast

from ....neutral import Part, Reply, StopReason, Text, Thinking, ToolCall, Usage
from ....sse import SSEEvent
from ...base import Codec, RenderContext, digits, iter_text, json_data, split_json, wire_writer

__all__ = ["ReasoningField", "iter_events", "iter_wire", "render_body"]

T = TypeVar("T")

ReasoningField = Literal["reasoning_content", "reasoning"]
"""Where a host streams reasoning: ``reasoning_content`` (DeepSeek), ``reasoning``
(Groq, OpenRouter)."""

_FINISH: dict[StopReason, str] = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "stop",
}
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SERVICE_TIERS = frozenset({"default", "flex", "scale", "priority"})


@dataclass
class _Plan:
    """One reply laid out for rendering; shared by the JSON and SSE renderers so
    both consume ``ctx.ids`` in the same order and agree on every value."""

    id: str
    created: int
    model: str
    service_tier: str
    fingerprint: str
    content: str | None = None
    refusal: str | None = None
    reasoning: tuple[ReasoningField, str] | None = None  # (the host's field, the text)
    calls: list[tuple[str, str, str]] = field(default_factory=list)  # (id, name, json args)
    annotations: list[dict[str, Any]] = field(default_factory=list)
    finish: str = "stop"
    usage: dict[str, Any] = field(default_factory=dict)


def _usage_json(usage: Usage) -> dict[str, Any]:
    """OpenAI's usage object. ``prompt_tokens`` is ``input_tokens`` (OpenAI counts
    cached tokens inside it, as ``prompt_tokens_details.cached_tokens``)."""
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {
            "cached_tokens": usage.cache_read_input_tokens or 0,
            "audio_tokens": 0,
        },
        "completion_tokens_details": {
            "reasoning_tokens": usage.reasoning_tokens or 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _annotations(texts: list[Text]) -> list[dict[str, Any]]:
    """The ``url_citation`` annotations of the joined content of ``texts``: each
    citation's span moved by the length of the text before its part."""
    out: list[dict[str, Any]] = []
    offset = 0
    for part in texts:
        for citation in part.citations:
            start, end = citation.span(part.text)
            cited: dict[str, Any] = {"end_index": offset + end, "start_index": offset + start}
            cited |= {"title": citation.title, "url": citation.url}
            out.append({"type": "url_citation", "url_citation": cited})
        offset += len(part.text)
    return out


def _stream_options(ctx: RenderContext) -> Mapping[str, Any]:
    raw = ctx.request.raw if ctx.request is not None else {}
    options = raw.get("stream_options")
    return options if isinstance(options, Mapping) else {}


def _delta_chars(delta: Mapping[str, Any]) -> int:
    """How many characters of text or arguments a delta carries."""
    calls = delta.get("tool_calls") or []
    return sum(len(v) for k, v in delta.items() if k != "role" and isinstance(v, str)) + sum(
        len(call["function"]["arguments"]) for call in calls
    )


@functools.lru_cache(maxsize=4096)
def _obfuscation(seed: str, delta_chars: int) -> str:
    """OpenAI's ``obfuscation`` padding: random-looking characters whose length
    shrinks as the delta grows. Here derived from a hash, so renders are stable (and
    remembered: the seeds repeat from one fake of a suite to the next, as ids do)."""
    n = int.from_bytes(hashlib.sha256(seed.encode()).digest(), "big")
    return digits(n, max(1, 12 - delta_chars), _B62)


def _reasoning_field(codec: Codec) -> ReasoningField | None:
    """The field the codec renders thinking in (``OpenAIChatCodec(reasoning_field=...)``);
    ``None`` for OpenAI's own format, which has none."""
    wanted = getattr(codec, "reasoning_field", None)
    return cast("ReasoningField | None", wanted)


def _plan(codec: Codec, reply: Reply, ctx: RenderContext) -> _Plan:
    parts: list[Part] = (
        [] if reply.fault is not None and reply.fault.kind == "empty" else list(reply.parts)
    )
    model = ctx.model_for(reply)
    raw = ctx.request.raw if ctx.request is not None else {}
    tier = raw.get("service_tier")
    plan = _Plan(
        id=ctx.ids.new("chatcmpl-", 29),
        created=ctx.created,
        model=model,
        service_tier=tier if tier in _SERVICE_TIERS else "default",
        fingerprint="fp_" + hashlib.sha256(model.encode()).hexdigest()[:10],
    )
    texts = [p.text for p in parts if isinstance(p, Text)]
    thinking = [p.text for p in parts if isinstance(p, Thinking)]
    calls = [p for p in parts if isinstance(p, ToolCall)]
    text = "".join(texts) if texts or not calls else None
    # Like Reply.stop_reason, but over the parts rendered (Fault.empty() drops them).
    stop: StopReason = reply.stop or ("tool_use" if calls else "end_turn")
    if stop == "refusal":
        plan.refusal = text or ""
    else:
        plan.content = text
    reasoning_field = _reasoning_field(codec)
    if reasoning_field is not None and thinking:
        plan.reasoning = (reasoning_field, "".join(thinking))
    plan.calls = [(c.id or ctx.ids.new("call_", 24), c.name, json_data(c.args)) for c in calls]
    if stop != "refusal":
        plan.annotations = _annotations([p for p in parts if isinstance(p, Text)])
    plan.finish = _FINISH[stop]
    plan.usage = _usage_json(ctx.usage_for(reply))
    return plan


def render_body(codec: Codec, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
    """The ``chat.completion`` object OpenAI returns for a non-streaming call."""
    plan = _plan(codec, reply, ctx)
    message: dict[str, Any] = {"role": "assistant", "content": plan.content}
    if plan.reasoning is not None:
        reasoning_field, reasoning = plan.reasoning
        message[reasoning_field] = reasoning
    if plan.calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
            for cid, name, args in plan.calls
        ]
    message["refusal"] = plan.refusal
    message["annotations"] = plan.annotations
    return {
        "id": plan.id,
        "object": "chat.completion",
        "created": plan.created,
        "model": plan.model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": plan.finish}
        ],
        "usage": plan.usage,
        "service_tier": plan.service_tier,
        "system_fingerprint": plan.fingerprint,
    }


def iter_events(codec: Codec, reply: Reply, ctx: RenderContext) -> Iterator[SSEEvent]:
    """The ``chat.completion.chunk`` stream for ``reply``, ``[DONE]`` included, lazily:
    text is cut as the events are taken."""
    return _stream(codec, reply, ctx, SSEEvent)


def iter_wire(codec: Codec, reply: Reply, ctx: RenderContext) -> Iterator[bytes]:
    """:func:`iter_events` as the bytes sent, each event written in one step (no event
    object built and then encoded: a fake's stream without a fault)."""
    return _stream(codec, reply, ctx, wire_writer(codec.sse_line_end))


def _stream(
    codec: Codec, reply: Reply, ctx: RenderContext, emit: Callable[[str], T]
) -> Iterator[T]:
    """The chunks of the stream for ``reply``, each as ``emit(data)`` makes it (the
    events have no name)."""
    plan = _plan(codec, reply, ctx)
    options = _stream_options(ctx)
    include_usage = options.get("include_usage") is True
    obfuscate = options.get("include_obfuscation") is not False
    finish: dict[str, Any] = {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": plan.finish,
    }
    choices: Iterator[list[dict[str, Any]]] = (
        [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]
        for delta in _deltas(plan, ctx.text_chunk)
    )
    # Each chunk is _chunk(plan, choices) plus "usage": null and "obfuscation" when
    # asked, encoded as one object; the fields before "choices" are the same in every
    # chunk, so their JSON is written once (bench/ W5: a chunk encoded whole cost more
    # than the rest of its rendering).
    head = json_data(_chunk(plan, []))[: -len("[]}")]  # "choices" is its last field
    usage = ',"usage":null' if include_usage else ""
    for n, chunk_choices in enumerate(itertools.chain(choices, [[finish]])):
        tail = usage
        if obfuscate:  # base-62 digits: a JSON string as they are
            pad = _obfuscation(f"{plan.id}:{n}", _delta_chars(chunk_choices[0]["delta"]))
            tail = f'{usage},"obfuscation":"{pad}"'
        yield emit(f"{head}{json_data(chunk_choices)}{tail}}}")
    if include_usage:
        chunk = {**_chunk(plan, []), "usage": plan.usage}
        if obfuscate:
            chunk["obfuscation"] = _obfuscation(f"{plan.id}:usage", 0)
        yield emit(json_data(chunk))
    yield emit("[DONE]")


def _chunk(plan: _Plan, choices: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": plan.id,
        "object": "chat.completion.chunk",
        "created": plan.created,
        "model": plan.model,
        "service_tier": plan.service_tier,
        "system_fingerprint": plan.fingerprint,
        "choices": choices,
    }


def _deltas(plan: _Plan, text_chunk: int) -> Iterator[dict[str, Any]]:
    """The deltas in provider order: role, reasoning, content or refusal, tool calls."""
    first: dict[str, Any] = {"role": "assistant", "content": plan.content, "refusal": None}
    if plan.content is not None:
        first["content"] = ""
    if plan.refusal is not None:
        first["refusal"] = ""
    yield first
    if plan.reasoning is not None:
        reasoning_field, reasoning = plan.reasoning
        for piece in iter_text(reasoning, text_chunk):
            yield {reasoning_field: piece}
    for key in ("content", "refusal"):
        for piece in iter_text(getattr(plan, key) or "", text_chunk):
            yield {key: piece}
    if plan.annotations:  # one delta: the SDK cannot merge an unindexed list twice
        yield {"annotations": plan.annotations}
    for i, (cid, name, args) in enumerate(plan.calls):
        opening = {
            "index": i,
            "id": cid,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        yield {"tool_calls": [opening]}
        for piece in split_json(args):
            yield {"tool_calls": [{"index": i, "function": {"arguments": piece}}]}
