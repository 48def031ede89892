"""Scenario 12: replaying a recorded turn.

A finished turn is in the store: its answer and its usage. Replaying it — here
from a fresh agent on the same database, as after a restart — gives the same
result without a model call and without a single event: no delta, no step, no
tool event reaches a listener again.
"""

from __future__ import annotations

import pytest
from agent import Agent, MessageDelta, Store, TurnComplete
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
