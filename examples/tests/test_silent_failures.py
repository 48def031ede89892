"""Scenario 10: silent failures, the ones no exception announces.

A reply that arrives without an error can still fail to answer: it holds no new
message (nothing in it), or its stream ends before the provider said it was done.
Each is reported as ``no_response`` and saved as an error turn (after any text the
user saw). Look-alikes that are not failures: a new message repeating an earlier
answer or question, the same answer to the same question asked again, and an
``"error"`` field that is empty.
"""

from __future__ import annotations

import dataclasses

import pytest
from agent import Agent, ErrorEvent, MessageDelta, ToolBegin, ToolEnd, TurnComplete
from agent.errors import NO_RESPONSE
from agent.testing import record
from agent.tools import WEATHER

from pytest_agentreplay import Fault, Reply, Text, ToolCall, invariants

QUESTION = "What is the weather in Leeds?"
ANSWER = "It is sunny in Leeds."
# Stream events before the end, in the middle of the answer's text: Anthropic sends
# message_start, content_block_start and ping first, OpenAI a role chunk.
HALFWAY = {"anthropic": 6, "openai": 4}
SHOWN_HALFWAY = "It is sunny"  # what those events show of ANSWER, one delta a word
CHECKING = "Checking the tool result"
# Stream events up to the middle of the weather call's JSON arguments ("city": "Leeds),
# alone or after CHECKING (four text deltas): Anthropic's tool_use block starts with
# an empty input_json_delta, OpenAI's tool_calls chunk with empty arguments.
INSIDE_THE_ARGUMENTS = {
    "nothing": {"anthropic": 7, "openai": 5},
    "text": {"anthropic": 13, "openai": 9},
}


def saved(agent: Agent, turn_id: str) -> list[tuple[str, str, str]]:
    """(role, kind, text) of one turn's saved messages."""
    messages = agent.store.messages(agent.session_id)
    return [(m.role, m.kind, m.text) for m in messages if m.turn_id == turn_id]


def text_of(parts: list[Text]) -> str:
    return "".join(part.text for part in parts)


def assert_no_response(agent: Agent, result, log) -> None:
    """The turn failed as ``no_response``: reported once, saved as an error turn."""
    assert (result.outcome, result.text) == ("failed", "")
    assert result.error.kind == "no_response"
    [reported] = [e for e in agent.events_of(ErrorEvent) if e.turn_id == result.turn_id]
    assert reported.error.message == NO_RESPONSE
    assert [e for e in agent.events_of(TurnComplete) if e.turn_id == result.turn_id] == []
    assert saved(agent, result.turn_id)[-1] == ("assistant", "error", NO_RESPONSE)
    invariants.assert_terminal_error_turn(log, turn_id=result.turn_id, error_kind="no_response")


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_an_empty_completion_is_no_response_saved_as_an_error_turn(provider, backend):
    """Checks: a reply with nothing in it (no text, no tool call), with no error
    raised: the turn is ``no_response``, not an auth or provider error; one error
    event, no ``TurnComplete``; the saved turn is the question then the error turn."""
    backend.script(Fault.empty())
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())

    result = await agent.run_turn(QUESTION)

    assert_no_response(agent, result, log)
    assert saved(agent, result.turn_id) == [
        ("user", "message", QUESTION),
        ("assistant", "error", NO_RESPONSE),
    ]
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("repeated", ["the previous answer", "the question"])
async def test_a_new_message_repeating_the_history_is_an_answer(provider, repeated, backend):
    """Checks: a new assistant message whose text equals an earlier answer (to a
    different question), or the question, is a successful turn: whether a turn
    answered is decided by whether a new message was produced, not by its text."""
    second_question = "Will it rain in Manchester?"
    echo = ANSWER if repeated == "the previous answer" else second_question
    backend.script(Reply.text(ANSWER), Reply.text(echo))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())
    first = await agent.run_turn(QUESTION)

    result = await agent.run_turn(second_question)

    assert (first.text, result.outcome, result.text) == (ANSWER, "completed", echo)
    assert agent.events_of(ErrorEvent) == []
    assert [e.turn_id for e in agent.events_of(TurnComplete)] == [first.turn_id, result.turn_id]
    assert [(m.role, m.kind, m.text) for m in agent.store.messages(agent.session_id)] == [
        ("user", "message", QUESTION),
        ("assistant", "message", ANSWER),
        ("user", "message", second_question),
        ("assistant", "message", echo),
    ]
    invariants.assert_single_terminal_step(log)
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_turn_that_produces_no_new_message_after_an_earlier_answer_is_no_response(
    provider, backend
):
    """Checks: the other side: after an earlier answer, a reply that holds no new
    message (nothing in it) is ``no_response``; the earlier answer does not stand in
    for it, and the history is left as it was before the error turn."""
    backend.script(Reply.text(ANSWER), Fault.empty())
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())
    first = await agent.run_turn(QUESTION)

    result = await agent.run_turn("Will it rain in Manchester?")

    assert first.outcome == "completed"
    assert_no_response(agent, result, log)
    assert [(m.role, m.kind, m.text) for m in agent.store.messages(agent.session_id)] == [
        ("user", "message", QUESTION),
        ("assistant", "message", ANSWER),
        ("user", "message", "Will it rain in Manchester?"),
        ("assistant", "error", NO_RESPONSE),
    ]
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_stream_that_ends_before_the_answer_is_done_is_no_response(provider, backend):
    """Checks: the stream ends cleanly halfway through the answer, with no stop
    reason: the turn is ``no_response``; exactly the text the user saw (the first
    three words of the answer) is saved as the partial before the error turn; one
    call, not retried."""
    backend.script(Reply.text(ANSWER, fault=Fault.truncate(after_events=HALFWAY[provider])))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())

    result = await agent.run_turn(QUESTION)

    assert_no_response(agent, result, log)
    assert "".join(delta.text for delta in agent.events_of(MessageDelta)) == SHOWN_HALFWAY
    assert saved(agent, result.turn_id) == [
        ("user", "message", QUESTION),
        ("assistant", "message", SHOWN_HALFWAY),
        ("assistant", "error", NO_RESPONSE),
    ]
    assert len(log.model_calls) == 1  # ended normally: nothing to retry
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("before", ["nothing", "text"])
async def test_a_stream_that_ends_inside_a_tool_call_is_no_response(provider, before, backend):
    """Checks: the stream stops in the middle of the tool call's JSON arguments,
    with or without assistant text before the call: the tool is not run with half its
    arguments (its call ends ``interrupted``), the text alone does not make the reply
    an answer, and the turn is ``no_response``; the text the user saw is kept as a
    partial before the error turn."""
    text = [Text(text=CHECKING)] if before == "text" else []
    call = ToolCall(name="weather", args={"city": "Leeds, West Yorkshire"})
    inside = Fault.truncate(after_events=INSIDE_THE_ARGUMENTS[before][provider])
    backend.script(Reply(parts=[*text, call], fault=inside))
    ran: list[str] = []

    async def weather(city: str) -> str:
        ran.append(city)
        return f"Sunny in {city}."

    agent = Agent(backend.config(provider), tools=[dataclasses.replace(WEATHER, run=weather)])
    log = record(agent, backend.runlog())

    result = await agent.run_turn(QUESTION)

    assert_no_response(agent, result, log)
    assert "".join(delta.text for delta in agent.events_of(MessageDelta)) == text_of(text)
    partial = [("assistant", "message", CHECKING)] if text else []
    assert saved(agent, result.turn_id) == [
        ("user", "message", QUESTION),
        *partial,
        ("assistant", "error", NO_RESPONSE),
    ]
    [begun] = agent.events_of(ToolBegin)
    [ended] = agent.events_of(ToolEnd)
    assert (ended.call_id, ended.name, ended.outcome) == (begun.call_id, "weather", "interrupted")
    assert ran == []  # never run with half its arguments
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_the_same_answer_to_the_same_question_asked_again_is_an_answer(provider, backend):
    """Checks: the same question asked twice, answered twice with the same text:
    both turns complete (a ``TurnComplete`` each, no error event), and the second
    turn saves its question and its answer."""
    backend.script(Reply.text(ANSWER), Reply.text(ANSWER))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())

    first = await agent.run_turn(QUESTION)
    again = await agent.run_turn(QUESTION)

    assert (first.outcome, again.outcome) == ("completed", "completed")
    assert again.text == ANSWER
    assert [e.turn_id for e in agent.events_of(TurnComplete)] == [first.turn_id, again.turn_id]
    assert agent.events_of(ErrorEvent) == []
    assert saved(agent, again.turn_id) == [
        ("user", "message", QUESTION),
        ("assistant", "message", ANSWER),
    ]
    invariants.assert_single_terminal_step(log)
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_an_empty_error_field_in_every_stream_event_is_not_an_error(provider, backend):
    """Checks: ``"error": null`` in every stream event, as some gateways send it, is
    not an error: the turn completes with the answer, no error event. The fake adds
    the field itself (``Reply(event_fields=...)``); the cassette was recorded from a
    server that added it to the provider's events on the way out, and holds it in
    every JSON event."""
    backend.serve_edited(Reply.text(ANSWER), add_fields={"error": None})
    agent = Agent(backend.config(provider))

    result = await agent.run_turn(QUESTION)

    assert (result.outcome, result.text) == ("completed", ANSWER)
    assert agent.events_of(ErrorEvent) == []
    [done] = agent.events_of(TurnComplete)
    assert (done.turn_id, done.text) == (result.turn_id, ANSWER)
    if backend.fake is not None:
        [call] = backend.fake.log
        assert call.reply is not None and call.reply.event_fields == {"error": None}
    elif not backend.recording:
        events = backend.cassette.interactions[0].response.events
        assert all('"error":null' in event.data for event in events if event.data != "[DONE]")
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("empty", [None, ""])
async def test_an_empty_error_field_an_earlier_turn_and_a_repeated_answer_still_answer(
    provider, empty, backend
):
    """Checks: ``"error": null`` (or ``""``) in every event, an earlier turn and a
    new message repeating that turn's answer to another question: the turn completes
    with it (a ``TurnComplete`` for each turn, no error event), and the saved messages
    are the two questions and the two answers."""
    noisy = Reply.text(ANSWER, event_fields={"error": empty})
    backend.script(noisy, noisy)
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())
    first = await agent.run_turn(QUESTION)

    result = await agent.run_turn("And in Manchester?")

    assert (first.outcome, result.outcome, result.text) == ("completed", "completed", ANSWER)
    assert agent.events_of(ErrorEvent) == []
    done = [(e.turn_id, e.text) for e in agent.events_of(TurnComplete)]
    assert done == [(first.turn_id, ANSWER), (result.turn_id, ANSWER)]
    assert [(m.role, m.kind, m.text) for m in agent.store.messages(agent.session_id)] == [
        ("user", "message", QUESTION),
        ("assistant", "message", ANSWER),
        ("user", "message", "And in Manchester?"),
        ("assistant", "message", ANSWER),
    ]
    invariants.assert_single_terminal_step(log)
    backend.assert_offline()
