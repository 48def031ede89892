"""Tracing for the trace-import tests: the real OpenTelemetry SDK, the real GenAI
instrumentations, spans written to a file as the collector's file exporter writes them."""

from __future__ import annotations

import contextlib
import itertools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Imported at collection, before any in-process pytester run: a nested run drops the
# modules first imported during it, and an instrumentation imported again wraps a second
# copy of the SDK's classes over the first (streamed chunks came out two and three times).
import google.genai  # noqa: F401

# The SDK's resource modules are loaded lazily: loaded first while instrumented, their
# classes were not in _sdk_methods' snapshot, so the wrappers uninstrument leaves stayed
# (a non-streamed Responses call and a broken Chat stream traced after an OpenAI Chat
# run went to the wrapper of the run before, into its shut-down provider, and were
# missing from the trace).
import openai.resources.chat.completions.completions
import openai.resources.responses.responses  # noqa: F401
import opentelemetry.instrumentation.anthropic
import opentelemetry.instrumentation.google_genai
import opentelemetry.instrumentation.openai
import pydantic_ai  # noqa: F401
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
        return opentelemetry.instrumentation.anthropic.AnthropicInstrumentor()
    if provider == "gemini":
        return opentelemetry.instrumentation.google_genai.GoogleGenAiSdkInstrumentor()
    return opentelemetry.instrumentation.openai.OpenAIInstrumentor()


_SDK_PACKAGES = ("openai", "anthropic", "google.genai")


def _sdk_methods() -> dict[tuple[type, str], Any]:
    """Every method of every class in the SDKs' resource modules, as it is now."""
    found: dict[tuple[type, str], Any] = {}
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(_SDK_PACKAGES):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == name:
                for attribute, method in list(vars(value).items()):
                    if callable(method):
                        found[value, attribute] = method
    return found


def _restore(methods: dict[tuple[type, str], Any]) -> None:
    """Put back what an instrumentation's ``uninstrument`` left wrapped: OpenLLMetry's
    OpenAI one (0.62.4) stops unwrapping at the first beta API openai 3 no longer has,
    so ``Responses.create`` stayed wrapped and the next ``instrument`` wrapped it again
    (each streamed chunk came out once per instrumentation so far)."""
    for (cls, attribute), method in methods.items():
        if vars(cls).get(attribute) is not method:
            setattr(cls, attribute, method)


@contextlib.contextmanager
def instrumented(provider: str, **providers: Any) -> Iterator[None]:
    """``provider``'s SDK instrumented (``tracer_provider=``, ``logger_provider=``) while
    the block runs, and exactly as before afterwards (see :func:`_restore`)."""
    tool = instrumentor(provider)
    methods = _sdk_methods()
    tool.instrument(**providers)
    try:
        yield
    finally:
        tool.uninstrument()
        _restore(methods)


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
        self.instrumented = instrumented(self.provider, tracer_provider=self.tracer_provider)
        self.instrumented.__enter__()
        return self.path

    def __exit__(self, *exc: object) -> None:
        self.instrumented.__exit__(None, None, None)
        self.tracer_provider.shutdown()


@pytest.fixture
def traced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``with traced("anthropic") as trace_file:`` runs traced into ``trace_file``;
    ``traced(provider, NAME=value)`` changes the capture settings (``None`` unsets)."""
    runs = itertools.count(1)  # each traced run its own file
    return lambda provider, **env: Traced(
        provider, tmp_path / f"{provider}-{next(runs)}.jsonl", monkeypatch, env
    )
