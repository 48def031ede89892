"""Scenario 1: a one-step turn, event by event.

The smallest turn: one model call that answers. Every event of the step names the
same session, turn and step; the step's end carries the usage and the text of the
reply; the saved answer names the step that produced it.
"""

from __future__ import annotations

import pytest
from agent import Agent, FinalMessage, ModelStepCompleted, ModelStepStarted, TurnComplete

from pytest_agentreplay import Reply, Usage

ANSWER = "It is sunny in Leeds."


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_one_step_turn_reports_one_step_with_its_ids_usage_and_text(provider, backend):
    backend.script(Reply.text(ANSWER, usage=Usage(input_tokens=12, output_tokens=6)))
    agent = Agent(backend.config(provider))

    result = await agent.run_turn("What is the weather in Leeds?")

    [started] = agent.events_of(ModelStepStarted)
    [completed] = agent.events_of(ModelStepCompleted)
    expected = (agent.session_id, result.turn_id, started.step_id, 0)
    for event in (started, completed):
        assert (event.session_id, event.turn_id, event.step_id, event.step_index) == expected
    assert started.at <= completed.at
    assert completed.outcome == "completed"
    assert (completed.usage.input_tokens, completed.usage.output_tokens) == (12, 6)
    assert completed.text == ANSWER

    [final] = agent.events_of(FinalMessage)
    *_, answer = agent.store.messages(agent.session_id)
    assert final.step_id == answer.step_id == started.step_id
    assert (answer.role, answer.text) == ("assistant", ANSWER)
    [done] = agent.events_of(TurnComplete)
    assert (done.text, done.usage, done.provider) == (ANSWER, completed.usage, provider)
    backend.assert_offline()
