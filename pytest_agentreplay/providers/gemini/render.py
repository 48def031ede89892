"""Render a neutral :class:`~...neutral.Reply` as Gemini's ``generateContent`` JSON and stream.

The parts go out as the API sends them (:func:`wire_parts`): text as ``{"text"}``,
thinking as ``{"text", "thought": true}``, a tool call as ``{"functionCall": {"name",
"args"}}`` (with the ``id`` only when the reply gives one: the Gemini API sends none),
and each thinking's ``thoughtSignature`` on the part that follows it (a function call,
or the first text after the thoughts), or on the thought itself when nothing follows.
A thinking with no text is thinking the model did not show: only its signature goes
out. Signatures missing from the reply are made up (base64, as Google's are), since
Gemini 3 refuses a function call sent back without the signature it came with.

The stream (:func:`iter_events`) sends one ``GenerateContentResponse`` per piece: text
a word or so at a time (the signature on its first piece), a function call whole, each
chunk with the running ``usageMetadata``; the last one carries ``finishReason``. Its
fold (:mod:`.fold`) is exactly :func:`render_body`. Each chunk is written as Google
writes it (:func:`sse_data`).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from typing import Any

from ...errors import CodecError
from ...neutral import Part, Reply, StopReason, Text, Thinking, ToolCall, Usage
from ...sse import SSEEvent
from ..base import Codec, RenderContext, iter_text, json_data
from .fold import merge_part

__all__ = [
    "FINISH_REASONS",
    "SAFETY_RATINGS",
    "iter_events",
    "render_body",
    "sse_data",
    "wire_parts",
    "wire_signature",
]

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64URL = _B64[:62] + "-_"

FINISH_REASONS: dict[StopReason, str] = {
    "end_turn": "STOP",
    "tool_use": "STOP",  # Gemini ends a turn of function calls with STOP too
    "stop_sequence": "STOP",
    "max_tokens": "MAX_TOKENS",
    "refusal": "SAFETY",
}
"""The ``finishReason`` Gemini sends for each neutral stop reason."""

SAFETY_RATINGS: list[dict[str, Any]] = [
    {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
]
"""What a candidate blocked by the safety filters carries (a refusal, ``SAFETY``)."""


# Characters ``str.splitlines`` breaks a line at that JSON leaves raw: google-genai
# reads a stream with httpx's ``iter_lines``, which splits on them, so a raw U+0085
# in a text cut the ``data:`` line in two and the SDK raised UnknownApiResponseError.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def sse_data(chunk: dict[str, Any]) -> str:
    """A chunk as Google writes it in a ``data:`` line: ``", "`` never, ``": "`` always;
    no character a line reader would break the line at."""
    return json.dumps(chunk, ensure_ascii=False, separators=(",", ": ")).translate(_LINE_BREAKS)


def _signature(ctx: RenderContext) -> str:
    """A made-up thought signature: 128 base64 characters (96 bytes), starting as
    Gemini's do."""
    return "Cr" + "".join(ctx.ids.new("", 42, _B64) for _ in range(3))


def wire_signature(signature: str) -> str:
    """``signature`` as Gemini can carry it: base64 (either alphabet) as it is, anything
    else as the base64 of its UTF-8 text."""
    try:
        base64.b64decode(signature.replace("-", "+").replace("_", "/"), validate=True)
    except binascii.Error:
        return base64.b64encode(signature.encode()).decode()
    return signature


def _call(part: ToolCall) -> dict[str, Any]:
    call: dict[str, Any] = {} if part.id is None else {"id": part.id}
    return {"functionCall": {**call, "name": part.name, "args": part.args}}


def wire_parts(parts: list[Part], ctx: RenderContext) -> list[dict[str, Any]]:
    """The reply's parts as the API sends them, signatures placed (see the module
    docstring); missing signatures are drawn from ``ctx.ids`` in part order."""
    out: list[dict[str, Any]] = []
    pending: str | None = None  # a signature waiting for the part after its thinking
    for n, part in enumerate(parts):
        following = parts[n + 1] if n + 1 < len(parts) else None
        if isinstance(part, Thinking):
            signature = wire_signature(part.signature) if part.signature else _signature(ctx)
            hands_on = following is not None and not isinstance(following, Thinking)
            if part.text or not hands_on:
                thought = {"text": part.text, "thought": True}
                out.append(thought if hands_on else {**thought, "thoughtSignature": signature})
            pending = signature if hands_on else None
            continue
        if isinstance(part, Text):
            wire: dict[str, Any] = {"text": part.text}
        elif isinstance(part, ToolCall):
            wire = _call(part)
        else:  # Codec.check_renders refuses a provider-side tool before rendering
            raise CodecError(
                f"parts[{n}]: Gemini cannot send a provider-side tool call", provider="gemini"
            )
        if pending is not None:
            wire["thoughtSignature"] = pending
            pending = None
        out.append(wire)
    return out


def _usage(usage: Usage, candidates: int) -> dict[str, Any]:
    """``usageMetadata`` with ``candidates`` output tokens so far. Zero counts are left
    out, as proto3 JSON leaves them out; thoughts are counted apart from candidates
    (the neutral ``output_tokens`` holds both) and in the total."""
    thoughts = usage.reasoning_tokens or 0
    out: dict[str, Any] = {}
    if usage.input_tokens:
        out["promptTokenCount"] = usage.input_tokens
    if candidates:
        out["candidatesTokenCount"] = candidates
    out["totalTokenCount"] = usage.input_tokens + candidates + thoughts
    if usage.cache_read_input_tokens:
        out["cachedContentTokenCount"] = usage.cache_read_input_tokens
    if usage.input_tokens:
        out["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": usage.input_tokens}]
    if thoughts:
        out["thoughtsTokenCount"] = thoughts
    return out


def _output(usage: Usage) -> int:
    """Output tokens that are not thoughts: ``candidatesTokenCount``."""
    return max(0, usage.output_tokens - (usage.reasoning_tokens or 0))


def _finish(reply: Reply) -> dict[str, Any]:
    """The fields of the last chunk's candidate: why it ended (and, for a safety
    block, the ratings that blocked it)."""
    reason = FINISH_REASONS[reply.stop_reason]
    if reason == "SAFETY":
        return {"finishReason": reason, "safetyRatings": SAFETY_RATINGS}
    return {"finishReason": reason}


def _tail(reply: Reply, ctx: RenderContext) -> dict[str, Any]:
    """``modelVersion`` and ``responseId``, which every chunk repeats."""
    return {"modelVersion": ctx.model_for(reply), "responseId": ctx.ids.new("", 23, _B64URL)}


def _content(parts: list[dict[str, Any]], refusal: bool) -> dict[str, Any]:
    """A candidate's ``content``: a blocked candidate with nothing in it has ``{}``."""
    if not parts:
        return {} if refusal else {"role": "model"}
    return {"parts": parts, "role": "model"}


def render_body(codec: Codec, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
    """The ``generateContent`` JSON for ``reply``."""
    parts: list[dict[str, Any]] = []
    for wire in wire_parts(reply.parts, ctx):
        merge_part(parts, wire)
    usage = ctx.usage_for(reply)
    candidate = {
        "content": _content(parts, reply.stop_reason == "refusal"),
        **_finish(reply),
        "index": 0,
    }
    return {
        "candidates": [candidate],
        "usageMetadata": _usage(usage, _output(usage)),
        **_tail(reply, ctx),
    }


def _pieces(wire: dict[str, Any], ctx: RenderContext) -> Iterator[dict[str, Any]]:
    """The streamed pieces of one wire part: text cut into words (the signature and
    the thought flag on the first piece, the flag on every piece)."""
    text = wire.get("text")
    if not isinstance(text, str) or not text:
        yield wire
        return
    first = True
    for piece in iter_text(text, ctx.text_chunk):
        out = {**wire, "text": piece}
        if not first:
            out.pop("thoughtSignature", None)
        first = False
        yield out


def _size(wire: dict[str, Any]) -> int:
    """How much output a wire part is, in characters (thoughts count apart)."""
    if wire.get("thought"):
        return 0
    text = wire.get("text")
    return len(text) if isinstance(text, str) else len(json_data(wire))


def iter_events(codec: Codec, reply: Reply, ctx: RenderContext) -> Iterator[SSEEvent]:
    """The stream for ``reply``, lazily: a ``data:`` event per chunk."""
    return (SSEEvent(data=sse_data(chunk)) for chunk in _chunks(reply, ctx))


def _chunks(reply: Reply, ctx: RenderContext) -> Iterator[dict[str, Any]]:
    """The stream's ``GenerateContentResponse`` chunks, lazily; the last one carries
    the ``finishReason`` and the final usage, so the fold is :func:`render_body`."""
    wires = wire_parts(reply.parts, ctx)
    usage = ctx.usage_for(reply)
    tail = _tail(reply, ctx)
    total, final = sum(_size(w) for w in wires), _output(usage)
    refusal, sent = reply.stop_reason == "refusal", 0
    previous: dict[str, Any] | None = None
    for wire in wires:
        for piece in _pieces(wire, ctx):
            if previous is not None:
                yield _chunk(previous, {}, _usage(usage, final * sent // max(total, 1)), tail)
            sent += _size(piece)
            previous = piece
    parts = [] if previous is None else [previous]
    yield _chunk(parts, _finish(reply), _usage(usage, final), tail, refusal=refusal)


def _chunk(
    parts: dict[str, Any] | list[dict[str, Any]],
    finish: dict[str, Any],
    usage: dict[str, Any],
    tail: dict[str, Any],
    *,
    refusal: bool = False,
) -> dict[str, Any]:
    listed = parts if isinstance(parts, list) else [parts]
    candidate = {"content": _content(listed, refusal), **finish, "index": 0}
    return {"candidates": [candidate], "usageMetadata": usage, **tail}
