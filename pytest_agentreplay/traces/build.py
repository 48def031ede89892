"""Spans to interactions: each model call of a trace as its provider sent it.

For every inference span, in the order the calls started:

* the request body is built from what the span knows (:mod:`.genai`), written out by
  the provider's codec as its SDK sends it (each folder's ``compose`` role);
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
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from ..cassettes.cassette import Interaction, RecordedEvent, RecordedRequest, RecordedResponse
from ..cassettes.fields import StreamEnd
from ..errors import TraceImportError
from ..neutral import Provider, Reply, StopReason, Thinking, ToolCall
from ..providers import Codec, IdFactory, RenderContext, codec_for, target
from ..providers.catalog import facts
from .capture import capture_hint
from .failures import failure_fault, failure_text
from .genai import output_parts, provider_of, read_request, recorded_call, usage_of
from .quirks import drop_made_up_ids, reasoning_summaries, streamed_usage
from .spans import TraceSpan

if TYPE_CHECKING:
    from ..sse import SSEEvent

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
    for a failed call the trace does not say enough of (see :func:`failed_without_answer`)."""
    provider = provider_of(span)
    model = str(span.get("gen_ai.request.model", "gen_ai.response.model") or "")
    asked = read_request(span, provider, model=model, stream=False)
    if not asked.messages and span.failed:
        return []  # nothing to match it by: reported (failed_without_answer)
    if not asked.messages:
        raise TraceImportError(
            f"{span.where}: span {span.name!r} ({span.instrumentation}) holds no messages "
            "(gen_ai.input.messages): message content was not captured. To capture it, "
            f"set {capture_hint(span)}"
        )
    flag = span.get(*_STREAM_FLAGS)
    forms = [bool(flag)] if isinstance(flag, bool) else [True, False]
    serves = ("stream" if flag else "json") if isinstance(flag, bool) else "as asked"
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
        codec = codec_for(provider)
        body = codec.compose_request(
            asked.model_copy(update={"stream": stream}),
            max_tokens=_int(span.get("gen_ai.request.max_tokens")),
        )
        url = _url(span, provider, model, stream)
        parsed = codec.parse_call("POST", target(url), body)
        ctx = RenderContext(model=model, request=parsed, ids=IdFactory(f"{span.span_id}:{step}"))
        if span.failed:
            response = _failure(span, codec, ctx, stream, origin)
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
    span: TraceSpan, codec: Codec, ctx: RenderContext, stream: bool, origin: dict[str, Any]
) -> RecordedResponse | None:
    """The failed call's answer: the provider's HTTP error, an error event in a stream,
    or no answer at all (a timeout, a dropped connection); ``None`` when the trace does
    not say how it failed (the caller reports the span)."""
    fault = failure_fault(span, streamed=stream)
    if fault is None:
        return None
    filled: list[str] = origin["filled"]
    if fault.kind in ("timeout", "cut"):
        if fault.kind == "timeout":  # before any response: status and headers never sent
            origin["no_response"] = True
            filled.append("when the timeout struck (before any response)")
        else:  # the peer closed the connection: after the headers, before any body
            filled.append("when the cut struck (after the headers, before the body)")
        headers = codec.response_headers(ctx, streaming=stream)
        events: list[RecordedEvent] | None = [] if stream else None
        return RecordedResponse(status=200, headers=headers, events=events, end=fault.kind)
    if fault.kind == "error_event":
        event = codec.error_event(fault, ctx)
        filled += ["error event (the provider's format, the trace's message)", "headers"]
        filled.append("the events before the error (the trace keeps none)")
        return RecordedResponse(
            status=200,
            headers=codec.response_headers(ctx, streaming=True),
            events=[RecordedEvent(data=event.data, event=event.event)],
        )
    error = codec.error_response(fault, ctx)
    filled += ["error body (the provider's format, the trace's message)", "headers"]
    return RecordedResponse(status=error.status, headers=error.headers, json=error.body)


def _success(
    span: TraceSpan, codec: Codec, ctx: RenderContext, stream: bool, origin: dict[str, Any]
) -> RecordedResponse:
    filled: list[str] = origin["filled"]
    corrected: list[str] = origin["corrected"]
    parts, finish = output_parts(span)
    if not parts and span.get("gen_ai.output.messages") is None and not recorded_call(span):
        raise TraceImportError(
            f"{span.where}: span {span.name!r} ({span.instrumentation}) holds no reply "
            "(gen_ai.output.messages): message content was not captured. To capture it, "
            f"set {capture_hint(span)}"
        )
    calls = [p for p in parts if isinstance(p, ToolCall)]
    drop_made_up_ids(span, calls, corrected)
    made_up = iter(calls)
    parts = [next(made_up) if isinstance(p, ToolCall) else p for p in parts]
    parts = _thinking(span, codec, parts, origin)
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
    end: StreamEnd = "complete"
    if finish == "" and span.get(*_STREAM_FLAGS) is True:
        events, end = _unfinished(codec, events), "cut"
        corrected.append(
            "the stream ended before its finish reason (the span says it streamed and "
            "gives none): replayed cut after the output it kept"
        )
    first = span.get("gen_ai.response.time_to_first_chunk")
    recorded = []
    for number, event in enumerate(events):
        data = event.data.replace(str(made), str(response_id)) if swap else event.data
        t = float(first) if number == 0 and isinstance(first, (int, float)) else None
        recorded.append(RecordedEvent(data=data, event=event.event, t=t))
    return RecordedResponse(
        status=200, headers=codec.response_headers(ctx, streaming=True), events=recorded, end=end
    )


def _unfinished(codec: Codec, events: list[SSEEvent]) -> list[SSEEvent]:
    """The events of a stream up to where it would have finished: the longest start
    that does not fold to a complete reply (OpenLLMetry's OpenAI instrumentation records
    a Chat stream that broke off as a success with the text so far and no finish
    reason)."""
    for size in range(len(events), 0, -1):
        if not codec.fold_detailed(events[:size]).complete:
            return events[:size]
    return []


def _thinking(span: TraceSpan, codec: Codec, parts: list[Any], origin: dict[str, Any]) -> list[Any]:
    """The reply's reasoning as its wire format carries it: Anthropic's thinking blocks
    need a signature (the trace keeps none: one is made up), OpenAI Chat Completions
    has no place for reasoning at all (left out, and said so)."""
    if codec.provider == "openai_responses":
        parts = reasoning_summaries(span, parts, origin["corrected"])
    thinking = [p for p in parts if isinstance(p, Thinking)]
    if not thinking:
        return parts
    if codec.provider == "openai_chat":
        origin["corrected"].append(
            f"reasoning ({sum(len(p.text) for p in thinking)} characters) left out: "
            "Chat Completions sends none"
        )
        return [p for p in parts if not isinstance(p, Thinking)]
    if codec.provider == "anthropic" and any(p.signature is None for p in thinking):
        origin["filled"].append("thinking signatures")
    return parts


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
    error = failure_text(span) or span.get("error.type")
    if not span.get("gen_ai.input.messages"):
        why = (
            "keeps no messages to match the call by (message content was not captured, "
            f"or {span.instrumentation} keeps none for a failed call; to capture it, set "
            f"{capture_hint(span)})"
        )
    else:
        why = "does not say how it failed (no HTTP status, no timeout or connection error)"
    return (
        f"{span.where}: span {span.name!r} failed ({error}) and {why}; replay the failure "
        "with agentreplay.inject(fault, at_call=n) or a fake model's fault"
    )
