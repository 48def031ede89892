"""Issue 21, G9a: the user interrupts a turn while the provider runs a web search.

A provider-side tool (Anthropic's ``server_tool_use`` web search) is the provider's
to run: the agent only shows it (``ServerToolBegin`` / ``ServerToolEnd``) and runs
nothing of its own. When the user presses stop while the search is under way, the
search still ends exactly once — ``interrupted``, with its call id — in the step
that began it, that step ends once, and the turn is aborted.
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
    ServerToolBegin,
    ServerToolEnd,
    SessionConfig,
    ToolBegin,
    ToolEnd,
    TurnAborted,
    TurnComplete,
)
from agent.testing import record

from pytest_agentreplay import FakeModel, Reply, SearchResult, ServerToolCall, Text, invariants
from pytest_agentreplay.runlog import RunLog

INTRO = "Let me look that up. "
ANSWER = "Rain is expected in Leeds tomorrow."
SEARCH = ServerToolCall.web_search(
    "Leeds rain tomorrow",
    [SearchResult(url="https://met.example/leeds", title="Met: Leeds")],
    id="srvtoolu_leeds",
)
# Anthropic's events before the hold: message_start, the text block (start, ping,
# six deltas, stop), then the search's server_tool_use block start and the first
# pieces of its input. The search has begun; its result block has not come.
IN_THE_SEARCH = 13


@pytest.mark.anyio
async def test_a_user_interrupt_inside_a_provider_side_search_ends_the_search_once(
    blocking_model: FakeModel,
):
    """Checks: with the reply held inside its web search (after the
    ``server_tool_use`` block began, before its result), an interrupt aborts the turn;
    exactly one ``ServerToolEnd``, ``interrupted``, with the search's call id and the
    step that began it; no ``ToolBegin`` / ``ToolEnd`` (the agent ran no tool of its
    own); one terminal step, ``interrupted``; no error, no answer; the text shown is
    kept, no intent dangles, and the next turn is answered."""
    blocking_model.block(after_events=IN_THE_SEARCH)
    blocking_model.script(Reply(parts=[Text(text=INTRO), SEARCH, Text(text=ANSWER)]))
    blocking_model.script(Reply.text(ANSWER))  # for the next turn
    agent = Agent(SessionConfig(provider="anthropic"))
    log = record(agent, RunLog.from_fake(blocking_model))
    searching = asyncio.Event()
    agent.subscribe(lambda event: isinstance(event, ServerToolBegin) and searching.set())

    turn = asyncio.create_task(agent.run_turn("Will it rain in Leeds tomorrow?"))
    assert await blocking_model.wait_blocked_async(timeout=120)  # a hang fails (no speed bound)
    await searching.wait()  # the agent has seen the search begin
    agent.interrupt()
    result = await turn

    assert result.outcome == "aborted"
    [started] = agent.events_of(ModelStepStarted)
    [ended] = agent.events_of(ModelStepCompleted)
    assert (ended.step_id, ended.outcome) == (started.step_id, "interrupted")
    [begin] = agent.events_of(ServerToolBegin)
    assert (begin.call_id, begin.name, begin.step_id) == (
        "srvtoolu_leeds",
        "web_search",
        started.step_id,
    )
    [end] = agent.events_of(ServerToolEnd)
    assert (end.call_id, end.name, end.step_id, end.outcome) == (
        "srvtoolu_leeds",
        "web_search",
        started.step_id,
        "interrupted",
    )
    assert agent.events_of(ToolBegin) == agent.events_of(ToolEnd) == []
    assert [e.turn_id for e in agent.events_of(TurnAborted)] == [result.turn_id]
    assert agent.events_of(ErrorEvent) == agent.events_of(TurnComplete) == []
    [call] = blocking_model.log
    assert call.outcome == "cancelled"  # the agent hung up on the held reply
    invariants.assert_single_terminal_step(log)
    invariants.assert_every_tool_call_answered(log)  # the search began, and ended once
    assert agent.store.dangling_intents(agent.session_id) == []
    shown = "".join(delta.text for delta in agent.events_of(MessageDelta))
    assert shown == INTRO
    saved = [m.text for m in agent.store.messages(agent.session_id) if m.role == "assistant"]
    assert saved == [INTRO]  # what the user saw is kept, nothing else

    blocking_model.release()
    following = await agent.run_turn("And the day after?")
    assert (following.outcome, following.text) == ("completed", ANSWER)
