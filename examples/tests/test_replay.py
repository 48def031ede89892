"""Scenario 12: replaying a recorded turn.

A finished turn is in the store: its answer and its usage. Replaying it — here
from a fresh agent on the same database, as after a restart — gives the same
result without a model call and without a single event: no delta, no step, no
tool event reaches a listener again.

The same holds where replay is not a read of the store but the runtime going on from
its write-ahead log: a process that died after a streamed answer was recorded, before
its turn ended, is resumed from that completion — ``resume()`` must answer from the
log, not ask the model again.
"""

from __future__ import annotations

import pytest
from agent import (
    Agent,
    FinalMessage,
    MessageDelta,
    ModelStepCompleted,
    ModelStepStarted,
    Store,
    TurnComplete,
)
from agent.testing import record
from agent.tools import WEATHER

from pytest_agentreplay import Reply, Usage

QUESTION = "What is the weather in Leeds?"
ANSWER = "It is sunny in Leeds, 21 °C."


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_replaying_a_recorded_streamed_turn_makes_no_call_and_fires_no_event(
    provider, backend, tmp_path
):
    """Checks: a turn of two steps (a tool call, then the answer) was streamed and
    stored; a fresh agent on the same database replays it: the same result (answer,
    usage summed over both steps with the cache-read share, provider, model), no
    model call and no event to any listener."""
    backend.script(
        Reply.tool_call(
            "weather", {"city": "Leeds"}, usage=Usage(input_tokens=30, output_tokens=9)
        ),
        Reply.text(
            ANSWER, usage=Usage(input_tokens=45, output_tokens=10, cache_read_input_tokens=30)
        ),
    )
    database = str(tmp_path / "agent.db")
    agent = Agent(backend.config(provider), store=Store(database), tools=[WEATHER])
    log = record(agent, backend.runlog())
    recorded = await agent.run_turn(QUESTION)
    [done] = agent.events_of(TurnComplete)
    assert agent.events_of(MessageDelta), "the recorded turn was streamed"
    calls = len(log.model_calls)

    restarted = Agent(backend.config(provider), store=Store(database), session_id=agent.session_id)
    heard: list[object] = []
    restarted.subscribe(heard.append)
    replayed = restarted.replay_turn(recorded.turn_id)

    assert replayed == recorded  # the same answer, usage, provider and model
    assert (replayed.text, replayed.usage) == (ANSWER, done.usage)
    assert (done.usage.input_tokens, done.usage.output_tokens) == (75, 19)  # both steps
    assert done.usage.cache_read_tokens == 30  # the prompt cache's share is kept too
    assert heard == []  # no per-event callback
    assert len(log.model_calls) == calls == 2  # no model call
    backend.assert_offline()


class Crash(BaseException):
    """The process dies: a ``BaseException``, so no ``except Exception`` handles it."""


def crash_once_the_answer_is_recorded(event: object) -> None:
    """Die right after the step that answers ends: its completion and the answer are
    in the store, the turn has not ended."""
    if isinstance(event, ModelStepCompleted) and event.outcome == "completed" and event.end_turn:
        raise Crash


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_resuming_from_a_completed_call_replays_it_without_a_model_call(
    provider, backend, tmp_path
):
    """Checks: a streamed answer is recorded (the write-ahead log ends with its
    completion) and the process dies before the turn ends. A fresh agent's
    ``resume()`` goes on from the log: the same answer and usage as recorded, no
    model call (one request in all, as the server saw), no delta and no step event
    (the ticker never fires), exactly one completion in the log, nothing pending."""
    backend.script(Reply.text(ANSWER, usage=Usage(input_tokens=45, output_tokens=10)))
    database = str(tmp_path / "agent.db")
    agent = Agent(backend.config(provider), store=Store(database))
    log = record(agent, backend.runlog())
    agent.subscribe(crash_once_the_answer_is_recorded)
    with pytest.raises(Crash):
        await agent.run_turn(QUESTION)
    assert agent.events_of(MessageDelta), "the live call streamed"
    [recorded] = agent.events_of(ModelStepCompleted)
    [turn_id] = agent.store.pending_turns(agent.session_id)
    assert [r.entry for r in agent.store.wal(agent.session_id)] == ["intent", "completion"]

    restarted = Agent(backend.config(provider), store=Store(database), session_id=agent.session_id)
    heard: list[object] = []
    restarted.subscribe(heard.append)
    [replayed] = await restarted.resume()

    assert (replayed.turn_id, replayed.outcome) == (turn_id, "completed")
    assert (replayed.text, replayed.usage) == (recorded.text, recorded.usage)
    assert replayed.text == ANSWER
    assert [type(event) for event in heard] == [FinalMessage, TurnComplete]
    assert restarted.events_of(MessageDelta) == restarted.events_of(ModelStepStarted) == []
    assert len(log.model_calls) == 1  # the live call; the replay made none
    wal = [r.entry for r in restarted.store.wal(agent.session_id)]
    assert wal == ["intent", "completion"]
    assert restarted.store.pending_turns(agent.session_id) == []
    saved = [(m.role, m.text) for m in restarted.store.messages(agent.session_id)]
    assert saved == [("user", QUESTION), ("assistant", ANSWER)]
    backend.assert_offline()
