"""Rendering a neutral :class:`~....neutral.Reply` as an OpenAI
Responses API body and as the SSE stream the API sends for it.

Both renderings start from one :class:`_Plan` that allocates every id (response,
items, call ids) before any event is written, so the JSON body and the stream of
one reply, rendered from equal contexts, agree id for id; only the stream then
draws the per-delta ``obfuscation`` padding from the context's id factory.

A provider-side web search is a ``web_search_call`` item: announced ``in_progress``
without its action, then ``response.web_search_call.in_progress`` / ``searching``
/ ``completed``, then done with its ``action`` (whose ``sources`` the API lists
only when the request's ``include`` asks for ``web_search_call.action.sources``),
as in ``tests/corpus/real/openai_responses/pydantic-ai__test_openai_responses_
model_web_search_tool_stream.yaml``. A text part's citations are ``url_citation``
annotations, each announced by ``response.output_text.annotation.added`` once the
text it covers has streamed.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ....neutral import Reply, ServerToolCall, Text, Thinking, ToolCall, Usage
from ....sse import SSEEvent
from ...base import Codec, RenderContext, iter_text, json_data, split_json

__all__ = ["iter_events", "render_body"]

_OBFUSCATION_WIDTH = 16  # the API pads each delta + obfuscation to 16 characters


def render_body(codec: Codec, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
    """The ``Response`` object ``POST /v1/responses`` returns for ``reply``."""
    return _response(reply, ctx, _plan(reply, ctx), final=True)


def iter_events(codec: Codec, reply: Reply, ctx: RenderContext) -> Iterator[SSEEvent]:
    """``response.created`` (plus ``response.queued`` for background requests),
    ``response.in_progress``, each item's events, then ``response.completed``
    (``response.incomplete`` when the reply stopped at ``max_tokens``) — lazily,
    so the first event does not wait for the last delta to be cut."""
    plan = _plan(reply, ctx)  # ids first, so both renderings share them
    final = _response(reply, ctx, plan, final=True)
    stream = _EventWriter(ctx)
    start = _response(reply, ctx, plan, final=False)
    yield stream.emit("response.created", response=start)
    if start["status"] == "queued":
        yield stream.emit("response.queued", response=start)
        start = {**start, "status": "in_progress"}
    yield stream.emit("response.in_progress", response=start)
    for index, item in enumerate(plan.output):
        yield from stream.item(index, item)
    terminal = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
    yield stream.emit(terminal, response=final)


def _no(annotations: list[Any]) -> dict[str, Any]:
    """An opened text part's annotations: none yet (they are announced one by one)."""
    return {"annotations": []} if annotations else {}


def _raw(ctx: RenderContext) -> Mapping[str, Any]:
    return ctx.request.raw if ctx.request is not None else {}


@dataclass(frozen=True)
class _Plan:
    """Everything id-bearing about one rendering, allocated before any event is
    written, so the JSON body and the stream of one reply agree on every id."""

    response_id: str
    output: list[dict[str, Any]]


def _plan(reply: Reply, ctx: RenderContext) -> _Plan:
    """The response id and the final ``output`` items for ``reply``.

    Consecutive text parts share one ``message`` item (one ``output_text`` part
    each); with ``stop="refusal"`` they are ``refusal`` parts instead. The last
    item is ``incomplete`` when the reply was cut by ``max_tokens``.
    """
    parts = [] if reply.fault is not None and reply.fault.kind == "empty" else reply.parts
    response_id = ctx.ids.hex("resp_", 50)
    items: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Text):
            if not items or items[-1]["type"] != "message":
                items.append(_message_item(ctx.ids.hex("msg_", 50)))
            items[-1]["content"].append(_text_content(part, refusal=reply.stop == "refusal"))
        elif isinstance(part, ToolCall):
            items.append(_function_call_item(part, ctx))
        elif isinstance(part, ServerToolCall):
            items.append(_web_search_item(part, ctx))
        else:
            items.append(_reasoning_item(part, ctx.ids.hex("rs_", 50)))
    last = items[-1] if items else {}
    if reply.stop == "max_tokens" and last.get("type") in ("message", "function_call"):
        last["status"] = "incomplete"
    return _Plan(response_id=response_id, output=items)


def _message_item(item_id: str) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "message",
        "status": "completed",
        "content": [],
        "role": "assistant",
    }


def _text_content(part: Text, *, refusal: bool) -> dict[str, Any]:
    if refusal:
        return {"type": "refusal", "refusal": part.text}
    annotations = [_url_citation(part, c) for c in part.citations]
    return {"type": "output_text", "annotations": annotations, "logprobs": [], "text": part.text}


def _url_citation(part: Text, citation: Any) -> dict[str, Any]:
    start, end = citation.span(part.text)
    return {
        "type": "url_citation",
        "end_index": end,
        "start_index": start,
        "title": citation.title,
        "url": citation.url,
    }


def _web_search_item(part: ServerToolCall, ctx: RenderContext) -> dict[str, Any]:
    """A ``web_search_call`` item (the codec renders no other server tool)."""
    action: dict[str, Any] = {"type": "search", "query": part.query}
    include = _raw(ctx).get("include")
    if isinstance(include, list) and "web_search_call.action.sources" in include:
        action["sources"] = [{"type": "url", "url": page.url} for page in part.results]
    return {
        "id": part.id or ctx.ids.hex("ws_", 50),
        "type": "web_search_call",
        "status": "completed" if part.error is None else "failed",
        "action": action,
    }


def _function_call_item(part: ToolCall, ctx: RenderContext) -> dict[str, Any]:
    item_id = ctx.ids.hex("fc_", 50)
    return {
        "id": item_id,
        "type": "function_call",
        "status": "completed",
        "arguments": json_data(part.args),
        "call_id": part.id or ctx.ids.new("call_", 24),
        "name": part.name,
    }


def _reasoning_item(part: Thinking, item_id: str) -> dict[str, Any]:
    item: dict[str, Any] = {"id": item_id, "type": "reasoning"}
    if part.signature is not None:
        item["encrypted_content"] = part.signature
    item["summary"] = [{"type": "summary_text", "text": part.text}] if part.text else []
    return item


def _response(reply: Reply, ctx: RenderContext, plan: _Plan, *, final: bool) -> dict[str, Any]:
    """A ``Response`` object: in progress (for ``response.created``) or final.

    Request options are echoed back the way the API does, with its defaults.
    """
    raw = _raw(ctx)
    incomplete = final and reply.stop == "max_tokens"
    background = bool(raw.get("background") or False)
    tier = raw.get("service_tier") or "auto"
    body: dict[str, Any] = {
        "id": plan.response_id,
        "object": "response",
        "created_at": ctx.created,
        "status": _status(final=final, incomplete=incomplete, background=background),
        "background": background,
        "completed_at": ctx.created if final else None,
    }
    conversation = raw.get("conversation")
    if conversation is not None:
        body["conversation"] = _conversation_echo(conversation)
    body.update(
        {
            "error": None,
            "frequency_penalty": raw.get("frequency_penalty", 0.0),
            "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
            "instructions": raw.get("instructions"),
            "max_output_tokens": raw.get("max_output_tokens"),
            "max_tool_calls": raw.get("max_tool_calls"),
            "model": ctx.model_for(reply),
            "moderation": None,
            "output": plan.output if final else [],
            "parallel_tool_calls": raw.get("parallel_tool_calls", True),
            "presence_penalty": raw.get("presence_penalty", 0.0),
            "previous_response_id": raw.get("previous_response_id"),
            "prompt_cache_key": raw.get("prompt_cache_key"),
            "prompt_cache_retention": raw.get("prompt_cache_retention"),
            "reasoning": _reasoning_echo(raw.get("reasoning")),
            "safety_identifier": raw.get("safety_identifier"),
            "service_tier": "default" if final and tier == "auto" else tier,
            "store": raw.get("store", True),
            "temperature": raw.get("temperature", 1.0),
            "text": _text_echo(raw.get("text")),
            "tool_choice": raw.get("tool_choice", "auto"),
            "tools": [_tool_echo(tool) for tool in raw.get("tools") or []],
            "top_logprobs": raw.get("top_logprobs", 0),
            "top_p": raw.get("top_p", 1.0),
            "truncation": raw.get("truncation", "disabled"),
            "usage": _usage_json(ctx.usage_for(reply)) if final else None,
            "user": raw.get("user"),
            "metadata": raw.get("metadata") or {},
        }
    )
    return body


def _status(*, final: bool, incomplete: bool, background: bool) -> str:
    if final:
        return "incomplete" if incomplete else "completed"
    return "queued" if background else "in_progress"


def _conversation_echo(conversation: Any) -> dict[str, Any]:
    return {"id": conversation} if isinstance(conversation, str) else dict(conversation)


def _reasoning_echo(value: Any) -> dict[str, Any]:
    given = value if isinstance(value, Mapping) else {}
    return {
        "effort": given.get("effort"),
        "summary": given.get("summary"),
        **{k: v for k, v in given.items() if k not in ("effort", "summary")},
    }


def _text_echo(value: Any) -> dict[str, Any]:
    given = value if isinstance(value, Mapping) else {}
    return {
        "format": given.get("format") or {"type": "text"},
        "verbosity": given.get("verbosity") or "medium",
        **{k: v for k, v in given.items() if k not in ("format", "verbosity")},
    }


def _tool_echo(tool: Any) -> Any:
    """Function tools come back with ``type`` first, other keys sorted, and the
    API's defaults (``description: null``, ``strict: true``)."""
    if not isinstance(tool, Mapping) or tool.get("type") != "function":
        return tool
    fields = {"description": None, "parameters": None, "strict": True, **tool}
    fields.pop("type")
    return {"type": "function", **dict(sorted(fields.items()))}


def _usage_json(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cache_read_input_tokens or 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens or 0},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


class _EventWriter:
    """Writes the records one by one: numbering, event names, deltas, obfuscation."""

    def __init__(self, ctx: RenderContext) -> None:
        self.ctx = ctx
        self.count = 0
        opts = _raw(ctx).get("stream_options")
        self.obfuscate = not (
            isinstance(opts, Mapping) and opts.get("include_obfuscation") is False
        )

    def emit(self, kind: str, **fields: Any) -> SSEEvent:
        """One record; keys after ``type`` in alphabetical order, as the API sends them."""
        fields["sequence_number"] = self.count
        self.count += 1
        payload = {"type": kind, **dict(sorted(fields.items()))}
        return SSEEvent(data=json_data(payload), event=kind)

    def delta(self, kind: str, text: str, **fields: Any) -> SSEEvent:
        """A delta record; the API pads ``delta`` + ``obfuscation`` to 16 characters."""
        if self.obfuscate:
            width = max(0, _OBFUSCATION_WIDTH - len(text))
            fields["obfuscation"] = self.ctx.ids.new("", width)
        return self.emit(kind, delta=text, **fields)

    def item(self, index: int, item: dict[str, Any]) -> Iterator[SSEEvent]:
        """``output_item.added``, the item's own events, ``output_item.done``."""
        kind = item["type"]
        opening = {**item, "status": "in_progress"} if "status" in item else dict(item)
        where = {"item_id": item["id"], "output_index": index}
        if kind == "message":
            opening["content"] = []
            yield self.emit("response.output_item.added", item=opening, output_index=index)
            for content_index, part in enumerate(item["content"]):
                yield from self.content_part(part, content_index=content_index, **where)
        elif kind == "function_call":
            opening["arguments"] = ""
            yield self.emit("response.output_item.added", item=opening, output_index=index)
            for piece in split_json(item["arguments"]):
                yield self.delta("response.function_call_arguments.delta", piece, **where)
            yield self.emit(
                "response.function_call_arguments.done", arguments=item["arguments"], **where
            )
        elif kind == "web_search_call":
            yield from self.web_search(item, where)
        else:
            opening["summary"] = []
            yield self.emit("response.output_item.added", item=opening, output_index=index)
            for summary_index, part in enumerate(item["summary"]):
                yield from self.summary_part(part, summary_index=summary_index, **where)
        yield self.emit("response.output_item.done", item=item, output_index=index)

    def web_search(self, item: dict[str, Any], where: dict[str, Any]) -> Iterator[SSEEvent]:
        """A search item: announced without its action, searched, done with it."""
        opening = {"id": item["id"], "type": item["type"], "status": "in_progress"}
        yield self.emit(
            "response.output_item.added", item=opening, output_index=where["output_index"]
        )
        steps = ("in_progress", "searching") + (
            ("completed",) if item["status"] == "completed" else ()
        )
        for step in steps:
            yield self.emit(f"response.web_search_call.{step}", **where)

    def content_part(self, part: dict[str, Any], **where: Any) -> Iterator[SSEEvent]:
        key, name = (
            ("text", "output_text") if part["type"] == "output_text" else ("refusal", "refusal")
        )
        annotations = part.get("annotations") or []
        yield self.emit(
            "response.content_part.added", part={**part, key: "", **_no(annotations)}, **where
        )
        extra: dict[str, Any] = {"logprobs": []} if key == "text" else {}
        pending, streamed = list(enumerate(annotations)), 0
        for piece in iter_text(part[key], self.ctx.text_chunk):
            yield self.delta(f"response.{name}.delta", piece, **extra, **where)
            streamed += len(piece)
            pending = yield from self.annotations(pending, streamed, where)
        yield from self.annotations(pending, None, where)
        yield self.emit(f"response.{name}.done", **{key: part[key]}, **extra, **where)
        yield self.emit("response.content_part.done", part=part, **where)

    def annotations(
        self, pending: list[tuple[int, Any]], streamed: int | None, where: dict[str, Any]
    ) -> Generator[SSEEvent, None, list[tuple[int, Any]]]:
        """Announce the annotations whose text has streamed (all, when ``streamed`` is
        ``None``); return the ones still to come."""
        while pending and (streamed is None or pending[0][1]["end_index"] <= streamed):
            position, annotation = pending.pop(0)
            yield self.emit(
                "response.output_text.annotation.added",
                annotation=annotation,
                annotation_index=position,
                content_index=where["content_index"],
                item_id=where["item_id"],
                output_index=where["output_index"],
            )
        return pending

    def summary_part(self, part: dict[str, Any], **where: Any) -> Iterator[SSEEvent]:
        yield self.emit("response.reasoning_summary_part.added", part={**part, "text": ""}, **where)
        for piece in iter_text(part["text"], self.ctx.text_chunk):
            yield self.delta("response.reasoning_summary_text.delta", piece, **where)
        yield self.emit("response.reasoning_summary_text.done", text=part["text"], **where)
        yield self.emit("response.reasoning_summary_part.done", part=part, **where)
