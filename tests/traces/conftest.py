"""Tracing for the trace-import tests: the real OpenTelemetry SDK, the real GenAI
instrumentations, spans written to a file as the collector's file exporter writes them."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from .otlp_file import OTLPJsonFileSpanExporter

CAPTURE_ENV = {
    # The official (Google GenAI) instrumentation captures content only with both.
    "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only",
    "TRACELOOP_TRACE_CONTENT": "true",
}


def instrumentor(provider: str) -> Any:
    """The real instrumentation of ``provider``'s SDK (see pyproject's test extra)."""
    if provider == "anthropic":
        from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

        return AnthropicInstrumentor()
    if provider == "gemini":
        from opentelemetry.instrumentation.google_genai import GoogleGenAiSdkInstrumentor

        return GoogleGenAiSdkInstrumentor()
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    return OpenAIInstrumentor()


class Traced:
    """Instrument one provider's SDK into a file while the block runs."""

    def __init__(
        self, provider: str, path: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, Any]
    ) -> None:
        self.provider, self.path, self.monkeypatch = provider, path, monkeypatch
        self.env = {**CAPTURE_ENV, **env}

    def __enter__(self) -> Path:
        for name, value in self.env.items():  # None: unset, the instrumentation's default
            if value is None:
                self.monkeypatch.delenv(name, raising=False)
            else:
                self.monkeypatch.setenv(name, value)
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(
            SimpleSpanProcessor(OTLPJsonFileSpanExporter(self.path))
        )
        self.instrumentor = instrumentor(self.provider)
        self.instrumentor.instrument(tracer_provider=self.tracer_provider)
        return self.path

    def __exit__(self, *exc: object) -> None:
        self.instrumentor.uninstrument()
        self.tracer_provider.shutdown()


@pytest.fixture
def traced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``with traced("anthropic") as trace_file:`` runs traced into ``trace_file``;
    ``traced(provider, NAME=value)`` changes the capture settings (``None`` unsets)."""
    runs = itertools.count(1)  # each traced run its own file
    return lambda provider, **env: Traced(
        provider, tmp_path / f"{provider}-{next(runs)}.jsonl", monkeypatch, env
    )
