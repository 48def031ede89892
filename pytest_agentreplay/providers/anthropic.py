"""The Anthropic Messages wire format (``POST /v1/messages``).

Renders a neutral :class:`~..model.Reply` as the JSON ``Message``
body or as the event stream the API sends for it::

    message_start, content_block_start, ping, content_block_delta..., content_block_stop,
    (content_block_start, content_block_delta..., content_block_stop)..., message_delta,
    message_stop

with ``text_delta`` for text, ``input_json_delta`` for tool input (an empty
fragment first, then the JSON cut into uneven pieces, as the API does),
``thinking_delta`` + ``signature_delta`` for thinking, and the final stop reason
and output-token count in ``message_delta``. The ``ping`` follows the first
``content_block_start`` (or ``message_start`` when there are no blocks), where
the real API puts it.

Errors follow the API's shape,
``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": "req_..."}``
with a ``request-id`` header and ``x-should-retry``; an in-stream failure is an
``event: error`` sent with HTTP 200. Folding and request parsing live in
``_anthropic_fold`` and ``_anthropic_request``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from pytest_agentreplay.model import (
    Fault,
    Part,
    Provider,
    Reply,
    Request,
    StopReason,
    Text,
    Thinking,
    ToolCall,
    Usage,
)
from pytest_agentreplay.providers._anthropic_fold import fold_events
from pytest_agentreplay.providers._anthropic_request import parse_request
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

__all__ = ["ERROR_MESSAGES", "ERROR_TYPES", "AnthropicCodec", "default_error_type"]

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
"""The ``error.type`` the API documents for each status. Other 4xx statuses use
``invalid_request_error`` (as the docs say), other 5xx ``api_error``."""

ERROR_MESSAGES: dict[str, str] = {
    "invalid_request_error": "Invalid request.",
    "authentication_error": "invalid x-api-key",
    "billing_error": "Your credit balance is too low to access the Anthropic API. "
    "Please go to Plans & Billing to upgrade or purchase credits.",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "Not found",
    "conflict_error": "Conflict",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit "
    "(https://docs.claude.com/en/api/rate-limits); see the response headers for current "
    "usage. Please reduce the prompt length or the maximum tokens requested, or try again "
    "later.",
    "api_error": "Internal server error",
    "timeout_error": "Request timed out",
    "overloaded_error": "Overloaded",
}
"""The message the API usually sends with each error type (used when a fault has none)."""

_STOP_IN: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
    # No neutral twin: a paused server-tool turn ended this response normally, and a
    # full context window is a length limit.
    "pause_turn": "end_turn",
    "model_context_window_exceeded": "max_tokens",
}

_PING = SSEEvent(event="ping", data='{"type": "ping"}')  # the API writes this one spaced


def default_error_type(status: int) -> str:
    """The API's ``error.type`` for an HTTP ``status``."""
    if status in ERROR_TYPES:
        return ERROR_TYPES[status]
    return "api_error" if status >= 500 else "invalid_request_error"


def _event(name: str, payload: dict[str, Any]) -> SSEEvent:
    return SSEEvent(event=name, data=json_data({"type": name, **payload}))


def _usage(usage: Usage, *, output_tokens: int, start: bool, end: bool) -> dict[str, Any]:
    """A ``usage`` object: the body's (``start`` and ``end``), ``message_start``'s
    (``start``: cache breakdown, service tier) or ``message_delta``'s (``end``:
    final totals, thinking-token details). Cache fields appear only when set, so
    that a reply's usage survives the round trip unchanged."""
    out: dict[str, Any] = {"input_tokens": usage.input_tokens}
    if usage.cache_creation_input_tokens is not None:
        out["cache_creation_input_tokens"] = usage.cache_creation_input_tokens
    if usage.cache_read_input_tokens is not None:
        out["cache_read_input_tokens"] = usage.cache_read_input_tokens
    if start and usage.cache_creation_input_tokens is not None:
        out["cache_creation"] = {
            "ephemeral_5m_input_tokens": usage.cache_creation_input_tokens,
            "ephemeral_1h_input_tokens": 0,
        }
    out["output_tokens"] = output_tokens
    if end and usage.reasoning_tokens is not None:
        out["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
    if start:
        out["service_tier"] = "standard"
    return out


def _stop_fields(stop: StopReason, ctx: RenderContext) -> dict[str, Any]:
    """``stop_reason`` / ``stop_sequence`` / ``stop_details`` for a stop reason.

    The matched stop sequence is the request's first one (the reply cannot say
    which); a refusal carries the API's ``stop_details`` object."""
    sequence = None
    if stop == "stop_sequence" and ctx.request is not None:
        sequences = ctx.request.raw.get("stop_sequences")
        if isinstance(sequences, list) and sequences and isinstance(sequences[0], str):
            sequence = sequences[0]
    details = None
    if stop == "refusal":
        details = {"type": "refusal", "category": None, "explanation": None}
    return {"stop_reason": stop, "stop_sequence": sequence, "stop_details": details}


def _block(part: Part, ctx: RenderContext) -> dict[str, Any]:
    """A part's final content block; missing tool ids and signatures come from ``ctx.ids``."""
    if isinstance(part, Text):
        return {"type": "text", "text": part.text}
    if isinstance(part, ToolCall):
        return {
            "type": "tool_use",
            "id": part.id or ctx.ids.new("toolu_01", 22),
            "name": part.name,
            "input": part.args,
        }
    signature = part.signature or _signature(ctx)
    return {"type": "thinking", "thinking": part.text, "signature": signature}


def _signature(ctx: RenderContext) -> str:
    """A thinking signature (the API rejects thinking blocks sent back without one):
    128 base64 characters, built from three ids since one id holds ~42 characters
    of entropy."""
    return "Eq" + "".join(ctx.ids.new("", 42, _B64) for _ in range(3))


def _opening(block: dict[str, Any]) -> dict[str, Any]:
    """What ``content_block_start`` announces for ``block`` before any delta."""
    if block["type"] == "text":
        return {"type": "text", "text": ""}
    if block["type"] == "tool_use":
        return {**block, "input": {}}
    return {"type": "thinking", "thinking": "", "signature": ""}


def _deltas(block: dict[str, Any], ctx: RenderContext) -> Iterator[dict[str, Any]]:
    """The ``delta`` objects that grow ``_opening(block)`` into ``block``, lazily."""
    if block["type"] == "text":
        for t in iter_text(block["text"], ctx.text_chunk):
            yield {"type": "text_delta", "text": t}
        return
    if block["type"] == "tool_use":
        # The API streams tool input with json.dumps-style ", " / ": " separators,
        # starting with an empty fragment.
        text = json.dumps(block["input"], ensure_ascii=False) if block["input"] else ""
        for p in ["", *split_json(text)]:
            yield {"type": "input_json_delta", "partial_json": p}
        return
    for t in iter_text(block["thinking"], ctx.text_chunk):
        yield {"type": "thinking_delta", "thinking": t}
    yield {"type": "signature_delta", "signature": block["signature"]}


class AnthropicCodec(Codec):
    """Anthropic Messages: ``POST /v1/messages``, JSON or SSE (``stream: true``)."""

    provider: ClassVar[Provider] = "anthropic"
    event_error_type: ClassVar[str] = "overloaded_error"

    def handles(self, method: str, path: str) -> bool:
        """``POST .../v1/messages`` under any prefix (see :mod:`.routes`)."""
        return handles("anthropic", method, path)

    def parse_request(self, body: Mapping[str, Any]) -> Request:
        """The request in neutral form (see :mod:`._anthropic_request`)."""
        return parse_request(body)

    def _head(self, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
        return {
            "model": ctx.model_for(reply),
            "id": ctx.ids.new("msg_01", 22),
            "type": "message",
            "role": "assistant",
        }

    def render_body(self, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
        """The ``Message`` JSON ``client.messages.create`` receives."""
        head = self._head(reply, ctx)
        content = [_block(part, ctx) for part in reply.parts]
        usage = ctx.usage_for(reply)
        return {
            **head,
            "content": content,
            **_stop_fields(reply.stop_reason, ctx),
            "usage": _usage(usage, output_tokens=usage.output_tokens, start=True, end=True),
        }

    def render_events(self, reply: Reply, ctx: RenderContext) -> list[SSEEvent]:
        """The stream for ``reply``; folds to exactly :meth:`render_body`'s JSON.

        Ids are drawn in the same order as :meth:`render_body`, so two contexts
        with the same seed give the same ids on both paths."""
        return list(self.iter_events(reply, ctx))

    def iter_events(self, reply: Reply, ctx: RenderContext) -> Iterator[SSEEvent]:
        """:meth:`render_events`, lazily: the first event costs the same whatever
        the length of the reply."""
        head = self._head(reply, ctx)
        blocks = [_block(part, ctx) for part in reply.parts]
        usage = ctx.usage_for(reply)
        start_usage = _usage(
            usage, output_tokens=min(usage.output_tokens, 1), start=True, end=False
        )
        yield _event(
            "message_start",
            {
                "message": {
                    **head,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "stop_details": None,
                    "usage": start_usage,
                }
            },
        )
        if not blocks:
            yield _PING
        for index, block in enumerate(blocks):
            yield _event("content_block_start", {"index": index, "content_block": _opening(block)})
            if index == 0:
                yield _PING
            for delta in _deltas(block, ctx):
                yield _event("content_block_delta", {"index": index, "delta": delta})
            yield _event("content_block_stop", {"index": index})
        end_usage = _usage(usage, output_tokens=usage.output_tokens, start=False, end=True)
        yield _event(
            "message_delta", {"delta": _stop_fields(reply.stop_reason, ctx), "usage": end_usage}
        )
        yield _event("message_stop", {})

    def fold_detailed(self, events: Sequence[SSEEvent], *, strict: bool = False) -> Folded:
        """The final ``Message`` JSON, built as ``MessageStream.get_final_message()``
        builds it (see :mod:`._anthropic_fold`)."""
        return fold_events(self, events, strict=strict)

    def to_reply(self, body: Mapping[str, Any]) -> Reply:
        """Text, tool-use and thinking blocks become parts; server-tool blocks,
        redacted thinking and citations have no neutral form and are left out."""
        content = body.get("content")
        if not isinstance(content, list):
            raise self.error("must be a list of content blocks", field="content")
        parts = [p for i, b in enumerate(content) if (p := self._part(b, i)) is not None]
        stop = body.get("stop_reason")
        model = body.get("model")
        return Reply(
            parts=parts,
            usage=self._usage_of(body.get("usage")),
            stop=_STOP_IN.get(stop) if isinstance(stop, str) else None,
            model=model if isinstance(model, str) else None,
        )

    def _part(self, block: Any, index: int) -> Part | None:
        path = f"content[{index}]"
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            raise self.error("must be an object with a string `type`", field=f"{path}.type")
        kind = block["type"]
        fields = {"text": ("text",), "tool_use": ("name", "id"), "thinking": ("thinking",)}
        for key in fields.get(kind, ()):
            if not isinstance(block.get(key), str):
                raise self.error("must be a string", field=f"{path}.{key}")
        if kind == "text":
            return Text(text=block["text"])
        if kind == "tool_use":
            args = block.get("input")
            if not isinstance(args, Mapping) or not block["name"]:
                raise self.error("tool_use needs a name and an object input", field=f"{path}.input")
            return ToolCall(name=block["name"], args=dict(args), id=block["id"])
        if kind == "thinking":
            return Thinking(text=block["thinking"], signature=block.get("signature") or None)
        return None

    def _usage_of(self, usage: Any) -> Usage | None:
        if not isinstance(usage, Mapping):
            return None
        details = usage.get("output_tokens_details")
        try:
            return Usage(
                input_tokens=usage.get("input_tokens") or 0,
                output_tokens=usage.get("output_tokens") or 0,
                cache_creation_input_tokens=usage.get("cache_creation_input_tokens"),
                cache_read_input_tokens=usage.get("cache_read_input_tokens"),
                reasoning_tokens=details.get("thinking_tokens")
                if isinstance(details, Mapping)
                else None,
            )
        except ValueError as exc:
            raise self.error(f"bad token counts: {exc}", field="usage") from None

    def error_response(self, fault: Fault, ctx: RenderContext) -> ErrorResponse:
        """The API's error for ``Fault.http(...)``: JSON body with ``request_id``,
        ``request-id`` header, ``x-should-retry`` (``true`` for 408, 409, 429 and
        5xx, as the API and the SDK's own policy agree), ``retry-after`` if given."""
        if fault.kind != "http" or fault.status is None:
            raise ValueError(f"error_response needs a Fault.http(...), got {fault.describe()}")
        status = fault.status
        kind = fault.error_type or default_error_type(status)
        message = (
            fault.message or ERROR_MESSAGES.get(kind) or ERROR_MESSAGES[default_error_type(status)]
        )
        request_id = ctx.ids.new("req_011C", 20)
        retry = status in (408, 409, 429) or status >= 500
        headers = {
            "content-type": self.json_content_type,
            "request-id": request_id,
            "x-should-retry": "true" if retry else "false",
        }
        if fault.retry_after is not None:
            seconds = fault.retry_after
            headers["retry-after"] = str(int(seconds)) if seconds.is_integer() else repr(seconds)
        body = {
            "type": "error",
            "error": {"type": kind, "message": message},
            "request_id": request_id,
        }
        return ErrorResponse(status=status, headers=headers, body=body)

    def error_event(self, fault: Fault, ctx: RenderContext) -> SSEEvent:
        """``event: error`` with ``{"type": "error", "error": {...}}``, sent with HTTP 200;
        the SDK raises it as an ``APIStatusError`` carrying that body."""
        kind = fault.error_type or self.event_error_type
        message = fault.message or ERROR_MESSAGES.get(kind, "Internal server error")
        return _event("error", {"error": {"type": kind, "message": message}})

    def response_headers(self, ctx: RenderContext, *, streaming: bool) -> dict[str, str]:
        """Content type, ``request-id`` and, for streams, ``cache-control: no-cache``."""
        headers = super().response_headers(ctx, streaming=streaming)
        headers["request-id"] = ctx.ids.new("req_011C", 20)
        if streaming:
            headers["cache-control"] = "no-cache"
        return headers
