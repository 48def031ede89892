"""Scenario 1: a one-step turn, event by event.

The smallest turn: one model call that answers. Every event of the step names the
same session, turn and step; the step's end repeats its start time and provider and
carries the usage (prompt-cache reads and writes included), the stop reason, the
tool calls it asked for (none), that it ends the turn, the text of the reply and its
one content part, and the step's diagnostics (the provider, its prompt cache — what
it can do, what this call did, the context epoch and why it would have changed —
and no cost estimate); the final message and the saved answer name the session, turn
and step that produced them.
"""

from __future__ import annotations

import pytest
from agent import (
    Agent,
    FinalMessage,
    ModelStepCompleted,
    ModelStepStarted,
    PromptCache,
    SessionConfig,
    StepContent,
    StepDiagnostics,
    Tool,
    TurnComplete,
)
from agent import Usage as AgentUsage

from pytest_agentreplay import Reply, ToolCall, Usage

ANSWER = "It is sunny in Leeds."
USAGE = Usage(
    input_tokens=12, output_tokens=6, cache_read_input_tokens=4, cache_creation_input_tokens=3
)
# OpenAI reports cached prompt tokens, but has no cache writes to report.
EXPECTED_USAGE = {
    "anthropic": AgentUsage(12, 6, cache_read_tokens=4, cache_write_tokens=3),
    "openai": AgentUsage(12, 6, cache_read_tokens=4),
}
STOP = {"anthropic": "end_turn", "openai": "stop"}
# Anthropic caches where the request asks (cache_control), OpenAI by itself.
CACHING = {"anthropic": "explicit", "openai": "automatic"}


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_one_step_turn_reports_one_step_with_its_ids_usage_and_text(provider, backend):
    """Checks: one step at index 0 whose start and end name the session given and
    the same turn and step; the end repeats the start's time and the provider; the
    outcome holds the usage with cache reads/writes, the stop reason, no tool-call
    ids, that it ends the turn, and one content part (output 0, part 0, the final
    answer, with the text and no annotations); the diagnostics name the provider, its
    prompt cache's capability, a hit (the usage read from the cache), context epoch 0
    with no rewrite reason, and no cost estimate; the final message names the
    session, turn and step."""
    backend.script(Reply.text(ANSWER, usage=USAGE))
    agent = Agent(backend.config(provider), session_id="step-lifecycle")

    result = await agent.run_turn("What is the weather in Leeds?")

    [started] = agent.events_of(ModelStepStarted)
    [completed] = agent.events_of(ModelStepCompleted)
    expected = ("step-lifecycle", result.turn_id, started.step_id, 0)
    for event in (started, completed):
        assert (event.session_id, event.turn_id, event.step_id, event.step_index) == expected
    assert started.at > 0
    assert completed.started_at == started.at
    assert completed.at >= completed.started_at
    assert started.provider == completed.provider == provider
    assert completed.outcome == "completed"
    assert completed.usage == EXPECTED_USAGE[provider]
    assert completed.stop_reason == STOP[provider]
    assert completed.tool_call_ids == ()
    assert completed.citations == ()  # no web source cited
    assert completed.text == ANSWER
    assert completed.end_turn is True
    assert completed.content == (StepContent(0, 0, "final_answer", ANSWER, ()),)
    assert completed.diagnostics == StepDiagnostics(
        provider=provider,
        prompt_cache=PromptCache(CACHING[provider], "hit", context_epoch=0, rewrite_reasons=()),
        estimated_cost_microusd=None,
    )

    [final] = agent.events_of(FinalMessage)
    assert (final.session_id, final.turn_id, final.step_id) == expected[:3]
    *_, answer = agent.store.messages(agent.session_id)
    assert (answer.session_id, answer.turn_id, answer.step_id) == expected[:3]
    assert (answer.role, answer.text) == ("assistant", ANSWER)
    [done] = agent.events_of(TurnComplete)
    assert (done.text, done.usage, done.provider) == (ANSWER, completed.usage, provider)
    backend.assert_offline()


async def _weather(city: str) -> str:
    return f"Sunny in {city}."


WEATHER = Tool(
    "get_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    _weather,
)


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_step_that_calls_tools_names_their_ids_in_its_outcome(provider, backend):
    """Checks: the outcome of a step that asks for tools lists their call ids, in
    order, with the tool-use stop reason, does not end the turn and has no text part;
    the step that answers lists none and ends the turn. The second request extends the
    first (the answer and the tool results appended): the same context epoch, no
    rewrite, and a prompt cache that saw no cache tokens either time (a ``miss``)."""
    backend.script(
        Reply(
            parts=[
                ToolCall(id="call_leeds", name="get_weather", args={"city": "Leeds"}),
                ToolCall(id="call_york", name="get_weather", args={"city": "York"}),
            ]
        ),
        ANSWER,
    )
    agent = Agent(backend.config(provider), tools=[WEATHER])

    await agent.run_turn("Weather in Leeds and York?")

    first, second = agent.events_of(ModelStepCompleted)
    assert first.tool_call_ids == ("call_leeds", "call_york")
    assert first.stop_reason == {"anthropic": "tool_use", "openai": "tool_calls"}[provider]
    assert (second.tool_call_ids, second.stop_reason) == ((), STOP[provider])
    assert (first.end_turn, first.content) == (False, ())
    assert (second.end_turn, second.content) == (
        True,
        (StepContent(0, 0, "final_answer", ANSWER),),
    )
    for step in (first, second):
        assert step.diagnostics is not None
        assert step.diagnostics.prompt_cache == PromptCache(CACHING[provider], "miss", 0, ())
    backend.assert_offline()


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_text_before_a_tool_call_is_commentary(provider, scripted_model):
    """Checks: a step that says something and then calls a tool: its text is one part,
    ``commentary`` (the step does not end the turn), at the index of its block."""
    scripted_model.script(
        Reply.tool_call("get_weather", {"city": "Leeds"}, text="Let me look."), ANSWER
    )
    agent = Agent(SessionConfig(provider=provider), tools=[WEATHER])

    await agent.run_turn("Weather in Leeds?")

    first, _ = agent.events_of(ModelStepCompleted)
    assert (first.end_turn, first.content) == (
        False,
        (StepContent(0, 0, "commentary", "Let me look."),),
    )
