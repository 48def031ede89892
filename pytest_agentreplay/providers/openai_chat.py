"""OpenAI Chat Completions wire codec (``POST .../chat/completions``).

Speaks the format of api.openai.com and of the OpenAI-compatible hosts that
reuse it (Azure ``/openai/deployments/{d}/chat/completions``, OpenRouter
``/api/v1/chat/completions``, Groq ``/openai/v1/chat/completions``, Mistral,
DeepSeek, local servers):

* non-streaming: one ``chat.completion`` JSON object;
* streaming: ``data:``-only ``chat.completion.chunk`` events — a first chunk with
  ``delta.role`` ``"assistant"``, content / refusal deltas, tool-call deltas
  (``index``, ``id``, ``type`` and ``function.name`` first, then
  ``function.arguments`` fragments), a finish chunk with ``finish_reason``, a
  usage chunk with ``choices: []`` *only* when the request set
  ``stream_options.include_usage``, and finally ``data: [DONE]``. Chunks carry
  OpenAI's ``obfuscation`` padding unless ``stream_options.include_obfuscation``
  is false;
* errors: ``{"error": {"message", "type", "param", "code"}}`` with an
  ``x-request-id`` header; in a stream, a ``data:`` object with an ``error`` key
  (what the SDK turns into ``openai.APIError``).

Citations: the text parts' citations are the message's ``url_citation``
``annotations`` (what OpenAI's search models send), spans counted in the joined
content, streamed as one ``annotations`` delta after the content. Provider-side
tools: Chat Completions has no item for them, so a reply holding a
:class:`~..neutral.ServerToolCall` is refused (``Codec.check_renders``).

Thinking: OpenAI's Chat Completions API has no reasoning field, so
:class:`~..neutral.Thinking` parts are *not rendered* by default.
``OpenAIChatCodec(reasoning_field="reasoning_content")`` (DeepSeek) or
``"reasoning"`` (Groq, OpenRouter) renders them the way those hosts do. Folding
and :meth:`OpenAIChatCodec.to_reply` always keep reasoning that a host sent
(``reasoning_content`` / ``reasoning`` deltas, Mistral ``thinking`` parts).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pytest_agentreplay.neutral import (
    Fault,
    Reply,
    Request,
    StopReason,
    Text,
    Thinking,
    ToolCall,
    Usage,
)
from pytest_agentreplay.neutral import Part as ReplyPart
from pytest_agentreplay.providers._openai_chat_fold import ChatFold
from pytest_agentreplay.providers._openai_chat_reply import read_reply
from pytest_agentreplay.providers._openai_chat_request import parse_chat_request
from pytest_agentreplay.providers._openai_errors import (
    OPENAI_VERSION,
    error_object,
    error_response,
    request_id,
)
from pytest_agentreplay.providers.base import (
    Codec,
    ErrorResponse,
    Folded,
    RenderContext,
    iter_text,
    json_data,
    split_json,
)
from pytest_agentreplay.providers.routes import handles
from pytest_agentreplay.sse import SSEEvent

__all__ = ["OpenAIChatCodec"]

ReasoningField = Literal["reasoning_content", "reasoning"]

_FINISH: dict[StopReason, str] = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "stop",
}
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_SERVICE_TIERS = frozenset({"default", "flex", "scale", "priority"})


# The values OpenAI puts in ``error.type``; any other ``Fault.error_type`` is an ``error.code``.
@dataclass
class _Plan:
    """One reply laid out for rendering; shared by the JSON and SSE renderers so
    both consume ``ctx.ids`` in the same order and agree on every value."""

    id: str
    created: int
    model: str
    service_tier: str
    fingerprint: str
    content: str | None
    refusal: str | None
    reasoning: str | None
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


def _obfuscation(seed: str, delta_chars: int) -> str:
    """OpenAI's ``obfuscation`` padding: random-looking characters whose length
    shrinks as the delta grows. Here derived from a hash, so renders are stable."""
    n = int.from_bytes(hashlib.sha256(seed.encode()).digest(), "big")
    chars = []
    for _ in range(max(1, 12 - delta_chars)):
        n, r = divmod(n, len(_B62))
        chars.append(_B62[r])
    return "".join(chars)


class OpenAIChatCodec(Codec):
    """The OpenAI Chat Completions format (see the module docstring)."""

    provider: ClassVar[Literal["openai_chat"]] = "openai_chat"
    citations: ClassVar[bool] = True

    def __init__(self, *, reasoning_field: ReasoningField | None = None) -> None:
        self.reasoning_field = reasoning_field

    # -- endpoint and request ------------------------------------------------

    def handles(self, method: str, path: str) -> bool:
        """``POST .../chat/completions`` (see :mod:`.routes`)."""
        return handles("openai_chat", method, path)

    def parse_request(self, body: Mapping[str, Any]) -> Request:
        """A request body in neutral form (see :mod:`._openai_chat_request`)."""
        return parse_chat_request(
            body, lambda message, path: self.error(message, field=path or None)
        )

    # -- rendering -----------------------------------------------------------

    def _plan(self, reply: Reply, ctx: RenderContext) -> _Plan:
        self.check_renders(reply)
        parts: list[ReplyPart] = (
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
            content=None,
            refusal=None,
            reasoning=None,
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
        if self.reasoning_field is not None and thinking:
            plan.reasoning = "".join(thinking)
        plan.calls = [(c.id or ctx.ids.new("call_", 24), c.name, json_data(c.args)) for c in calls]
        if stop != "refusal":
            plan.annotations = _annotations([p for p in parts if isinstance(p, Text)])
        plan.finish = _FINISH[stop]
        plan.usage = _usage_json(ctx.usage_for(reply))
        return plan

    def render_body(self, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
        """The ``chat.completion`` object OpenAI returns for a non-streaming call."""
        plan = self._plan(reply, ctx)
        message: dict[str, Any] = {"role": "assistant", "content": plan.content}
        if plan.reasoning is not None and self.reasoning_field is not None:
            message[self.reasoning_field] = plan.reasoning
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

    def render_events(self, reply: Reply, ctx: RenderContext) -> list[SSEEvent]:
        """The ``chat.completion.chunk`` stream for ``reply``, ``[DONE]`` included."""
        return list(self.iter_events(reply, ctx))

    def iter_events(self, reply: Reply, ctx: RenderContext) -> Iterator[SSEEvent]:
        """:meth:`render_events`, lazily: text is cut as the events are taken."""
        plan = self._plan(reply, ctx)
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
            for delta in self._deltas(plan, ctx.text_chunk)
        )
        for n, chunk_choices in enumerate(itertools.chain(choices, [[finish]])):
            chunk = self._chunk(plan, chunk_choices)
            if include_usage:
                chunk["usage"] = None
            if obfuscate:
                seed = f"{plan.id}:{n}"
                chunk["obfuscation"] = _obfuscation(seed, _delta_chars(chunk_choices[0]["delta"]))
            yield SSEEvent(data=json_data(chunk))
        if include_usage:
            chunk = {**self._chunk(plan, []), "usage": plan.usage}
            if obfuscate:
                chunk["obfuscation"] = _obfuscation(f"{plan.id}:usage", 0)
            yield SSEEvent(data=json_data(chunk))
        yield SSEEvent(data="[DONE]")

    @staticmethod
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

    def _deltas(self, plan: _Plan, text_chunk: int) -> Iterator[dict[str, Any]]:
        """The deltas in provider order: role, reasoning, content or refusal, tool calls."""
        first: dict[str, Any] = {"role": "assistant", "content": plan.content, "refusal": None}
        if plan.content is not None:
            first["content"] = ""
        if plan.refusal is not None:
            first["refusal"] = ""
        yield first
        if plan.reasoning is not None and self.reasoning_field is not None:
            for piece in iter_text(plan.reasoning, text_chunk):
                yield {self.reasoning_field: piece}
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

    # -- folding and reading -------------------------------------------------

    def fold_detailed(self, events: Sequence[SSEEvent], *, strict: bool = False) -> Folded:
        """Accumulate a chunk stream (see :mod:`._openai_chat_fold`)."""
        fold = ChatFold(
            lambda message, index, path: self.error(message, event_index=index, field=path),
            strict=strict,
        )
        return fold.run(events, lambda i: self.event_json(events, i))

    def to_reply(self, body: Mapping[str, Any]) -> Reply:
        """The first choice of a ``chat.completion`` body as a neutral reply (see
        :mod:`._openai_chat_reply`)."""
        return read_reply(body, lambda message, path: self.error(message, field=path or None))

    # -- errors and headers --------------------------------------------------

    def error_response(self, fault: Fault, ctx: RenderContext) -> ErrorResponse:
        """OpenAI's error JSON (see :mod:`._openai_errors`)."""
        return error_response(fault, ctx, ctx.model_for(Reply()))

    def error_event(self, fault: Fault, ctx: RenderContext) -> SSEEvent:
        """The mid-stream error OpenAI sends: ``data: {"error": {...}}`` with no event
        name; the SDK raises ``openai.APIError`` with that object as ``body``."""
        return SSEEvent(data=json_data({"error": error_object(fault, 500, ctx.model)}))

    def response_headers(self, ctx: RenderContext, *, streaming: bool) -> dict[str, str]:
        """Content type plus OpenAI's ``x-request-id`` and ``openai-version``."""
        headers = super().response_headers(ctx, streaming=streaming)
        headers["x-request-id"] = request_id(ctx)
        headers["openai-version"] = OPENAI_VERSION
        return headers
