"""Spans to interactions: each model call of a trace as its provider sent it.

For every inference span, in the order the calls started:

* the request body is built from what the span knows (:mod:`.bodies`);
* the reply (text, tool calls, thinking, usage, stop reason) is rendered by the
  provider's own codec, streamed (SSE events) or not as the span says; where the span
  does not say, both forms are written, and replay serves the one the live request
  asks for (``origin.serves: as asked``);
* a failed call becomes the HTTP error its provider answered (:mod:`.failures`);
* what the trace cannot know is filled in plausibly and listed in ``origin.filled``;
  quirks of the instrumentation are corrected and listed in ``origin.corrected``
  (:mod:`.quirks`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..cassettes.cassette import Interaction, RecordedEvent, RecordedRequest, RecordedResponse
from ..errors import TraceImportError
from ..neutral import Provider, Reply, StopReason, ToolCall
from ..providers import Codec, IdFactory, RenderContext, codec_for, target
from ..providers.catalog import facts
from .bodies import request_body
from .capture import capture_hint
from .failures import failure_fault, failure_text
from .genai import output_parts, provider_of, read_conversation, usage_of
from .quirks import drop_made_up_ids, streamed_usage
from .spans import TraceSpan

__all__ = ["STOPS", "span_interactions"]

STOPS: dict[str, StopReason | None] = {
    "stop": None,  # end_turn, or tool_use when the reply calls a tool: the codec infers it
    "end_turn": None,
    "completed": None,
    "tool_call": None,
    "tool_calls": None,
    "tool_use": None,
    "function_call": None,
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "content_filter": "refusal",
    "refusal": "refusal",
    "safety": "refusal",
}
"""The finish reasons of the GenAI conventions (and of providers, which some spans keep)
as neutral stop reasons. ``stop`` is lossy (Anthropic's ``end_turn`` and
``stop_sequence`` both become it), so it is left for the codec to infer from the reply."""

_STREAM_FLAGS = ("gen_ai.request.stream", "gen_ai.is_streaming", "llm.is_streaming")


def span_interactions(span: TraceSpan, step: int) -> list[Interaction]:
    """The interactions of the inference span ``span``, the ``step``-th model call of
    its trace: one, or two when the span does not say whether the call streamed; none
    for a failed call that got no HTTP answer."""
    provider = provider_of(span)
    conversation = read_conversation(span)
    if not conversation.messages:
        raise TraceImportError(
            f"{span.where}: span {span.name!r} ({span.instrumentation}) holds no messages "
            "(gen_ai.input.messages): message content was not captured. To capture it, "
            f"set {capture_hint(span)}"
        )
    model = str(span.get("gen_ai.request.model", "gen_ai.response.model") or "")
    flag = span.get(*_STREAM_FLAGS)
    forms = [bool(flag)] if isinstance(flag, bool) else [True, False]
    serves = ("stream" if flag else "json") if isinstance(flag, bool) else "as asked"
    tools = span.get("gen_ai.tool.definitions")
    out = []
    for stream in forms:
        origin: dict[str, Any] = {
            "source": "trace",
            "trace": span.trace_id,
            "span": span.span_id,
            "step": step,
            "from": Path(span.where).name,  # the file's name and line: no machine's path
            "instrumentation": span.instrumentation,
            "serves": serves,
            "filled": [],
            "corrected": [],
        }
        body = request_body(
            provider,
            conversation,
            model=model,
            stream=stream,
            tools=list(tools) if isinstance(tools, list) else [],
            max_tokens=_int(span.get("gen_ai.request.max_tokens")),
        )
        url = _url(span, provider, model, stream)
        codec = codec_for(provider)
        parsed = codec.parse_call("POST", target(url), body)
        ctx = RenderContext(model=model, request=parsed, ids=IdFactory(f"{span.span_id}:{step}"))
        if span.failed:
            response = _failure(span, codec, ctx, origin)
        else:
            response = _success(span, codec, ctx, stream, origin)
        if response is None:
            return []
        request = RecordedRequest(
            method="POST", url=url, headers={"content-type": "application/json"}, json=body
        )
        out.append(Interaction(request=request, response=response, origin=origin))
    return out


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float, str)) and str(value).isdigit() else None


def _url(span: TraceSpan, provider: Provider, model: str, stream: bool) -> str:
    """The provider's URL for the call, on the host the span names when it names one."""
    url = facts(provider).url(model, stream=stream)
    base = span.get("gen_ai.openai.api_base", "server.address")
    if not isinstance(base, str) or not base:
        return url
    parts = urlsplit(base if "//" in base else f"https://{base}")
    port = span.get("server.port")
    netloc = parts.netloc if port is None or ":" in parts.netloc else f"{parts.netloc}:{port}"
    mine = urlsplit(url)  # the provider's path: a base URL's path prefix is its own
    return urlunsplit((parts.scheme or "https", netloc, mine.path, mine.query, ""))


def _failure(
    span: TraceSpan, codec: Codec, ctx: RenderContext, origin: dict[str, Any]
) -> RecordedResponse | None:
    fault = failure_fault(span)
    if fault is None:
        return None  # no HTTP answer to replay: the caller reports the span
    error = codec.error_response(fault, ctx)
    origin["filled"] += ["error body (the provider's format, the trace's message)", "headers"]
    return RecordedResponse(status=error.status, headers=error.headers, json=error.body)


def _success(
    span: TraceSpan, codec: Codec, ctx: RenderContext, stream: bool, origin: dict[str, Any]
) -> RecordedResponse:
    filled: list[str] = origin["filled"]
    corrected: list[str] = origin["corrected"]
    parts, finish = output_parts(span)
    if not parts and span.get("gen_ai.output.messages") is None:
        raise TraceImportError(
            f"{span.where}: span {span.name!r} ({span.instrumentation}) holds no reply "
            "(gen_ai.output.messages): message content was not captured. To capture it, "
            f"set {capture_hint(span)}"
        )
    calls = [p for p in parts if isinstance(p, ToolCall)]
    drop_made_up_ids(span, calls, corrected)
    made_up = iter(calls)
    parts = [next(made_up) if isinstance(p, ToolCall) else p for p in parts]
    usage = usage_of(span)
    if usage is None:
        filled.append("usage (estimated from the text)")
    elif stream and codec.provider == "anthropic":
        usage = streamed_usage(span, usage, corrected)
    stop = STOPS.get(str(finish).lower()) if finish is not None else None
    filled.append(f"stop reason (the trace says {finish!r})")
    response_model = span.get("gen_ai.response.model")
    reply = Reply(
        parts=parts,
        usage=usage,
        stop=stop,
        model=str(response_model) if response_model else None,
    )
    if any(isinstance(p, ToolCall) and p.id is None for p in parts):
        filled.append("tool call ids")
    body = codec.render_body(reply, _fresh(ctx))
    response_id = span.get("gen_ai.response.id")
    made = _rendered_id(body)
    swap = isinstance(response_id, str) and bool(response_id) and made is not None
    if not swap:
        filled.append("response id")
    filled.append("headers")
    if not stream:
        if swap:
            body = _swapped(body, str(made), str(response_id))
        return RecordedResponse(
            status=200, headers=codec.response_headers(ctx, streaming=False), json=body
        )
    events = codec.render_events(reply, ctx)
    filled.append("event boundaries and timings")
    first = span.get("gen_ai.response.time_to_first_chunk")
    recorded = []
    for number, event in enumerate(events):
        data = event.data.replace(str(made), str(response_id)) if swap else event.data
        t = float(first) if number == 0 and isinstance(first, (int, float)) else None
        recorded.append(RecordedEvent(data=data, event=event.event, t=t))
    return RecordedResponse(
        status=200, headers=codec.response_headers(ctx, streaming=True), events=recorded
    )


def _fresh(ctx: RenderContext) -> RenderContext:
    """A copy of ``ctx`` drawing the same ids: the body and the events of one reply
    draw theirs in one order, so the body tells which id the events carry."""
    return RenderContext(model=ctx.model, request=ctx.request, ids=IdFactory(ctx.ids.seed))


def _rendered_id(body: Mapping[str, Any]) -> str | None:
    value = body.get("id", body.get("responseId"))
    return value if isinstance(value, str) and value else None


def _swapped(body: dict[str, Any], made: str, wanted: str) -> dict[str, Any]:
    key = "id" if body.get("id") == made else "responseId"
    return {**body, key: wanted}


def failed_without_answer(span: TraceSpan) -> str:
    """Why a failed span gave no interaction, for the import's report."""
    return (
        f"{span.where}: span {span.name!r} failed without an HTTP answer "
        f"({failure_text(span) or span.get('error.type')}); replay it with "
        "agentreplay.inject(Fault.timeout(), at_call=n) or a fake model's fault"
    )
