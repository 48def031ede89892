"""Known instrumentation quirks: what a span says wrongly, and the correction.

Each correction is kept in the interaction's ``origin.corrected`` so a reader of the
cassette sees what was changed from the trace, and why.
"""

from __future__ import annotations

from ..neutral import ToolCall, Usage
from .spans import TraceSpan

__all__ = ["drop_made_up_ids", "streamed_usage"]

_ANTHROPIC_OPENLLMETRY = "opentelemetry.instrumentation.anthropic"
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
