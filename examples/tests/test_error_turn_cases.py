"""Scenarios 7, 8 and 9, continued: the error turns of a longer history.

Each test names in its docstring the case it checks. Together with
``test_error_turns.py`` and ``test_silent_failures.py`` they settle, for every way
a model call can go wrong, whether the turn answers or ends in an error turn, and
what of the text the user saw is kept.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from agent import (
    Agent,
    ErrorEvent,
    FinalMessage,
    MessageDelta,
    ModelStepCompleted,
    SessionConfig,
    TurnComplete,
)
from agent.errors import AUTH, NO_RESPONSE
from agent.testing import record

from pytest_agentreplay import Fault, Reply, invariants
from pytest_agentreplay.runlog import ErrorReported, RunLog

QUESTION = "What is the weather in Leeds?"
ANSWER = "It is sunny in Leeds."  # five words: five text deltas
INVALIDATED = "Your authentication token has been invalidated. Please try signing in again."
AUTH_ERROR = {"anthropic": "authentication_error", "openai": "token_invalidated"}
# Stream events up to the last text delta of ANSWER: Anthropic sends message_start,
# content_block_start and ping first, OpenAI a role chunk.
AFTER_THE_TEXT = {"anthropic": 8, "openai": 6}
# Every event but the last: Anthropic's message_stop, OpenAI's [DONE] (after the
# finish_reason chunk and the usage chunk).
ALL_BUT_THE_LAST = {"anthropic": 10, "openai": 8}
SOME_TEXT = {"anthropic": 5, "openai": 3}
# What those events show, one delta a word: the first two words, on either provider.
SOME_OF_THE_ANSWER = "It is"
SOME_OF_TOMORROW = "Tomorrow it"  # of "Tomorrow it will rain."
# The 401 bodies the providers send for an invalidated token. Anthropic names the
# request in its body too; the SDK's error keeps Anthropic's whole body, and OpenAI's
# ``error`` object only.
SENT_401_BODY = {
    "anthropic": {
        "type": "error",
        "error": {"type": "authentication_error", "message": INVALIDATED},
        "request_id": "req_leeds_401",
    },
    "openai": {
        "error": {
            "message": INVALIDATED,
            "type": "invalid_request_error",
            "param": None,
            "code": "token_invalidated",
        }
    },
}
SENT_401 = {"anthropic": SENT_401_BODY["anthropic"], "openai": SENT_401_BODY["openai"]["error"]}


def saved(agent: Agent, turn_id: str | None = None) -> list[tuple[str, str, str]]:
    """(role, kind, text) of the saved messages, of one turn or all."""
    messages = agent.store.messages(agent.session_id)
    return [(m.role, m.kind, m.text) for m in messages if turn_id in (None, m.turn_id)]


def shown(agent: Agent, turn_id: str) -> str:
    """The text the last step of ``turn_id`` says it had shown (its own buffer)."""
    steps = [e for e in agent.events_of(ModelStepCompleted) if e.turn_id == turn_id]
    return steps[-1].text


def streamed(agent: Agent, turn_id: str) -> str:
    """The text the user saw stream in during ``turn_id``: its deltas."""
    return "".join(d.text for d in agent.events_of(MessageDelta) if d.turn_id == turn_id)


def assert_error_turn(agent: Agent, result, kind: str, log) -> None:
    """The turn failed with ``kind``: one error event, no answer, nothing pending,
    and its last saved message is the error turn."""
    assert (result.outcome, result.text) == ("failed", "")
    assert result.error is not None
    assert result.error.kind == kind
    assert [e.turn_id for e in agent.events_of(ErrorEvent)] == [result.turn_id]
    assert [e for e in agent.events_of(TurnComplete) if e.turn_id == result.turn_id] == []
    assert [e for e in agent.events_of(FinalMessage) if e.turn_id == result.turn_id] == []
    assert agent.store.turn(result.turn_id).status == "failed"
    assert agent.store.pending_turns(agent.session_id) == []
    assert saved(agent, result.turn_id)[-1][:2] == ("assistant", "error")
    invariants.assert_terminal_error_turn(log, turn_id=result.turn_id, error_kind=kind)


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_an_earlier_turn_then_partial_text_then_refused_credentials(provider, backend):
    """Checks: an earlier turn, partial text and a 401 together: the earlier turn
    stays as it was; this turn keeps its question, exactly the text shown before the
    refusal, then the auth error turn."""
    refused = Fault.error_event(AUTH_ERROR[provider], INVALIDATED, after_events=SOME_TEXT[provider])
    backend.script(Reply.text(ANSWER), Reply.text("Tomorrow it will rain.", fault=refused))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())
    await agent.run_turn(QUESTION)
    before = saved(agent)

    result = await agent.run_turn("And tomorrow?")

    assert_error_turn(agent, result, "auth", log)
    assert (shown(agent, result.turn_id), streamed(agent, result.turn_id)) == (
        SOME_OF_TOMORROW,
        SOME_OF_TOMORROW,
    )
    assert before == [("user", "message", QUESTION), ("assistant", "message", ANSWER)]
    assert saved(agent) == [
        *before,
        ("user", "message", "And tomorrow?"),
        ("assistant", "message", SOME_OF_TOMORROW),
        ("assistant", "error", AUTH),
    ]
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_the_error_keeps_the_provider_s_error_body_as_text_and_its_request_id(
    provider, backend
):
    """Checks: the classified error carries the provider's error body verbatim, as
    text (json-equal to what was sent: Anthropic's whole body, its request id inside;
    OpenAI's error object), and the request id of the response's header, while the
    user sees only the safe message; the write-ahead log keeps both, and the run log's
    error record carries the status and the request id (what
    ``assert_error_metadata_reported`` checks against the response)."""
    backend.script(
        Fault.http(401, INVALIDATED, error_type=AUTH_ERROR[provider], request_id="req_leeds_401")
    )
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())

    result = await agent.run_turn(QUESTION)

    assert_error_turn(agent, result, "auth", log)
    error = result.error
    # A cassette stores the request-id header as the placeholder "req_agentreplay"
    # (see docs/secrets.md), and the SDK reads the id from that header; the id
    # inside Anthropic's body is kept as sent.
    request_id = "req_leeds_401" if backend.fake is not None else "req_agentreplay"
    assert (error.message, error.request_id) == (AUTH, request_id)
    assert json.loads(error.provider_text) == SENT_401[provider]
    if backend.cassette is not None and not backend.recording:
        [interaction] = backend.cassette.interactions
        assert interaction.response.json_body == SENT_401_BODY[provider]
    assert INVALIDATED not in " ".join(text for _, _, text in saved(agent))
    [completion] = [r for r in agent.store.wal(agent.session_id) if r.entry == "completion"]
    assert completion.body["error"]["provider_text"] == error.provider_text
    assert completion.body["error"]["request_id"] == request_id
    [reported] = log.of(ErrorReported)
    assert (reported.status, reported.request_id) == (401, request_id)
    invariants.assert_error_metadata_reported(log)
    backend.assert_offline()


@pytest.mark.anyio
async def test_an_auth_error_turn_s_run_log_names_its_request(scripted_model, snapshot):
    """The run of a 401, whole, in the snapshot next to this file
    (``__snapshots__/test_error_turn_cases/``): the question, the failed step, the
    error turn, and the error record with its status and request id (masked: it
    differs on every real call, but that there is one shows)."""
    scripted_model.script(
        Fault.http(401, INVALIDATED, error_type="authentication_error", request_id="req_leeds_401")
    )
    agent = Agent(SessionConfig())
    log = record(agent, RunLog.from_fake(scripted_model))

    await agent.run_turn(QUESTION)

    [reported] = log.of(ErrorReported)
    assert reported.request_id == "req_leeds_401"
    assert log == snapshot


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_refreshed_credentials_refused_again_after_partial_text_still_end_in_an_error_turn(
    provider, backend
):
    """Checks: the first 401 is healed by a refresh that works; the retried call is
    refused again after partial text; the refresh is not tried twice; exactly the
    text shown before the second refusal and the auth error turn are saved; no
    answer."""
    again = Fault.error_event(AUTH_ERROR[provider], INVALIDATED, after_events=SOME_TEXT[provider])
    backend.script(
        Fault.http(401, INVALIDATED, error_type=AUTH_ERROR[provider]),
        Reply.text(ANSWER, fault=again),
    )
    refreshes = []

    async def refresh(config: SessionConfig) -> SessionConfig:
        refreshes.append(config.api_key)
        return dataclasses.replace(config, api_key="fresh-key")

    agent = Agent(backend.config(provider), refresh_credentials=refresh)
    log = record(agent, backend.runlog())

    result = await agent.run_turn(QUESTION)

    assert len(refreshes) == 1
    assert [e.outcome for e in agent.events_of(ModelStepCompleted)] == ["retrying", "failed"]
    assert_error_turn(agent, result, "auth", log)
    assert shown(agent, result.turn_id) == SOME_OF_THE_ANSWER
    assert saved(agent) == [
        ("user", "message", QUESTION),
        ("assistant", "message", SOME_OF_THE_ANSWER),
        ("assistant", "error", AUTH),
    ]
    invariants.assert_single_terminal_step(log)
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_generic_failure_is_saved_verbatim_with_nothing_added(provider, backend):
    """Checks: a failure the agent has no special words for is saved as the error
    turn exactly as the provider worded it: no prefix, no emphasis, no empty hint."""
    backend.script(Fault.http(400, "synthetic hard failure", error_type="invalid_request_error"))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())

    result = await agent.run_turn(QUESTION)

    assert_error_turn(agent, result, "bad_request", log)
    *_, (role, kind, text) = saved(agent)
    assert (role, kind, text) == ("assistant", "error", "synthetic hard failure")
    assert result.error.message == "synthetic hard failure"
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_complete_answer_whose_stream_lacks_only_its_final_event_answers(provider, backend):
    """Checks: the stop reason arrived, only ``message_stop`` / ``[DONE]`` did not:
    the answer is complete, so the turn completes with it: one ``TurnComplete``
    carrying the answer, no error event, no error turn."""
    backend.script(
        Reply.text(ANSWER, fault=Fault.truncate(after_events=ALL_BUT_THE_LAST[provider]))
    )
    agent = Agent(backend.config(provider))

    result = await agent.run_turn(QUESTION)

    assert (result.outcome, result.text) == ("completed", ANSWER)
    assert agent.events_of(ErrorEvent) == []
    [done] = agent.events_of(TurnComplete)
    assert (done.turn_id, done.text) == (result.turn_id, ANSWER)
    assert saved(agent) == [("user", "message", QUESTION), ("assistant", "message", ANSWER)]
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_stream_cut_short_after_the_same_question_was_asked_earlier_is_no_response(
    provider, backend
):
    """Checks: the question was asked and answered before; asked again, the stream
    ends before it is done: ``no_response``, even though the text seen matches the
    earlier answer's start; the earlier answer does not stand in for this one."""
    half = Fault.truncate(after_events=SOME_TEXT[provider])
    backend.script(Reply.text(ANSWER), Reply.text(ANSWER, fault=half))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())
    await agent.run_turn(QUESTION)

    result = await agent.run_turn(QUESTION)

    assert_error_turn(agent, result, "no_response", log)
    assert streamed(agent, result.turn_id) == SOME_OF_THE_ANSWER  # not all of ANSWER
    assert saved(agent, result.turn_id) == [
        ("user", "message", QUESTION),
        ("assistant", "message", SOME_OF_THE_ANSWER),
        ("assistant", "error", NO_RESPONSE),
    ]
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_complete_answer_followed_by_a_failure_is_no_response(provider, backend):
    """Checks: all the answer's text arrived, then the stream failed to finish (no
    stop reason): the turn is ``no_response``, never done; the text is kept before
    the error turn."""
    backend.script(Reply.text(ANSWER, fault=Fault.truncate(after_events=AFTER_THE_TEXT[provider])))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())

    result = await agent.run_turn(QUESTION)

    assert_error_turn(agent, result, "no_response", log)
    assert shown(agent, result.turn_id) == ANSWER
    assert saved(agent) == [
        ("user", "message", QUESTION),
        ("assistant", "message", ANSWER),
        ("assistant", "error", NO_RESPONSE),
    ]
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_an_earlier_turn_then_a_dropped_stream_keeps_the_partial_in_an_error_turn(
    provider, backend
):
    """Checks: after an earlier turn, a stream that drops (with no retry left) fails
    the turn as a provider error: the earlier turn is intact, this turn keeps the
    partial text, then the error turn. (A stream that ends early without dropping is
    ``no_response``: the next test.)"""
    cut = Fault.cut(after_events=SOME_TEXT[provider])
    backend.script(Reply.text(ANSWER), Reply.text("Tomorrow it will rain.", fault=cut))
    agent = Agent(backend.config(provider, retry_limit=0))
    log = record(agent, backend.runlog())
    await agent.run_turn(QUESTION)

    result = await agent.run_turn("And tomorrow?")

    assert_error_turn(agent, result, "provider", log)
    assert streamed(agent, result.turn_id) == SOME_OF_TOMORROW
    assert saved(agent) == [
        ("user", "message", QUESTION),
        ("assistant", "message", ANSWER),
        ("user", "message", "And tomorrow?"),
        ("assistant", "message", SOME_OF_TOMORROW),
        ("assistant", "error", result.error.message),
    ]
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_an_earlier_turn_then_a_stream_ending_without_its_stop_reason_is_no_response(
    provider, backend
):
    """Checks: after an earlier turn (another question, answered), the stream ends
    cleanly but early, with partial text and no stop reason: nothing was dropped, so
    nothing is retried; the turn is ``no_response`` (not a provider error), and the
    whole history is the earlier question and answer, this question, exactly the text
    shown before the stream ended and the error turn, in that order."""
    ended = Fault.truncate(after_events=SOME_TEXT[provider])
    backend.script(Reply.text(ANSWER), Reply.text("Tomorrow it will rain.", fault=ended))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())
    await agent.run_turn(QUESTION)

    result = await agent.run_turn("And tomorrow?")

    assert_error_turn(agent, result, "no_response", log)
    assert streamed(agent, result.turn_id) == SOME_OF_TOMORROW
    assert saved(agent) == [
        ("user", "message", QUESTION),
        ("assistant", "message", ANSWER),
        ("user", "message", "And tomorrow?"),
        ("assistant", "message", SOME_OF_TOMORROW),
        ("assistant", "error", NO_RESPONSE),
    ]
    assert [e.outcome for e in agent.events_of(ModelStepCompleted)] == ["completed", "failed"]
    # The stream ended cleanly, early: no retry, one call per turn.
    assert [call.outcome for call in log.model_calls] == ["completed", "completed"]
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("provider", "replacement", "model"),
    [("anthropic", "openai", "gpt-4o-mini"), ("openai", "anthropic", "claude-haiku-4-5")],
)
async def test_credentials_refused_mid_stream_are_healed_and_the_replacement_client_answers(
    provider, replacement, model, backend
):
    """Checks: a refusal reported as an exception during the stream (an error event
    after the 200, not an HTTP 401) is healed like a 401: the refresh runs once, the
    retried step uses the replacement provider and model, the turn is done with no
    error turn, and the result names the replacement."""
    refused = Fault.error_event(AUTH_ERROR[provider], INVALIDATED, after_events=SOME_TEXT[provider])
    backend.script(Reply.text(ANSWER, fault=refused), Reply.text("Recovered answer."))
    refreshes = []

    async def refresh(config: SessionConfig) -> SessionConfig:
        refreshes.append(config.provider)
        base_url = backend.base_url(replacement)
        return dataclasses.replace(
            config, provider=replacement, model=model, api_key="fresh-key", base_url=base_url
        )

    agent = Agent(backend.config(provider), refresh_credentials=refresh)
    log = record(agent, backend.runlog())

    result = await agent.run_turn(QUESTION)

    assert (result.outcome, result.text) == ("completed", "Recovered answer.")
    assert refreshes == [provider]  # once, for the refused client
    assert (result.provider, result.model) == (replacement, model)
    [done] = agent.events_of(TurnComplete)
    assert (done.provider, done.model) == (replacement, model)
    assert agent.events_of(ErrorEvent) == []
    first, retried = agent.events_of(ModelStepCompleted)
    assert (first.outcome, first.provider) == ("retrying", provider)
    assert (retried.outcome, retried.provider) == ("completed", replacement)
    assert saved(agent) == [
        ("user", "message", QUESTION),
        ("assistant", "message", "Recovered answer."),
    ]
    invariants.assert_single_terminal_step(log)
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_an_earlier_answer_replayed_by_a_reply_that_never_finishes_is_no_response(
    provider, backend
):
    """Checks: after an earlier turn, the reply streams that turn's answer again and
    ends without a stop reason: the replayed text does not satisfy this turn
    (``no_response``, no final message, no answer stored), and the question is kept."""
    replayed = Fault.truncate(after_events=AFTER_THE_TEXT[provider])
    backend.script(Reply.text(ANSWER), Reply.text(ANSWER, fault=replayed))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())
    await agent.run_turn("Earlier question")

    result = await agent.run_turn("Please handle this now")

    assert_error_turn(agent, result, "no_response", log)
    assert agent.store.turn(result.turn_id).text == ""
    assert saved(agent, result.turn_id) == [
        ("user", "message", "Please handle this now"),
        ("assistant", "message", ANSWER),
        ("assistant", "error", NO_RESPONSE),
    ]
    backend.assert_offline()
