"""A call that failed inside its stream, imported: what each instrumentation kept of it
replays as the same failure through the real SDK.

(The 429, the timeout and the dropped connection before a retry are in
``test_round_trip.py``.) OpenLLMetry's Anthropic instrumentation (0.62.4) never ends the
span of a stream that fails, so such a call is missing from its traces altogether.
"""

from __future__ import annotations

import json

import pytest

from pytest_agentreplay import Fault, Reply
from pytest_agentreplay.traces import import_trace

from . import agents

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.filterwarnings(
    "ignore:Support for class-based `config`:DeprecationWarning"
)

REPLAY = """
import json, pytest
from tests.traces import agents


@pytest.mark.agentreplay(cassette={cassette!r})
def test_replay(agentreplay):
    with open({out!r}, "w") as file:
        json.dump(agents.failure({provider!r}), file)
"""

BROKEN = Reply.text(
    "It is sunny in Leeds today.",
    fault=Fault.error_event("overloaded_error", "Overloaded", after_events=3),
)


def _replayed(pytester, provider, cassette) -> dict:
    out = pytester.path / "replayed.json"
    pytester.makepyfile(
        **{
            f"test_failed_{provider}": REPLAY.format(
                cassette=str(cassette), provider=provider, out=str(out)
            )
        }
    )
    pytester.runpytest("-p", "no:cacheprovider", "-q").assert_outcomes(passed=1)
    return json.loads(out.read_text())


def test_an_error_inside_a_gemini_stream_replays_as_the_same_error(
    scripted_model, traced, pytester, tmp_path
) -> None:
    """The Google GenAI instrumentation fails the span with the status Gemini sent."""
    scripted_model.script(BROKEN)
    with traced("gemini") as trace_file:
        original = agents.failure("gemini")
    cassette = tmp_path / "failed.yaml"

    result = import_trace(trace_file, cassette)

    assert result.skipped == []
    assert original["error"].startswith("ServerError: 503 UNAVAILABLE.")
    assert _replayed(pytester, "gemini", cassette) == original


def _span(status: str, attributes: dict) -> dict:
    return {
        "name": "openai.response",
        "context": {"trace_id": "0x" + "ab" * 16, "span_id": "0x" + "cd" * 8},
        "status": {"status_code": "ERROR", "description": status},
        "attributes": {
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-test-1",
            "gen_ai.is_streaming": True,
            "error.type": "APIError",
            **attributes,
        },
    }


def test_a_failed_responses_stream_without_messages_is_reported(scripted_model, traced) -> None:
    """OpenLLMetry's OpenAI instrumentation (0.62.4) keeps no messages on the span of a
    Responses stream that failed: nothing to match the call by, and the import says so."""
    scripted_model.script(BROKEN)
    with traced("openai_responses") as trace_file:
        agents.failure("openai_responses")

    result = import_trace(trace_file)

    assert (result.calls, result.cassette.interactions) == (1, [])
    (reason,) = result.skipped
    assert "failed (Overloaded) and keeps no messages to match the call by" in reason
    assert "agentreplay.inject" in reason


def test_a_status_less_error_in_a_stream_replays_as_an_error_event(pytester, tmp_path) -> None:
    """An SDK's error for an ``error`` event (OpenAI's ``APIError``, no status) on a span
    that kept its messages, built per the conventions (the instrumentation here keeps
    none on such a span): the provider's error event, raised again by the SDK."""
    question = [{"role": "user", "parts": [{"type": "text", "content": agents.QUESTION}]}]
    span = _span("Overloaded", {"gen_ai.input.messages": json.dumps(question)})
    trace = tmp_path / "failed.json"
    trace.write_text(json.dumps([span]))
    cassette = tmp_path / "failed.yaml"

    (interaction,) = import_trace(trace, cassette).cassette.interactions

    assert [e.event for e in interaction.response.events] == ["error"]
    replayed = _replayed(pytester, "openai_responses", cassette)
    assert replayed == {"said": "", "error": "APIError: Overloaded"}


def test_a_chat_stream_that_broke_off_replays_cut_after_the_text_it_kept(
    scripted_model, traced, pytester, tmp_path
) -> None:
    """OpenLLMetry's OpenAI instrumentation records the broken Chat stream as a success
    holding the text so far and an empty finish reason; which error ended it, the trace
    does not say. It replays as the same text, then a dropped connection."""
    scripted_model.script(BROKEN)
    with traced("openai_chat") as trace_file:
        original = agents.failure("openai_chat")
    cassette = tmp_path / "broken.yaml"

    (interaction,) = import_trace(trace_file, cassette).cassette.interactions

    assert interaction.response.end == "cut"
    assert any("ended before its finish reason" in c for c in interaction.origin["corrected"])
    replayed = _replayed(pytester, "openai_chat", cassette)
    assert original["error"] == "APIError: Overloaded"
    assert replayed["error"] == "APIConnectionError: Connection error."
    assert replayed["said"] == original["said"] != ""
