"""Known instrumentation quirks: what a span says wrongly, and the correction.

Each correction is kept in the interaction's ``origin.corrected`` so a reader of the
cassette sees what was changed from the trace, and why.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..neutral import Thinking, ToolCall, Usage
from .spans import TraceSpan

__all__ = ["drop_made_up_ids", "reasoning_summaries", "streamed_usage"]

_ANTHROPIC_OPENLLMETRY = "opentelemetry.instrumentation.anthropic"
_OPENAI_OPENLLMETRY = "opentelemetry.instrumentation.openai"
_GOOGLE_GENAI = "opentelemetry.instrumentation.google_genai"


def streamed_usage(span: TraceSpan, usage: Usage | None, corrected: list[str]) -> Usage | None:
    """The usage a streamed Anthropic call really reported. OpenLLMetry's Anthropic
    instrumentation adds the placeholder ``output_tokens`` of ``message_start`` to the
    final ``message_delta`` count, so every streamed span says one token too many."""
    if usage is None or not span.scope.startswith(_ANTHROPIC_OPENLLMETRY):
        return usage
    if usage.output_tokens == 0:
        return usage
    corrected.append(
        f"usage.output_tokens {usage.output_tokens} -> {usage.output_tokens - 1}: "
        f"{span.instrumentation} counts message_start's placeholder token in a stream"
    )
    return usage.model_copy(update={"output_tokens": usage.output_tokens - 1})


def drop_made_up_ids(span: TraceSpan, calls: list[ToolCall], corrected: list[str]) -> None:
    """Tool-call ids the Google GenAI instrumentation made up (``name_index``: Gemini
    sends none), dropped so the replayed response has none either, as the live one."""
    if not span.scope.startswith(_GOOGLE_GENAI):
        return
    for index, call in enumerate(calls):
        if call.id == f"{call.name}_{index}":
            calls[index] = call.model_copy(update={"id": None})
            corrected.append(
                f"tool call {call.name!r}: id {call.id!r} dropped ({span.instrumentation} "
                "makes one up when Gemini sends none)"
            )


def reasoning_summaries(span: TraceSpan, parts: Sequence[Any], corrected: list[str]) -> list[Any]:
    """A Responses reply's parts as the API sent them. OpenLLMetry's OpenAI
    instrumentation writes a reasoning item's summary as the JSON text of its list
    (``[{"type": "summary_text", "text": ...}]``) and puts the output text before the
    reasoning that preceded it: each summary becomes a thinking part again, and the
    thinking comes first, as the ``reasoning`` items do on the wire."""
    if not span.scope.startswith(_OPENAI_OPENLLMETRY):
        return list(parts)
    out: list[Any] = []
    unpacked = 0
    for part in parts:
        texts = _summary_texts(part.text) if isinstance(part, Thinking) else None
        if texts is None:
            out.append(part)
        else:
            unpacked += 1
            out += [Thinking(text=text) for text in texts]
    thinking = [p for p in out if isinstance(p, Thinking)]
    ordered = thinking + [p for p in out if not isinstance(p, Thinking)]
    if unpacked:
        corrected.append(
            f"reasoning: {unpacked} summary list(s) read from their JSON text "
            f"({span.instrumentation} writes the list as text)"
        )
    if ordered != out:
        corrected.append(
            f"reasoning put before the answer ({span.instrumentation} lists the output text first)"
        )
    return ordered


def _summary_texts(text: str) -> list[str] | None:
    """The texts of a summary list written as JSON text, or ``None`` for plain text."""
    if not text.startswith("["):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, list) or not all(
        isinstance(v, dict) and isinstance(v.get("text"), str) for v in value
    ):
        return None
    return [v["text"] for v in value]
