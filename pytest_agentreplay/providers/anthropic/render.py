"""Render a neutral :class:`~...neutral.Reply` as an Anthropic ``Message`` body, or as
the event stream the API sends for it::

    message_start, content_block_start, ping, content_block_delta..., content_block_stop,
    (content_block_start, content_block_delta..., content_block_stop)..., message_delta,
    message_stop

with ``text_delta`` for text (after one ``citations_delta`` per citation),
``input_json_delta`` for tool input (an empty fragment first, then the JSON cut
into uneven pieces, as the API does), ``thinking_delta`` + ``signature_delta`` for
thinking, a ``server_tool_use`` block and its result block for a provider-side tool
(:mod:`.blocks`), and the final stop reason and output-token count in
``message_delta``. The ``ping`` follows the first ``content_block_start`` (or
``message_start`` when there are no blocks), where the real API puts it.

Both renderings start from one :class:`_Plan` that draws every id from the context
in one order, so the body and the stream of one reply agree id for id.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import repeat
from json.encoder import encode_basestring
from typing import Any, NamedTuple, TypeVar, cast

from ...neutral import Reply, StopReason, Text, Usage
from ...sse import SSEEvent
from ..base import EAGER_TEXT, Codec, RenderContext, iter_text, json_data, wire_writer
from .blocks import container, delta_data, opening, server_tool_usage, to_blocks

__all__ = ["block_json", "body_wire", "event", "iter_events", "iter_wire", "render_body"]

_PING_DATA = '{"type": "ping"}'  # the API writes this one spaced
T = TypeVar("T")
_DELTA_WIRE = "event: content_block_delta\ndata: {}\n\n".format
"""The text of a delta event as :func:`~...sse.event_bytes` writes it: a delta's data
is JSON on one line (its strings escape every line end), never empty."""


class _Plan(NamedTuple):
    """One reply laid out for rendering: the model and message id of its head, its
    content blocks, its usage and its code-execution container (ids drawn once, for
    both paths)."""

    model: str
    ident: str
    blocks: list[dict[str, Any]]
    usage: Usage
    container: dict[str, Any] | None

    @property
    def head(self) -> dict[str, Any]:
        """The message's first fields: model, id, type, role."""
        return {"model": self.model, "id": self.ident, "type": "message", "role": "assistant"}

    def head_json(self) -> str:
        """:attr:`head` as the members of a JSON object, without its braces."""
        return (
            f'"model":{encode_basestring(self.model)},"id":{encode_basestring(self.ident)},'
            '"type":"message","role":"assistant"'
        )


def event(name: str, payload: dict[str, Any]) -> SSEEvent:
    """An event named ``name`` whose data carries the same ``type``, as the API sends."""
    return SSEEvent(event=name, data=_data(name, payload))


def _data(name: str, payload: dict[str, Any]) -> str:
    """The data of :func:`event`."""
    return json_data({"type": name, **payload})


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


def _usage_json(
    usage: Usage,
    *,
    output_tokens: int,
    start: bool,
    end: bool,
    server_tools: dict[str, int] | None = None,
) -> str:
    """:func:`_usage` as JSON: the usual object (no cache fields, no thinking tokens, no
    server tools) written around its two numbers, the rest encoded from the dict."""
    if (
        usage.cache_creation_input_tokens is None
        and usage.cache_read_input_tokens is None
        and not (end and (server_tools is not None or usage.reasoning_tokens is not None))
    ):
        tier = ',"service_tier":"standard"' if start else ""
        return f'{{"input_tokens":{usage.input_tokens:d},"output_tokens":{output_tokens:d}{tier}}}'
    usage_object = _usage(
        usage, output_tokens=output_tokens, start=start, end=end, server_tools=server_tools
    )
    return json_data(usage_object)


_REFUSAL = {"type": "refusal", "category": None, "explanation": None}
_REFUSAL_JSON = json_data(_REFUSAL)


def _stop_sequence(stop: StopReason, ctx: RenderContext) -> str | None:
    """The matched stop sequence: the request's first one (the reply cannot say which)."""
    if stop == "stop_sequence" and ctx.request is not None:
        sequences = ctx.request.raw.get("stop_sequences")
        if isinstance(sequences, list) and sequences and isinstance(sequences[0], str):
            return sequences[0]
    return None


def _stop_fields(stop: StopReason, ctx: RenderContext) -> dict[str, Any]:
    """``stop_reason`` / ``stop_sequence`` / ``stop_details`` for a stop reason; a
    refusal carries the API's ``stop_details`` object."""
    details = dict(_REFUSAL) if stop == "refusal" else None
    return {
        "stop_reason": stop,
        "stop_sequence": _stop_sequence(stop, ctx),
        "stop_details": details,
    }


def _stop_json(stop: StopReason, ctx: RenderContext) -> str:
    """:func:`_stop_fields` as the members of a JSON object, without its braces."""
    written = _STOPS_WRITTEN.get(stop)
    if written is not None:
        return written
    return _stop_members(stop, _stop_sequence(stop, ctx))


def _stop_members(stop: StopReason, sequence: str | None) -> str:
    """The members :func:`_stop_json` writes for ``stop`` and its matched ``sequence``."""
    return (
        f'"stop_reason":{encode_basestring(stop)},'
        f'"stop_sequence":{"null" if sequence is None else encode_basestring(sequence)},'
        f'"stop_details":{_REFUSAL_JSON if stop == "refusal" else "null"}'
    )


_STOPS_WRITTEN = {
    stop: _stop_members(stop, None) for stop in ("end_turn", "tool_use", "max_tokens")
}
""":func:`_stop_json` of the stop reasons that name no sequence and carry no details,
written once."""


def _plan(reply: Reply, ctx: RenderContext) -> _Plan:
    """Everything both renderings share, drawn from ``ctx.ids`` in one order."""
    model = ctx.model_for(reply)
    ident = ctx.ids.new("msg_01", 22)
    blocks = [block for part in reply.parts for block in to_blocks(part, ctx)]
    return _Plan(model, ident, blocks, ctx.usage_for(reply), container(reply.parts, ctx))


def render_body(codec: Codec, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
    """The ``Message`` JSON ``client.messages.create`` receives."""
    plan = _plan(reply, ctx)
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


def body_wire(codec: Codec, reply: Reply, ctx: RenderContext) -> bytes:
    """:func:`render_body` as the bytes sent, written around the encoded values (no
    object built for the message, its text blocks or its usage: bench/ W5). A reply of
    plain text only (no citations), the usual one, is written in one step: it draws one
    id, names no tool and no container, and its blocks are its texts (the parts are
    looked at once, not once for each thing the body says of them). Refuses a reply the
    format cannot send (``Codec.check_renders``), as ``FolderCodec.body_wire`` asks."""
    texts = []
    for part in reply.parts:  # a loop, not a comprehension: no function called
        if type(part) is not Text or part.citations:
            codec.check_renders(reply)  # plain text needs no check: every format sends it
            return _body_wire(reply, ctx)
        texts.append(part.text)
    # plain text: the ids drawn as _plan draws them (the message's, and no other)
    model = ctx.model_for(reply)
    ident = ctx.ids.new("msg_01", 22)
    usage = ctx.usage_for(reply)
    content = (
        '{"type":"text","text":'
        + '},{"type":"text","text":'.join(map(encode_basestring, texts))
        + "}"
        if texts
        else ""
    )
    # no server tool in plain text, and no tool call to stop for (Reply.stop_reason)
    stop = "end_turn" if reply.stop is None else reply.stop
    usage_json = _usage_json(usage, output_tokens=usage.output_tokens, start=True, end=True)
    return (
        f'{{"model":{encode_basestring(model)},"id":{encode_basestring(ident)},'
        f'"type":"message","role":"assistant","content":[{content}],'
        f'{_stop_json(stop, ctx)},"usage":{usage_json}}}'
    ).encode()


def _body_wire(reply: Reply, ctx: RenderContext) -> bytes:
    """:func:`body_wire` of any reply, from its :func:`_plan`."""
    plan = _plan(reply, ctx)
    usage = plan.usage
    extra = "" if plan.container is None else f',"container":{json_data(plan.container)}'
    usage_json = _usage_json(
        usage,
        output_tokens=usage.output_tokens,
        start=True,
        end=True,
        server_tools=server_tool_usage(reply.parts),
    )
    return (
        f'{{{plan.head_json()},"content":[{",".join(map(block_json, plan.blocks))}],'
        f'{_stop_json(reply.stop_reason, ctx)}{extra},"usage":{usage_json}}}'
    ).encode()


def iter_events(codec: Codec, reply: Reply, ctx: RenderContext) -> Iterator[SSEEvent]:
    """The stream for ``reply``, lazily; folds to exactly :func:`render_body`'s JSON."""
    return _stream(reply, ctx, SSEEvent)


def iter_wire(codec: Codec, reply: Reply, ctx: RenderContext) -> Iterator[bytes]:
    """:func:`iter_events` as the bytes sent, each event written in one step: what a fake
    streams when no fault or added field changes the events (bench/ W5: an event object
    built, then encoded, was a third of a streamed call)."""
    emit = _json_event_lf if codec.sse_line_end == "\n" else wire_writer(codec.sse_line_end)
    return _stream(reply, ctx, emit)


def _json_event_lf(data: str, name: str) -> bytes:
    """:func:`~...sse.event_bytes` of an event whose data is JSON (never a line end in
    it: JSON escapes them) and whose name is the codec's own, LF line ends: written
    without looking for line ends to split at."""
    return f"event: {name}\ndata: {data}\n\n".encode()


_PLAIN_TEXT_OPENING = json_data({"type": "text", "text": ""})
_MESSAGE_STOP = json_data({"type": "message_stop"})


def _stream(reply: Reply, ctx: RenderContext, emit: Callable[[str, str], T]) -> Iterator[T]:
    """The events of the stream for ``reply``, each as ``emit(data, name)`` makes it.
    Each event's data is written around its encoded values, as :func:`body_wire`
    writes the body (the objects built and encoded were most of a stream's cost:
    bench/ W5); a block other than plain text is encoded from its objects."""
    plan = _plan(reply, ctx)
    usage = plan.usage
    start_usage = _usage_json(
        usage, output_tokens=min(usage.output_tokens, 1), start=True, end=False
    )
    message = (
        f'{{{plan.head_json()},"content":[],"stop_reason":null,"stop_sequence":null,'
        f'"stop_details":null,"usage":{start_usage}}}'
    )
    yield emit(f'{{"type":"message_start","message":{message}}}', "message_start")
    if not plan.blocks:
        yield emit(_PING_DATA, "ping")
    for index, block in enumerate(plan.blocks):
        opened = _PLAIN_TEXT_OPENING if _plain_text(block) else json_data(opening(block))
        start = f'{{"type":"content_block_start","index":{index},"content_block":{opened}}}'
        yield emit(start, "content_block_start")
        if index == 0:
            yield emit(_PING_DATA, "ping")
        # the deltas made by the emitter in C (map), not one step of this generator each
        if emit is _json_event_lf:  # the wire, LF line ends
            yield from cast("Iterator[T]", _deltas_wire(block, ctx, index))
        else:
            yield from map(emit, delta_data(block, ctx, index), repeat("content_block_delta"))
        yield emit(f'{{"type":"content_block_stop","index":{index}}}', "content_block_stop")
    yield emit(_message_delta(reply, plan, ctx), "message_delta")
    yield emit(_MESSAGE_STOP, "message_stop")


def _deltas_wire(block: dict[str, Any], ctx: RenderContext, index: int) -> Iterable[bytes]:
    """The ``content_block_delta`` events of block ``index`` as the bytes sent (LF line
    ends): a plain text the length of a reply's usual one, written in one comprehension
    (bench/ W5); any other block's each written by ``map`` in C from
    :func:`~.blocks.delta_data`, lazily (a long text's first delta does not wait for
    its last). A text that cannot be encoded fails at its delta, as before."""
    text = block["text"] if _plain_text(block) else None
    if text is not None and len(text) <= EAGER_TEXT and _encodes(text):
        head = (
            "event: content_block_delta\ndata: "
            f'{{"type":"content_block_delta","index":{index},"delta":{{"type":"text_delta","text":'
        )
        pieces = iter_text(text, ctx.text_chunk)
        return [f"{head}{encode_basestring(piece)}}}}}\n\n".encode() for piece in pieces]
    return map(str.encode, map(_DELTA_WIRE, delta_data(block, ctx, index)))


def _encodes(text: str) -> bool:
    """Whether ``text`` is valid UTF-8 once encoded (a lone surrogate is not)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _plain_text(block: dict[str, Any]) -> bool:
    """Whether ``block`` is a text block without citations: ``{"type": "text", "text": ...}``."""
    return block["type"] == "text" and "citations" not in block


def block_json(block: dict[str, Any]) -> str:
    """A final content block as JSON: a plain text block written around its encoded
    text, any other encoded from its object."""
    if _plain_text(block):
        return f'{{"type":"text","text":{encode_basestring(block["text"])}}}'
    return json_data(block)


def _message_delta(reply: Reply, plan: _Plan, ctx: RenderContext) -> str:
    """The data of ``message_delta``: the stop fields (and the container), the final usage."""
    container_json = "" if plan.container is None else f',"container":{json_data(plan.container)}'
    end_usage = _usage_json(
        plan.usage,
        output_tokens=plan.usage.output_tokens,
        start=False,
        end=True,
        server_tools=server_tool_usage(reply.parts),
    )
    return (
        f'{{"type":"message_delta","delta":{{{_stop_json(reply.stop_reason, ctx)}'
        f'{container_json}}},"usage":{end_usage}}}'
    )
