"""Which setting turns message capture on, for each instrumentation.

With content capture off (the default of most instrumentations) a span keeps the
model, the usage and the finish reasons but no message at all, and nothing can be
replayed from it. The refusal says which switch the instrumentation that made the
span reads, including the traps found while writing this (issue 32).
"""

from __future__ import annotations

from .spans import TraceSpan

__all__ = ["CAPTURE_SETTINGS", "capture_hint"]

_OTEL_GENAI = (
    "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only (or span_and_event) "
    "in the traced process's environment"
)
_TRACELOOP = "TRACELOOP_TRACE_CONTENT=true (the default; it was set to false)"
_PYDANTIC_AI = (
    "InstrumentationSettings(include_content=True), the default "
    "(logfire.instrument_pydantic_ai(include_content=True), Agent(instrument=...))"
)

CAPTURE_SETTINGS: dict[str, str] = {
    "opentelemetry.instrumentation.openai_v2": _OTEL_GENAI
    + ". 2.4b0 rejects the documented OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="
    "true ('Defaulting to NO_CONTENT'): without the opt-in it takes only span_and_event",
    "opentelemetry.instrumentation.google_genai": _OTEL_GENAI,
    "opentelemetry.instrumentation.anthropic": _TRACELOOP,
    "opentelemetry.instrumentation.openai": _TRACELOOP,  # OpenLLMetry's (scope ...openai.v1)
    "opentelemetry.instrumentation.openai_agents": _TRACELOOP,
    "pydantic-ai": _PYDANTIC_AI,
    "pydantic_ai": _PYDANTIC_AI,
    "logfire": _PYDANTIC_AI,
}
"""Instrumentation scope (a prefix of the span's scope name) -> what turns capture on."""


def capture_hint(span: TraceSpan) -> str:
    """The setting that makes the instrumentation behind ``span`` capture messages."""
    scope = span.scope
    if scope.startswith("opentelemetry.instrumentation.openai_v2"):
        return CAPTURE_SETTINGS["opentelemetry.instrumentation.openai_v2"]
    for prefix, setting in CAPTURE_SETTINGS.items():
        if scope.startswith(prefix):
            return setting
    every = "; ".join(
        f"{name}: {setting}"
        for name, setting in CAPTURE_SETTINGS.items()
        if name in ("opentelemetry.instrumentation.google_genai", "pydantic-ai")
        or name.endswith(("openai_v2", "anthropic"))
    )
    return f"the span does not name its instrumentation; per instrumentation: {every}"
