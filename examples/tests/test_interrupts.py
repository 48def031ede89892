"""Scenarios 4 and 6: the user interrupts a turn.

An interrupt stops the turn at once, whatever it is waiting for: the model's
response (held by the ``blocking_model`` fake), a tool, or the pause before a retry. The
step that was running ends exactly once, ``interrupted``; a wait ends without a
step of its own; the turn ends ``aborted`` and the agent answers the next turn.
"""

from __future__ import annotations

import asyncio

import pytest
from agent import (
    Agent,
    ErrorEvent,
    MessageDelta,
    ModelStepCompleted,
    ModelStepStarted,
    SessionConfig,
    Tool,
    ToolEnd,
    TurnAborted,
    TurnComplete,
)
from agent.testing import record
from agent.tools import CITY

from pytest_agentreplay import FakeModel, Fault, Reply, ToolCall, invariants
from pytest_agentreplay.runlog import RunLog

ANSWER = "It is sunny in Leeds."
PARTIAL = "It is"
# Events before the hold, when the stream is held after some text: Anthropic sends
# message_start, content_block_start and ping first, OpenAI a role chunk.
AFTER_SOME_TEXT = {"anthropic": 5, "openai": 3}
HANG = 120  # seconds: a turn an interrupt failed to end fails the test (not a speed bound)


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, str]]:
    """Each ``asyncio.sleep`` of the test, with how it ended: ``"cancelled"`` when an
    interrupt cut it short, ``"slept"`` when it ran its course. "At once" is then
    proved by the backoff's own wait being cancelled, with no clock in the test."""
    ended: list[tuple[float, str]] = []
    sleep = asyncio.sleep

    async def watched(delay: float, *args: object, **kwargs: object) -> object:
        try:
            result = await sleep(delay, *args, **kwargs)  # type: ignore[arg-type]
        except asyncio.CancelledError:
            ended.append((delay, "cancelled"))
            raise
        ended.append((delay, "slept"))
        return result

    monkeypatch.setattr(asyncio, "sleep", watched)
    return ended


def when(agent: Agent, happened: type, **fields: object) -> asyncio.Event:
    """An event set as soon as ``agent`` emits a ``happened`` with those fields."""
    seen = asyncio.Event()

    def listen(event: object) -> None:
        if isinstance(event, happened) and all(getattr(event, k) == v for k, v in fields.items()):
            seen.set()

    agent.subscribe(listen)
    return seen


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_an_interrupt_during_the_retry_backoff_cancels_the_retry_at_once(
    provider, backend, waits
):
    """Checks: a 503 with ``Retry-After: 30`` ends its step ``retrying`` with a
    30 s wait; an interrupt during that wait aborts the turn without sitting it out:
    the retry never goes out (one call, one step), one ``TurnAborted``, no error
    event and no ``TurnComplete``, the stored turn ``aborted``."""
    backend.script(Fault.http(503, retry_after=30))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())
    backing_off = when(agent, ModelStepCompleted, outcome="retrying")

    turn = asyncio.create_task(agent.run_turn("What is the weather in Leeds?"))
    await asyncio.wait_for(backing_off.wait(), HANG)
    [retrying] = agent.events_of(ModelStepCompleted)
    assert (retrying.error.retry_after, retrying.retry_in) == ("30", 30)  # it waits 30 s
    agent.interrupt()
    result = await asyncio.wait_for(turn, HANG)
    # The 30 s wait itself was cut short, not sat out.
    assert [end for delay, end in waits if delay == 30] == ["cancelled"]

    assert result.outcome == "aborted"
    assert len(log.model_calls) == 1  # the retry never went out
    assert len(agent.events_of(ModelStepStarted)) == 1
    assert [e.turn_id for e in agent.events_of(TurnAborted)] == [result.turn_id]
    assert agent.events_of(ErrorEvent) == agent.events_of(TurnComplete) == []
    assert agent.store.turn(result.turn_id).status == "aborted"
    invariants.assert_single_terminal_step(log)
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_an_interrupt_during_the_backoff_after_a_dropped_stream_cancels_the_retry(
    provider, backend, waits
):
    """Checks: a stream dropped after its 200, whose headers said ``retry-after: 30``,
    ends its step ``retrying`` with that ``retry_after`` on its error, and the agent
    waits the 30 s it asked for (the default backoff is far shorter); an interrupt in
    that wait aborts the turn at once: the retry never goes out (one model call, one
    step, no error, no answer)."""
    backend.script(Reply.text(ANSWER, fault=Fault.cut(after_events=3, retry_after=30)))
    agent = Agent(backend.config(provider))
    log = record(agent, backend.runlog())
    backing_off = when(agent, ModelStepCompleted, outcome="retrying")

    turn = asyncio.create_task(agent.run_turn("What is the weather in Leeds?"))
    await asyncio.wait_for(backing_off.wait(), HANG)
    [retrying] = agent.events_of(ModelStepCompleted)
    assert (retrying.error.kind, retrying.error.retry_after) == ("provider", "30")
    assert retrying.retry_in == 30  # the stream's retry-after, not the 0.01 s backoff
    agent.interrupt()
    # Not cancelled, the wait would end in 30 s and a second call go out.
    result = await asyncio.wait_for(turn, HANG)
    assert [end for delay, end in waits if delay == 30] == ["cancelled"]

    assert result.outcome == "aborted"
    assert [call.outcome for call in log.model_calls] == ["cut"]
    assert len(agent.events_of(ModelStepStarted)) == 1
    assert [e.turn_id for e in agent.events_of(TurnAborted)] == [result.turn_id]
    assert agent.events_of(ErrorEvent) == agent.events_of(TurnComplete) == []
    assert agent.store.turn(result.turn_id).status == "aborted"
    invariants.assert_single_terminal_step(log)
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("held", ["before the first byte", "after some text"])
async def test_an_interrupt_while_the_model_request_is_blocked_ends_its_step_once_as_interrupted(
    provider: str, held: str, blocking_model: FakeModel
):
    """Checks: the model call is held (before its first byte, or after some text)
    and the user interrupts: the turn is aborted, its one step ends exactly once,
    ``interrupted``, with the start's id; the agent hangs up on the held call (no
    dangling intent in the write-ahead log); what the user saw is kept and nothing
    else; the next turn answers."""
    if held == "after some text":  # this call has begun to play its reply
        blocking_model.block(after_events=AFTER_SOME_TEXT[provider])
        blocking_model.script(Reply.text(ANSWER))
    blocking_model.script(Reply.text(ANSWER))  # for the next turn
    agent = Agent(SessionConfig(provider=provider))  # type: ignore[arg-type]
    log = record(agent, RunLog.from_fake(blocking_model))

    turn = asyncio.create_task(agent.run_turn("What is the weather in Leeds?"))
    assert await blocking_model.wait_blocked_async(timeout=HANG)
    agent.interrupt()
    result = await asyncio.wait_for(turn, HANG)

    assert result.outcome == "aborted"
    [started] = agent.events_of(ModelStepStarted)
    [ended] = agent.events_of(ModelStepCompleted)
    assert (ended.step_id, ended.outcome) == (started.step_id, "interrupted")
    [call] = blocking_model.log
    assert call.outcome == "cancelled"  # the agent hung up on the held request
    invariants.assert_single_terminal_step(log)
    # The call is over, not lost: the write-ahead log says so, and resume has nothing to do.
    assert agent.store.dangling_intents(agent.session_id) == []
    shown = "".join(delta.text for delta in agent.events_of(MessageDelta))
    saved = [m.text for m in agent.store.messages(agent.session_id) if m.role == "assistant"]
    assert saved == ([shown] if shown else [])  # what the user saw is kept, nothing else
    if held == "after some text":
        assert shown == PARTIAL

    blocking_model.release()
    following = await agent.run_turn("And tomorrow?")
    assert (following.outcome, following.text) == ("completed", ANSWER)


@pytest.mark.anyio
async def test_an_interrupt_in_a_tool_answers_every_call_of_the_step(scripted_model: FakeModel):
    """The model asked for two tools; the user interrupts the first. Both calls still
    get a result (a request with an unanswered tool call is invalid: the session could
    not go on), both tools end ``interrupted``, and the next turn sends the results."""
    running = asyncio.Event()

    async def slow_weather(city: str) -> str:
        running.set()
        await asyncio.sleep(30)
        return "never"

    two_calls = Reply(
        parts=[
            ToolCall(name="weather", args={"city": "Leeds"}, id="call_leeds"),
            ToolCall(name="weather", args={"city": "York"}, id="call_york"),
        ]
    )
    scripted_model.script(two_calls, Reply.text(ANSWER))
    tool = Tool("weather", "Current weather in a city.", CITY, slow_weather)
    agent = Agent(SessionConfig(), tools=[tool])
    log = record(agent, RunLog.from_fake(scripted_model))

    turn = asyncio.create_task(agent.run_turn("What is the weather in Leeds and York?"))
    await asyncio.wait_for(running.wait(), HANG)
    agent.interrupt()
    result = await asyncio.wait_for(turn, HANG)

    assert result.outcome == "aborted"
    ends = {end.call_id: end.outcome for end in agent.events_of(ToolEnd)}
    assert ends == {"call_leeds": "interrupted", "call_york": "interrupted"}
    invariants.assert_every_tool_call_answered(log)
    following = await agent.run_turn("And now?")
    assert following.outcome == "completed"
    sent = scripted_model.requests[-1].raw["messages"]
    results = [block for m in sent if isinstance(m["content"], list) for block in m["content"]]
    answered = {b["tool_use_id"] for b in results if b["type"] == "tool_result"}
    assert answered == {"call_leeds", "call_york"}
