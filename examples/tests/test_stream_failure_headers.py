"""Issue 21, G3: the headers of a stream that fails after its 200.

An overloaded provider says when to come back (``retry-after``) and which request
failed (its request id) in the headers, and on a stream those arrive with the 200,
before the body fails: the connection drops, or an ``error`` event arrives. The
agent keeps them: the error of the failed step and of the turn carries them, the
write-ahead log stores them, and a ``retry-after`` paces the retry as it does after
an HTTP 429 or 503.
"""

from __future__ import annotations

import pytest
from agent import Agent, ErrorEvent, ModelStepCompleted, SessionConfig, TurnComplete
from agent.errors import MAX_RETRY_WAIT
from agent.testing import record

from pytest_agentreplay import Fault, Reply, invariants

ANSWER = "It is sunny in Leeds."
# Events before the failure, after some text: Anthropic sends message_start,
# content_block_start and ping first, OpenAI a role chunk.
AFTER_SOME_TEXT = {"anthropic": 5, "openai": 3}
SOME_TEXT = "It is"  # what those events show of ANSWER, one delta a word
FAILURES = {
    "cut": lambda after, **headers: Fault.cut(after_events=after, **headers),
    "error event": lambda after, **headers: Fault.error_event(after_events=after, **headers),
}


def _request_id(backend, sent: str) -> str:
    """The request id the agent sees: a cassette stores every request id as the
    placeholder ``req_agentreplay`` (while it records, the agent sees the live one)."""
    return "req_agentreplay" if backend.cassette and not backend.recording else sent


@pytest.mark.anyio
@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_stream_failing_after_its_200_names_its_request_and_retry_after(
    provider, failure, backend
):
    """Checks: a stream that shows some text, then drops (``cut``) or reports an
    error event, fails the step and the turn with an error that carries the request
    id and the ``retry-after`` of its 200 response; the error event and the write-ahead
    log's completion carry them too; the text shown is kept before the error turn."""
    request_id = f"req_leeds_{failure.replace(' ', '_')}"
    fault = FAILURES[failure](AFTER_SOME_TEXT[provider], retry_after=7, request_id=request_id)
    backend.script(Reply.text(ANSWER, fault=fault))
    agent = Agent(backend.config(provider, retry_limit=0))
    log = record(agent, backend.runlog())

    result = await agent.run_turn("What is the weather in Leeds?")

    assert result.outcome == "failed"
    expected = (_request_id(backend, request_id), "7")
    assert (result.error.request_id, result.error.retry_after) == expected
    [ended] = agent.events_of(ModelStepCompleted)
    assert (ended.outcome, ended.error.request_id, ended.error.retry_after) == ("failed", *expected)
    [reported] = agent.events_of(ErrorEvent)
    assert reported.error is result.error
    assert agent.events_of(TurnComplete) == []
    completion = agent.store.wal(agent.session_id)[-1]
    assert completion.entry == "completion"
    saved_error = completion.body["error"]
    assert (saved_error["request_id"], saved_error["retry_after"]) == expected
    *_, partial, error_turn = agent.store.messages(agent.session_id)
    assert (partial.kind, partial.text, ended.text) == ("message", SOME_TEXT, SOME_TEXT)
    assert (error_turn.kind, error_turn.text) == ("error", result.error.message)
    # Not retried (retry_limit=0); the call ended as the fault ended it, on the fake
    # and in replay alike (a cassette records that the SDK hung up after the error
    # event, and the log still names the error event).
    assert [call.outcome for call in log.model_calls] == [failure.replace(" ", "_")]
    invariants.assert_single_terminal_step(log)
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_the_retry_after_a_failed_stream_waits_what_its_200_asked(
    provider, failure, scripted_model
):
    """Checks: a transient stream failure (dropped, or an overloaded/server error
    event) whose 200 said ``retry-after: 0.25`` is retried after 0.25 s, not the
    0.01 s backoff; the retry answers, and the abandoned try names its request."""
    fault = FAILURES[failure](AFTER_SOME_TEXT[provider], retry_after=0.25, request_id="req_busy")
    scripted_model.script(Reply.text(ANSWER, fault=fault), Reply.text(ANSWER))
    agent = Agent(SessionConfig(provider=provider))

    result = await agent.run_turn("What is the weather in Leeds?")

    assert (result.outcome, result.text) == ("completed", ANSWER)
    retrying, completed = agent.events_of(ModelStepCompleted)
    assert (retrying.outcome, completed.outcome) == ("retrying", "completed")
    assert (retrying.error.retry_after, retrying.retry_in) == ("0.25", 0.25)
    assert retrying.error.request_id == "req_busy"


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_retry_after_past_the_limit_is_capped(provider, scripted_model):
    """Checks: a dropped stream whose 200 asked for a day's wait is retried after
    ``MAX_RETRY_WAIT``, never a day (an insane header must not hang a turn); the
    header itself is kept verbatim on the error."""
    fault = Fault.cut(after_events=AFTER_SOME_TEXT[provider], retry_after=86400)
    scripted_model.script(Reply.text(ANSWER, fault=fault))
    agent = Agent(SessionConfig(provider=provider))
    turn = agent.run_turn("What is the weather in Leeds?")
    # Interrupt as soon as the step ends retrying: the wait itself is not the point.
    agent.subscribe(lambda e: agent.interrupt() if isinstance(e, ModelStepCompleted) else None)

    result = await turn

    assert result.outcome == "aborted"
    [retrying] = agent.events_of(ModelStepCompleted)
    assert (retrying.error.retry_after, retrying.retry_in) == ("86400", MAX_RETRY_WAIT)


@pytest.mark.anyio
@pytest.mark.parametrize("failure", FAILURES)
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_json_reply_that_fails_names_its_request_and_retry_after(
    provider, failure, backend
):
    """Checks (the non-streamed path): a JSON body cut short after its 200's headers,
    and the HTTP error a non-streamed call gets for an error event, fail the turn with
    an error carrying the response's request id and ``retry-after``, as on a stream."""
    fault = FAILURES[failure](None, retry_after=7, request_id="req_leeds_json")
    backend.script(Reply.text(ANSWER, fault=fault))
    agent = Agent(backend.config(provider, stream=False, retry_limit=0))

    result = await agent.run_turn("What is the weather in Leeds?")

    assert result.outcome == "failed"
    expected = (_request_id(backend, "req_leeds_json"), "7")
    assert (result.error.request_id, result.error.retry_after) == expected
    [ended] = agent.events_of(ModelStepCompleted)
    assert (ended.outcome, ended.error.request_id, ended.error.retry_after) == ("failed", *expected)
    if backend.fake is not None:
        outcome = "cut" if failure == "cut" else "http_error"
        assert backend.fake.log[0].outcome == outcome
    backend.assert_offline()
