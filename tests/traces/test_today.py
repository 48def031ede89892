"""An imported trace against today's run: a request the trace never saw fails with the
cassette-miss report, and ``agentreplay diff`` between the trace's cassette and a
recording of today's run names the step of the trace that diverged."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentreplay import Fault, Reply
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.io import save
from pytest_agentreplay.cli import main
from pytest_agentreplay.neutral import ModelCall
from pytest_agentreplay.providers import RenderContext, codec_for
from pytest_agentreplay.traces import import_trace

from . import agents

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.filterwarnings(
    "ignore:Support for class-based `config`:DeprecationWarning"
)


def script(final: str) -> tuple[object, ...]:
    return (
        Fault.http(429, "Rate limited: slow down."),
        Reply.tool_call("weather", {"city": "Leeds"}),
        Reply.text(final),
    )


def _as_recorded(call: ModelCall) -> Interaction:
    """One call of a fake as a recording holds it: the request its client sent, the
    response the fake's codec sent (a recording of today's run, without a live API)."""
    codec = codec_for(call.provider)
    ctx = RenderContext(request=call.request)
    request = RecordedRequest(method="POST", url=call.url, json=call.request.raw)
    assert call.reply is not None
    if call.reply.fault is not None:
        error = codec.error_response(call.reply.fault, ctx)
        response = RecordedResponse(status=error.status, headers=error.headers, json=error.body)
    elif call.streaming:
        events = [RecordedEvent.from_sse(e) for e in codec.render_events(call.reply, ctx)]
        response = RecordedResponse(status=200, events=events)
    else:
        response = RecordedResponse(status=200, json=codec.render_body(call.reply, ctx))
    return Interaction(request=request, response=response)


def test_diff_names_the_step_where_todays_recording_left_the_trace(
    scripted_model, traced, tmp_path, capsys
) -> None:
    scripted_model.script(*script("It is sunny in Leeds today."))
    with traced("anthropic") as trace_file:
        agents.run("anthropic")
    then = tmp_path / "trace.yaml"
    import_trace(trace_file, then)
    scripted_model.script(*script("It is raining in Leeds."))
    agents.run("anthropic")  # today's run, recorded
    today = tmp_path / "today.yaml"
    save(today, Cassette(interactions=[_as_recorded(c) for c in scripted_model.log[3:]]))

    assert main(["diff", str(then), str(today)]) == 1

    printed = capsys.readouterr().out
    assert "(step 3 of the trace)" in printed
    assert "(step 1 of the trace)" not in printed and "(step 2 of the trace)" not in printed
    assert "It is raining in Leeds." in printed


REPLAY = """
from tests.traces import agents


def test_replay(agentreplay):
    agents.QUESTION = "What is the weather in York?"  # the agent asks something else now
    agents.run("openai_chat")
"""


def test_a_request_the_trace_never_saw_fails_with_the_miss_report(
    scripted_model, traced, pytester: pytest.Pytester, tmp_path: Path
) -> None:
    scripted_model.script(*script("It is sunny in Leeds today."))
    with traced("openai_chat") as trace_file:
        agents.run("openai_chat")
    cassette = pytester.path / "cassettes" / "test_miss" / "test_replay.yaml"
    import_trace(trace_file, cassette)
    pytester.makepyfile(test_miss=REPLAY)

    result = pytester.runpytest("-p", "no:cacheprovider", "-q")

    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "no recorded interaction matches POST https://api.openai.com/v1/chat/completions" in text
    assert "matching on: method, host, conversation" in text
    # what differs, at its path in the conversation, not the two conversations cut short
    assert (
        "messages[0].text: recorded 'What is the weather in Leeds?', "
        "now 'What is the weather in York?'"
    ) in text
