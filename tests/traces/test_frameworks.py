"""A trace from a framework's own tracing imports too: pydantic-ai's instrumentation, and
openai-agents' tracing bridged to OpenTelemetry by logfire."""

from __future__ import annotations

import json

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from pytest_agentreplay import Reply
from pytest_agentreplay.traces import import_trace

from . import agents
from .otlp_file import OTLPJsonFileSpanExporter

pytest_plugins = ["pytester"]

REPLAY = """
import json, pytest
from tests.traces import agents


@pytest.mark.agentreplay(cassette={cassette!r})
def test_replay(agentreplay):
    output, log = agents.pydantic_ai_run()
    with open({out!r}, "w") as file:
        json.dump({{"output": output, "log": log}}, file)
"""


def test_a_pydantic_ai_trace_replays_the_agent_run(scripted_model, pytester, tmp_path) -> None:
    trace_file = tmp_path / "pydantic-ai.jsonl"
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileSpanExporter(trace_file)))
    scripted_model.script(
        Reply.tool_call("weather", {"city": "Leeds"}), Reply.text("It is sunny in Leeds.")
    )
    output, original = agents.pydantic_ai_run(tracer_provider)
    tracer_provider.shutdown()
    cassette = tmp_path / "imported.yaml"

    result = import_trace(trace_file, cassette)

    # two model calls; the agent run and the tool's span are left out
    assert (result.calls, result.other_spans) == (2, 2)
    assert {i.origin["instrumentation"] for i in result.cassette.interactions} == {
        f"pydantic-ai {__import__('pydantic_ai').__version__}"
    }
    out = pytester.path / "replayed.json"
    pytester.makepyfile(
        test_pydantic_ai_trace_replay=REPLAY.format(cassette=str(cassette), out=str(out))
    )
    pytester.runpytest("-p", "no:cacheprovider", "-q").assert_outcomes(passed=1)
    replayed = json.loads(out.read_text())
    assert replayed["output"] == output == "It is sunny in Leeds."
    assert replayed["log"] == original


REPLAY_AGENTS = """
import json, pytest
from tests.traces import agents


@pytest.mark.agentreplay(cassette={cassette!r})
def test_replay(agentreplay):
    output, log = agents.openai_agents_run()
    with open({out!r}, "w") as file:
        json.dump({{"output": output, "log": log}}, file)
"""


def test_an_openai_agents_trace_replays_the_agent_run(scripted_model, pytester, tmp_path) -> None:
    """openai-agents records each Responses call's input items and whole response in its
    own spans; ``logfire.instrument_openai_agents()`` exports them over OpenTelemetry as
    JSON text (``raw_input``, ``response``), not as GenAI messages."""
    trace_file = tmp_path / "openai-agents.jsonl"
    scripted_model.script(
        Reply.tool_call("weather", {"city": "Leeds"}), Reply.text("It is sunny in Leeds.")
    )
    with agents.openai_agents_traced(trace_file):
        output, original = agents.openai_agents_run()
    cassette = tmp_path / "imported.yaml"

    result = import_trace(trace_file, cassette)

    # two model calls; the trace, task, turn, agent and tool spans are left out
    assert result.calls == 2 and result.other_spans > 2
    assert {i.origin["instrumentation"] for i in result.cassette.interactions} == {
        f"logfire.openai_agents {__import__('logfire').VERSION}"
    }
    assert all(i.request.url.endswith("/v1/responses") for i in result.cassette.interactions)
    out = pytester.path / "replayed.json"
    pytester.makepyfile(
        test_openai_agents_trace_replay=REPLAY_AGENTS.format(cassette=str(cassette), out=str(out))
    )
    pytester.runpytest("-p", "no:cacheprovider", "-q").assert_outcomes(passed=1)
    replayed = json.loads(out.read_text())
    assert replayed["output"] == output == "It is sunny in Leeds."
    assert replayed["log"] == original
