"""A traced agent run, imported, replays through the real SDK with the same run log.

For each provider: an agent with a tool, a retry (after a 429, a timeout or a dropped
connection) and a streamed final answer runs against a fake model with the provider's
real GenAI instrumentation installed, its spans written as OTLP JSON lines; the trace
is imported into a cassette; the same agent then runs in a pytest run that replays the
cassette, and the replayed run's ``RunLog`` equals the traced run's, ids and times
masked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_agentreplay import Fault, Reply, ToolCall, Usage
from pytest_agentreplay.cassettes.cassette import RecordedEvent, RecordedResponse
from pytest_agentreplay.cassettes.io import load
from pytest_agentreplay.cassettes.replay import recorded_reply
from pytest_agentreplay.jsondiff import json_diff
from pytest_agentreplay.neutral import ModelCall
from pytest_agentreplay.providers import RenderContext, codec_for
from pytest_agentreplay.runlog import RunLog
from pytest_agentreplay.traces import import_trace

from . import agents

pytest_plugins = ["pytester"]

FIRST = {
    "429": Fault.http(429, "Rate limited: slow down."),
    "timeout": Fault.timeout(),
    "cut": Fault.cut(after_events=0),
}
"""What the first call gets, before the agent retries it."""

REST = (
    Reply.tool_call("weather", {"city": "Leeds"}),
    Reply.text("It is sunny in Leeds today.", usage=Usage(input_tokens=40, output_tokens=8)),
)

REPLAY = """
import json, pytest
from pytest_agentreplay.runlog import RunLog
from tests.traces import agents


@pytest.mark.agentreplay(cassette={cassette!r})
def test_replay(agentreplay):
    answer = agents.run({provider!r})
    log = RunLog.from_cassette(agentreplay).normalized()
    with open({out!r}, "w") as file:
        json.dump({{"answer": answer, "log": log}}, file)
"""


def as_sent(call: ModelCall, after: ModelCall | None) -> ModelCall:
    """A fake's log entry with the reply as the wire carried it: a fake logs the reply it
    was scripted with (no ids, no model, its own usage), a cassette's log the reply its
    response holds. The fake's codec renders it as the fake did; the tool-call ids it
    drew are the ones the agent sent back in its next request (``after``). An HTTP error
    holds no reply, as in a cassette's log."""
    # A cassette's run log names no client library (for a recording as for an import);
    # a fake's does, from the request's user agent: compared without it.
    call = call.model_copy(update={"client": None})
    if call.reply is None or call.reply.fault is not None:
        return call.model_copy(update={"reply": None})
    codec = codec_for(call.provider)
    ctx = RenderContext(request=call.request)
    if call.streaming:
        events = [RecordedEvent.from_sse(e) for e in codec.render_events(call.reply, ctx)]
        response = RecordedResponse(status=200, events=events)
    else:
        response = RecordedResponse(status=200, json=codec.render_body(call.reply, ctx))
    reply = recorded_reply(codec, response)
    sent_ids = iter([r.tool_call_id for r in after.request.tool_results] if after else [])
    parts = [
        p.model_copy(update={"id": next(sent_ids)}) if isinstance(p, ToolCall) and p.id else p
        for p in reply.parts
    ]
    return call.model_copy(update={"reply": reply.model_copy(update={"parts": parts})})


def traced_run(provider: str, scripted_model, traced, first: str = "429") -> tuple[Path, str, dict]:
    scripted_model.script(FIRST[first], *REST)
    with traced(provider) as trace_file:
        answer = agents.run(provider)
    calls = RunLog.from_fake(scripted_model).model_calls
    log = RunLog(
        model_calls=[as_sent(c, next(iter(calls[n + 1 :]), None)) for n, c in enumerate(calls)]
    )
    return trace_file, answer, log.normalized()


def replayed_run(pytester: pytest.Pytester, provider: str, cassette: Path) -> dict:
    out = pytester.path / "replayed.json"
    pytester.makepyfile(
        **{
            f"test_trace_replay_{provider}": REPLAY.format(
                cassette=str(cassette), provider=provider, out=str(out)
            )
        }
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=1)
    return json.loads(out.read_text())


# OpenLLMetry's OpenAI instrumentation declares a pydantic model with a class Config.
@pytest.mark.filterwarnings("ignore:Support for class-based `config`:DeprecationWarning")
@pytest.mark.parametrize("first", list(FIRST))
@pytest.mark.parametrize("provider", agents.PROVIDERS)
def test_a_traced_run_replays_with_the_same_run_log(
    provider, first, scripted_model, traced, pytester, tmp_path
) -> None:
    trace_file, answer, original = traced_run(provider, scripted_model, traced, first)
    cassette = tmp_path / "imported.yaml"

    result = import_trace(trace_file, cassette)

    assert result.calls == 3  # the failed call, the tool call, the streamed answer
    assert result.skipped == []
    assert all(i.origin["source"] == "trace" for i in load(cassette).interactions)
    replayed = replayed_run(pytester, provider, cassette)
    assert replayed["answer"] == answer == "It is sunny in Leeds today."
    replayed_log = replayed["log"]
    assert replayed_log.pop("egress") == {"live_calls": [], "unplayed": [], "blocked": []}
    diff = json_diff(original, replayed_log, limit=100)
    assert not diff, "\n".join(diff)
