"""The forms a trace comes in, and the refusals: no content captured, an unknown
provider, a secret in a message."""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from pytest_agentreplay import Fault, Reply
from pytest_agentreplay.cassettes.conversation import conversation
from pytest_agentreplay.cassettes.replay import recorded_reply
from pytest_agentreplay.providers import codec_for
from pytest_agentreplay.redact import SecretLeakError
from pytest_agentreplay.traces import TraceImportError, import_trace, read_trace

from . import agents
from .conftest import CAPTURE_ENV, instrumented
from .otlp_file import OTLPJsonFileLogExporter

pytestmark = pytest.mark.filterwarnings(
    "ignore:Support for class-based `config`:DeprecationWarning"
)

SCRIPT = (
    Fault.http(429, "Rate limited: slow down."),
    Reply.tool_call("weather", {"city": "Leeds"}),
    Reply.text("It is sunny in Leeds today."),
)


def _wire(result):
    return [(i.request.to_data(), i.response.to_data()) for i in result.cassette.interactions]


def test_a_plain_json_list_of_spans_imports_as_otlp_does(
    scripted_model, traced, tmp_path, monkeypatch
) -> None:
    scripted_model.script(*SCRIPT)
    with traced("openai_chat") as trace_file:
        agents.run("openai_chat")
    # The same spans as the SDK's ConsoleSpanExporter prints them (span.to_json()).
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    for name, value in CAPTURE_ENV.items():
        monkeypatch.setenv(name, value)
    scripted_model.script(*SCRIPT)
    with instrumented("openai_chat", tracer_provider=provider):
        agents.run("openai_chat")
    plain = tmp_path / "spans.json"
    plain.write_text(json.dumps([json.loads(s.to_json()) for s in memory.get_finished_spans()]))

    from_otlp, from_plain = import_trace(trace_file), import_trace(plain)

    assert from_plain.calls == from_otlp.calls == 3
    assert all(s.scope == "" for s in read_trace(plain))  # to_json() names no scope
    # The second run drew other ids from the fake: what a trace knows is the same.
    seen = [
        [conversation(i.request) for i in r.cassette.interactions] for r in (from_plain, from_otlp)
    ]
    assert seen[0] == seen[1]
    # OpenLLMetry's OpenAI instrumentation says whether each call streamed.
    assert [r["status"] for _, r in _wire(from_plain)] == [429, 200, 200]


def test_the_log_event_form_imports(scripted_model, tmp_path, monkeypatch) -> None:
    for name, value in {
        **CAPTURE_ENV,
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "event_only",
    }.items():
        monkeypatch.setenv(name, value)
    events = tmp_path / "events.jsonl"
    loggers = LoggerProvider()
    loggers.add_log_record_processor(SimpleLogRecordProcessor(OTLPJsonFileLogExporter(events)))
    spans = TracerProvider()
    scripted_model.script(*SCRIPT)
    with instrumented("gemini", tracer_provider=spans, logger_provider=loggers):
        agents.run("gemini")
    loggers.shutdown()

    result = import_trace(events)

    assert all(s.event for s in read_trace(events))
    assert result.calls == 3
    statuses = [i.response.status for i in result.cassette.interactions]
    assert statuses.count(429) == 2  # served as the live request asks: both forms
    final = result.cassette.interactions[-1]
    reply = recorded_reply(codec_for("gemini"), final.response)
    assert reply.text_content == "It is sunny in Leeds today."


@pytest.mark.parametrize(
    ("provider", "switch", "off", "setting"),
    [
        (
            "gemini",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
            None,  # the default: no content
            "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental",
        ),
        ("anthropic", "TRACELOOP_TRACE_CONTENT", "false", "TRACELOOP_TRACE_CONTENT=true"),
        ("openai_chat", "TRACELOOP_TRACE_CONTENT", "false", "TRACELOOP_TRACE_CONTENT=true"),
    ],
)
def test_a_trace_without_content_is_refused_with_the_setting_that_captures_it(
    provider, switch, off, setting, scripted_model, traced
) -> None:
    scripted_model.script(*SCRIPT)
    with traced(provider, **{switch: off}) as trace_file:
        agents.run(provider)

    with pytest.raises(TraceImportError) as caught:
        import_trace(trace_file)

    message = str(caught.value)
    # line 2: the first call's span (the 429) failed, and is reported, not refused
    assert f"{trace_file}:2: span " in message
    assert "message content was not captured" in message
    assert setting in message


def _span(provider_name: str, text: str = "Hello") -> dict:
    messages = [{"role": "user", "parts": [{"type": "text", "content": text}]}]
    output = [{"role": "assistant", "parts": [{"type": "text", "content": "Hi."}]}]
    return {
        "name": "chat acme-1",
        "context": {"trace_id": "0x" + "ab" * 16, "span_id": "0x" + "cd" * 8},
        "attributes": {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider_name,
            "gen_ai.request.model": "acme-1",
            "gen_ai.input.messages": json.dumps(messages),
            "gen_ai.output.messages": json.dumps(output),
        },
    }


def test_an_unknown_provider_is_refused_or_skipped(tmp_path) -> None:
    trace = tmp_path / "acme.json"
    trace.write_text(json.dumps([_span("acme"), _span("anthropic")]))

    with pytest.raises(TraceImportError, match="provider 'acme' is not one this plugin speaks"):
        import_trace(trace)
    result = import_trace(trace, skip_unknown=True)

    assert result.calls == 2
    assert len(result.skipped) == 1 and "'acme'" in result.skipped[0]
    assert [i.request.url for i in result.cassette.interactions] == [
        "https://api.anthropic.com/v1/messages"
    ] * 2


def test_a_secret_in_a_traced_message_stops_the_write(tmp_path) -> None:
    key = "sk-ant-api03-" + "Q7" * 40 + "-AbCdEfAA"
    trace = tmp_path / "leak.json"
    trace.write_text(json.dumps([_span("anthropic", text=f"my key is {key}")]))
    cassette = tmp_path / "leak.yaml"

    with pytest.raises(SecretLeakError):
        import_trace(trace, cassette)

    assert not cassette.exists()


@pytest.mark.parametrize("provider_name", ["anthropic", "openai", "gemini"])
def test_a_secret_in_a_streamed_reply_is_caught_across_the_events_it_is_split_into(
    provider_name, tmp_path
) -> None:
    """The import renders a streamed reply's text in many small deltas, so a key the model
    echoed is split across events: the backstop reads them as a client assembles them."""
    key = "sk-ant-api03-" + "Q7" * 40 + "-AbCdEfAA"
    span = _span(provider_name)
    output = [{"role": "assistant", "parts": [{"type": "text", "content": f"It is {key}."}]}]
    span["attributes"] |= {
        "gen_ai.output.messages": json.dumps(output),
        "gen_ai.is_streaming": True,
        "gen_ai.request.stream": True,
    }
    trace = tmp_path / "leak.json"
    trace.write_text(json.dumps([span]))
    cassette = tmp_path / "leak.yaml"

    with pytest.raises(SecretLeakError, match=r"anthropic-key \(split across events \d+-\d+"):
        import_trace(trace, cassette)

    assert not cassette.exists()
