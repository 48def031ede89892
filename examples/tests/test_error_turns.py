"""Scenarios 7, 8 and 9: turns that fail, saved as error turns.

A failed turn keeps what the user saw (the question, any partial text), then ends
with one assistant message of kind ``error``: the turn's last word. It sends
``ErrorEvent`` and never ``TurnComplete``, and leaves no turn pending. An error the
runtime can heal (refused credentials, with a ``refresh_credentials`` callback)
is retried instead, and the turn answers.
"""

from __future__ import annotations

import dataclasses

import pytest
from agent import (
    Agent,
    ErrorEvent,
    FinalMessage,
    MessageDelta,
    ModelStepCompleted,
    PromptCache,
    SessionConfig,
    StepDiagnostics,
    TurnComplete,
)
from agent.errors import AUTH
from agent.testing import record
from agent.tools import WEATHER

from pytest_agentreplay import Fault, Reply, invariants
from pytest_agentreplay.runlog import RunLog

QUESTION = "What is the weather in Leeds?"
FIRST_ANSWER = "It is sunny in Leeds."
INVALIDATED = "Your authentication token has been invalidated. Please try signing in again."
# Anthropic names the failure in the error's type, OpenAI in its code.
AUTH_ERROR = {"anthropic": "authentication_error", "openai": "token_invalidated"}
WIRE = {"anthropic": "anthropic", "openai": "openai_chat"}  # the wire formats they speak
# Stream events up to the last text delta of FIRST_ANSWER (five words): Anthropic
# sends message_start, content_block_start and ping first, OpenAI a role chunk.
AFTER_THE_TEXT = {"anthropic": 8, "openai": 6}
CACHING = {"anthropic": "explicit", "openai": "automatic"}  # how each caches prompts
# The text of FIRST_ANSWER (one delta a word) shown before an error after 5 events:
# Anthropic's first three events carry no text, OpenAI's first one.
SHOWN_IN_5_EVENTS = {"anthropic": "It is", "openai": "It is sunny in"}


def refused(provider: str) -> Fault:
    """A 401 with the provider's invalidated-token error body."""
    return Fault.http(401, INVALIDATED, error_type=AUTH_ERROR[provider])


def saved(agent: Agent, turn_id: str | None = None) -> list[tuple[str, str, str]]:
    """(role, kind, text) of the saved messages, of one turn or all."""
    messages = agent.store.messages(agent.session_id)
    return [(m.role, m.kind, m.text) for m in messages if turn_id in (None, m.turn_id)]


def assert_failed_turn(agent: Agent, result, kind: str) -> None:
    """The turn failed with ``kind``, reported once, answered never, pending no more."""
    assert result.outcome == "failed"
    assert (result.text, result.error.kind) == ("", kind)
    [reported] = [e for e in agent.events_of(ErrorEvent) if e.turn_id == result.turn_id]
    assert reported.error.kind == kind
    assert [e for e in agent.events_of(TurnComplete) if e.turn_id == result.turn_id] == []
    assert agent.store.turn(result.turn_id).status == "failed"
    assert agent.store.pending_turns(agent.session_id) == []


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_refused_credentials_with_nothing_delivered_end_the_turn_in_an_auth_error_turn(
    provider, backend
):
    """Checks: a 401 before any text: the turn fails as ``auth`` (status 401, not
    retryable), reported by one error event and no ``TurnComplete``, nothing left
    pending; the saved history is the question then the auth error turn, worded
    safely (the provider's own words are not shown)."""
    backend.script(refused(provider))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())

    result = await agent.run_turn(QUESTION)

    assert_failed_turn(agent, result, "auth")
    assert (result.error.status, result.error.retryable) == (401, False)
    assert saved(agent) == [("user", "message", QUESTION), ("assistant", "error", AUTH)]
    assert INVALIDATED not in AUTH  # the provider's words stay out of the user's sight
    invariants.assert_terminal_error_turn(log, error_kind="auth")
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_refused_credentials_after_partial_text_keep_the_text_before_the_error_turn(
    provider, backend
):
    """Checks: the credentials are refused by an error event after some text has
    streamed: the one step fails, the turn fails as ``auth``, and exactly the text the
    user saw — what the provider sent before the error, some of the answer — is the
    step's text and is saved before the auth error turn."""
    partial = Fault.error_event(AUTH_ERROR[provider], INVALIDATED, after_events=5)
    backend.script(Reply.text(FIRST_ANSWER, fault=partial))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())

    result = await agent.run_turn(QUESTION)

    assert_failed_turn(agent, result, "auth")
    shown = SHOWN_IN_5_EVENTS[provider]
    assert "".join(d.text for d in agent.events_of(MessageDelta)) == shown
    [step] = agent.events_of(ModelStepCompleted)
    assert (step.outcome, step.text) == ("failed", shown)
    assert saved(agent) == [
        ("user", "message", QUESTION),
        ("assistant", "message", shown),
        ("assistant", "error", AUTH),
    ]
    invariants.assert_terminal_error_turn(log, error_kind="auth")
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_refused_credentials_leave_the_earlier_turns_of_the_history_intact(provider, backend):
    """Checks: a 401 on the second turn: the earlier question and answer are saved
    as they were and that turn stays completed; the failed turn holds only its
    question and the auth error turn."""
    backend.script(Reply.text(FIRST_ANSWER), refused(provider))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())
    first = await agent.run_turn(QUESTION)
    before = saved(agent)

    result = await agent.run_turn("And tomorrow?")

    assert_failed_turn(agent, result, "auth")
    assert before == [("user", "message", QUESTION), ("assistant", "message", FIRST_ANSWER)]
    assert saved(agent)[: len(before)] == before
    assert saved(agent, result.turn_id) == [
        ("user", "message", "And tomorrow?"),
        ("assistant", "error", AUTH),
    ]
    assert agent.store.turn(first.turn_id).status == "completed"
    invariants.assert_terminal_error_turn(log, turn_id=result.turn_id, error_kind="auth")
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_reply_repeating_the_previous_answer_does_not_answer_a_turn_that_failed(
    provider, backend
):
    """Checks: on the second turn the whole previous answer streams again, then the
    credentials are refused: the turn fails as ``auth``; the repeated text is kept as
    what the user saw, but it is not this turn's answer (no final message, no answer
    stored for the turn)."""
    after = AFTER_THE_TEXT[provider]
    repeated = Fault.error_event(AUTH_ERROR[provider], INVALIDATED, after_events=after)
    backend.script(Reply.text(FIRST_ANSWER), Reply.text(FIRST_ANSWER, fault=repeated))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())
    await agent.run_turn(QUESTION)

    result = await agent.run_turn("And tomorrow?")

    assert_failed_turn(agent, result, "auth")
    # The whole previous answer came again, and is kept as what the user saw...
    assert saved(agent, result.turn_id) == [
        ("user", "message", "And tomorrow?"),
        ("assistant", "message", FIRST_ANSWER),
        ("assistant", "error", AUTH),
    ]
    # ...but it is not this turn's answer: no final message, no answer stored.
    [final] = agent.events_of(FinalMessage)  # the first turn's, and no other
    assert final.turn_id != result.turn_id
    assert agent.store.turn(result.turn_id).text == ""
    invariants.assert_terminal_error_turn(log, turn_id=result.turn_id, error_kind="auth")
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_an_unknown_model_error_beats_a_structured_looking_answer_of_an_earlier_step(
    provider, backend
):
    """Step 0 says something that looks like a final answer (a JSON object with an
    ``answer``) and calls a tool; step 1 is refused with HTTP 400, unknown model. The
    turn fails as ``model_not_found``: the earlier text is kept, not promoted to the
    turn's answer."""
    looks_final = '{"status": "done", "answer": "Sunny, 21 °C in Leeds."}'
    unknown = "The model `claude-sonnet-9` does not exist or you do not have access to it."
    backend.script(
        Reply.tool_call("weather", {"city": "Leeds"}, text=looks_final),
        Fault.http(400, unknown, error_type="invalid_request_error"),
    )
    agent = Agent(backend.config(provider), tools=[WEATHER])
    log = record(agent, backend.runlog())

    result = await agent.run_turn(QUESTION)

    assert_failed_turn(agent, result, "model_not_found")
    assert (result.error.status, result.error.retryable) == (400, False)
    assert result.error.message == unknown
    assert [e.outcome for e in agent.events_of(ModelStepCompleted)] == ["completed", "failed"]
    assert agent.events_of(FinalMessage) == []
    *_, last = saved(agent)
    assert last == ("assistant", "error", unknown)
    invariants.assert_terminal_error_turn(log, error_kind="model_not_found")
    invariants.assert_every_tool_call_answered(log)
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("provider", "replacement", "model"),
    [("anthropic", "openai", "gpt-4o-mini"), ("openai", "anthropic", "claude-haiku-4-5")],
)
async def test_refused_credentials_healed_by_a_refresh_answer_with_the_replacement_client(
    provider, replacement, model, backend
):
    """Checks: a 401 healed by ``refresh_credentials``, which switches provider and
    model: the refused step is ``retrying``, the retried one completes; the turn is
    done (one ``TurnComplete``, no error event, no error turn); the result, the done
    event and the stored turn name the replacement, and the retried request went to
    the replacement model. The switch rewrote the context a prompt cache keys on: the
    retried step starts context epoch 1, for the provider and the model."""
    backend.script(refused(provider), Reply.text(FIRST_ANSWER))

    async def refresh(config: SessionConfig) -> SessionConfig:
        base_url = backend.base_url(replacement)
        return dataclasses.replace(
            config, provider=replacement, model=model, api_key="fresh-key", base_url=base_url
        )

    agent = Agent(backend.config(provider), refresh_credentials=refresh)
    log = record(agent, backend.runlog())

    result = await agent.run_turn(QUESTION)

    assert (result.outcome, result.text) == ("completed", FIRST_ANSWER)
    assert (result.provider, result.model) == (replacement, model)
    [done] = agent.events_of(TurnComplete)
    assert (done.provider, done.model) == (replacement, model)
    assert agent.events_of(ErrorEvent) == []
    assert [e.outcome for e in agent.events_of(ModelStepCompleted)] == ["retrying", "completed"]
    refused_step, retried_step = agent.events_of(ModelStepCompleted)
    assert refused_step.diagnostics == StepDiagnostics(
        provider, PromptCache(CACHING[provider], "unknown", context_epoch=0)
    )
    assert retried_step.diagnostics == StepDiagnostics(
        replacement,
        PromptCache(CACHING[replacement], "miss", 1, rewrite_reasons=("provider", "model")),
    )
    assert saved(agent) == [("user", "message", QUESTION), ("assistant", "message", FIRST_ANSWER)]
    turn = agent.store.turn(result.turn_id)
    assert (turn.status, turn.text, turn.provider, turn.model) == (
        "completed",
        FIRST_ANSWER,
        replacement,
        model,
    )
    refused_call, answered = log.model_calls
    assert (refused_call.provider, refused_call.status) == (WIRE[provider], 401)
    assert (answered.request.model, answered.outcome) == (model, "completed")
    invariants.assert_single_terminal_step(log)
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_refresh_that_finds_no_credentials_fails_the_turn_as_an_auth_error(
    provider, scripted_model
):
    """The refusal stands when the refresh itself fails: the step ends once, failed;
    the turn is saved as an auth error turn and does not stay running."""
    scripted_model.script(refused(provider))

    async def refresh(config: SessionConfig) -> SessionConfig:
        raise RuntimeError("the vault is unreachable")

    agent = Agent(SessionConfig(provider=provider), refresh_credentials=refresh)
    log = record(agent, RunLog.from_fake(scripted_model))

    result = await agent.run_turn(QUESTION)

    assert result.outcome == "failed"
    assert result.error is not None and result.error.kind == "auth"
    assert [e.outcome for e in agent.events_of(ModelStepCompleted)] == ["failed"]
    assert agent.store.pending_turns(agent.session_id) == []
    assert [(role, kind) for role, kind, _ in saved(agent)] == [
        ("user", "message"),
        ("assistant", "error"),
    ]
    invariants.assert_single_terminal_step(log)
    invariants.assert_terminal_error_turn(log, error_kind="auth")
