"""The Anthropic Messages wire format (``POST /v1/messages``).

Renders a neutral :class:`~..neutral.Reply` as the JSON ``Message``
body or as the event stream the API sends for it::

    message_start, content_block_start, ping, content_block_delta..., content_block_stop,
    (content_block_start, content_block_delta..., content_block_stop)..., message_delta,
    message_stop

with ``text_delta`` for text (after one ``citations_delta`` per citation),
``input_json_delta`` for tool input (an empty fragment first, then the JSON cut
into uneven pieces, as the API does), ``thinking_delta`` + ``signature_delta`` for
thinking, a ``server_tool_use`` block and its result block for a provider-side tool
(:mod:`._anthropic_blocks`), and the final stop reason and output-token count in
``message_delta``. The ``ping`` follows the first ``content_block_start`` (or
``message_start`` when there are no blocks), where the real API puts it.

Errors follow the API's shape,
``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": "req_..."}``
with a ``request-id`` header and ``x-should-retry``; an in-stream failure is an
``event: error`` sent with HTTP 200. Folding, request parsing and reading a body
back live in ``_anthropic_fold``, ``_anthropic_request`` and ``_anthropic_reply``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pytest_agentreplay.neutral import Fault, Provider, Reply, Request, StopReason, Usage
from pytest_agentreplay.providers._anthropic_blocks import (
    container,
    deltas,
    opening,
    server_tool_usage,
    to_blocks,
)
from pytest_agentreplay.providers._anthropic_fold import fold_events
from pytest_agentreplay.providers._anthropic_reply import read_parts
from pytest_agentreplay.providers._anthropic_request import parse_request
from pytest_agentreplay.providers.base import Codec, ErrorResponse, Folded, RenderContext, json_data
from pytest_agentreplay.providers.routes import handles
from pytest_agentreplay.sse import SSEEvent

__all__ = ["ERROR_MESSAGES", "ERROR_TYPES", "AnthropicCodec", "default_error_type"]

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


@dataclass(frozen=True)
class _Plan:
    """One reply laid out for rendering: the message head, its content blocks, its
    usage and its code-execution container (ids drawn once, for both paths)."""

    head: dict[str, Any]
    blocks: list[dict[str, Any]]
    usage: Usage
    container: dict[str, Any] | None


def _event(name: str, payload: dict[str, Any]) -> SSEEvent:
    return SSEEvent(event=name, data=json_data({"type": name, **payload}))


def _usage(
    usage: Usage,
    *,
    output_tokens: int,
    start: bool,
    end: bool,
    server_tools: dict[str, int] | None = None,
) -> dict[str, Any]:
    """A ``usage`` object: the body's (``start`` and ``end``), ``message_start``'s
    (``start``: cache breakdown, service tier) or ``message_delta``'s (``end``:
    final totals, thinking-token details, the server tools used). Cache fields
    appear only when set, so that a reply's usage survives the round trip unchanged."""
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
    if end and server_tools is not None:
        out["server_tool_use"] = server_tools
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


class AnthropicCodec(Codec):
    """Anthropic Messages: ``POST /v1/messages``, JSON or SSE (``stream: true``)."""

    provider: ClassVar[Provider] = "anthropic"
    event_error_type: ClassVar[str] = "overloaded_error"
    server_tools: ClassVar[frozenset[str]] = frozenset({"web_search", "code_execution"})
    citations: ClassVar[bool] = True
    request_id_header: ClassVar[str] = "request-id"

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

    def _plan(self, reply: Reply, ctx: RenderContext) -> _Plan:
        """Everything both renderings share, drawn from ``ctx.ids`` in one order."""
        self.check_renders(reply)
        head = self._head(reply, ctx)
        blocks = [block for part in reply.parts for block in to_blocks(part, ctx)]
        return _Plan(head, blocks, ctx.usage_for(reply), container(reply.parts, ctx))

    def render_body(self, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
        """The ``Message`` JSON ``client.messages.create`` receives."""
        plan = self._plan(reply, ctx)
        usage = plan.usage
        extra = {} if plan.container is None else {"container": plan.container}
        return {
            **plan.head,
            "content": plan.blocks,
            **_stop_fields(reply.stop_reason, ctx),
            **extra,
            "usage": _usage(
                usage,
                output_tokens=usage.output_tokens,
                start=True,
                end=True,
                server_tools=server_tool_usage(reply.parts),
            ),
        }

    def render_events(self, reply: Reply, ctx: RenderContext) -> list[SSEEvent]:
        """The stream for ``reply``; folds to exactly :meth:`render_body`'s JSON.

        Ids are drawn in the same order as :meth:`render_body`, so two contexts
        with the same seed give the same ids on both paths."""
        return list(self.iter_events(reply, ctx))

    def iter_events(self, reply: Reply, ctx: RenderContext) -> Iterator[SSEEvent]:
        """:meth:`render_events`, lazily: the first event costs the same whatever
        the length of the reply."""
        plan = self._plan(reply, ctx)
        usage = plan.usage
        start_usage = _usage(
            usage, output_tokens=min(usage.output_tokens, 1), start=True, end=False
        )
        yield _event(
            "message_start",
            {
                "message": {
                    **plan.head,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "stop_details": None,
                    "usage": start_usage,
                }
            },
        )
        if not plan.blocks:
            yield _PING
        for index, block in enumerate(plan.blocks):
            yield _event("content_block_start", {"index": index, "content_block": opening(block)})
            if index == 0:
                yield _PING
            for delta in deltas(block, ctx):
                yield _event("content_block_delta", {"index": index, "delta": delta})
            yield _event("content_block_stop", {"index": index})
        yield self._message_delta(reply, plan, ctx)
        yield _event("message_stop", {})

    def _message_delta(self, reply: Reply, plan: _Plan, ctx: RenderContext) -> SSEEvent:
        stop = _stop_fields(reply.stop_reason, ctx)
        if plan.container is not None:
            stop["container"] = plan.container
        end_usage = _usage(
            plan.usage,
            output_tokens=plan.usage.output_tokens,
            start=False,
            end=True,
            server_tools=server_tool_usage(reply.parts),
        )
        return _event("message_delta", {"delta": stop, "usage": end_usage})

    def fold_detailed(self, events: Sequence[SSEEvent], *, strict: bool = False) -> Folded:
        """The final ``Message`` JSON, built as ``MessageStream.get_final_message()``
        builds it (see :mod:`._anthropic_fold`)."""
        return fold_events(self, events, strict=strict)

    def to_reply(self, body: Mapping[str, Any]) -> Reply:
        """The body's blocks as neutral parts (see :mod:`._anthropic_reply`), with its
        usage, stop reason and model."""
        content = body.get("content")
        if not isinstance(content, list):
            raise self.error("must be a list of content blocks", field="content")
        parts = read_parts(content, lambda message, path: self.error(message, field=path))
        stop = body.get("stop_reason")
        model = body.get("model")
        return Reply(
            parts=parts,
            usage=self._usage_of(body.get("usage")),
            stop=_STOP_IN.get(stop) if isinstance(stop, str) else None,
            model=model if isinstance(model, str) else None,
        )

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
        drawn = ctx.ids.new("req_011C", 20)  # drawn even when given: ids keep their order
        request_id = fault.request_id or drawn
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
        """``event: error`` with ``{"type": "error", "error": {...}, "request_id": ...}``,
        sent with HTTP 200, as the live API sends it (``details`` null, the request id
        of the response: the fault's, or the one its headers carry); the SDK raises it
        as an ``APIStatusError`` carrying that body."""
        kind = fault.error_type or self.event_error_type
        message = fault.message or ERROR_MESSAGES.get(kind, "Internal server error")
        error = {"details": None, "type": kind, "message": message}
        return _event("error", {"error": error, "request_id": fault.request_id})

    def response_headers(self, ctx: RenderContext, *, streaming: bool) -> dict[str, str]:
        """Content type, ``request-id`` and, for streams, ``cache-control: no-cache``."""
        headers = super().response_headers(ctx, streaming=streaming)
        headers["request-id"] = ctx.ids.new("req_011C", 20)
        if streaming:
            headers["cache-control"] = "no-cache"
        return headers
