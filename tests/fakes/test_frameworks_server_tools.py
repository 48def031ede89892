"""A provider-side web search scripted on a fake, as pydantic-ai and openai-agents see it,
and as their run logs record it: apart from the tools the agent runs."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator

import pytest

from pytest_agentreplay import Citation, FakeModel, Reply, SearchResult, ServerToolCall, Text
from pytest_agentreplay.invariants import assert_every_tool_call_answered
from pytest_agentreplay.runlog import RunLog, ServerToolCalled, ServerToolResulted, ToolCalled

LEEDS = "https://met.example/leeds"


def searched(search_id: str) -> Reply:
    return Reply(
        parts=[
            ServerToolCall.web_search(
                "weather in Leeds", [SearchResult(url=LEEDS, title="Leeds")], id=search_id
            ),
            Text(text="Rain after noon.", citations=[Citation(url=LEEDS, title="Leeds")]),
        ]
    )


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic-key")
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")


@pytest.fixture(autouse=True)
def _close_default_loop() -> Iterator[None]:
    """``run_sync`` leaves its default event loop open; close it (see test_frameworks)."""
    yield
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            loop = asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:
        return
    if not loop.is_running():
        loop.close()
        asyncio.set_event_loop(None)


@pytest.mark.parametrize(
    ("model", "search_id"),
    [("anthropic:claude-sonnet-4-6", "srvtoolu_1"), ("openai-responses:gpt-4o", "ws_1")],
)
def test_pydantic_ai_sees_a_builtin_search_and_the_log_keeps_it_apart(
    model: str, search_id: str, scripted_model: FakeModel
) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import WebSearch

    scripted_model.script(searched(search_id))
    agent = Agent(model, capabilities=[WebSearch()])
    result = agent.run_sync("Weather in Leeds?")
    assert result.output == "Rain after noon."
    kinds = [p.part_kind for m in result.all_messages() for p in getattr(m, "parts", [])]
    assert "builtin-tool-call" in kinds
    assert "builtin-tool-return" in kinds
    log = RunLog.from_pydantic_ai(result.all_messages())
    [call] = log.of(ServerToolCalled)
    assert (call.call_id, call.name) == (search_id, "web_search")
    assert call.args.get("query") == "weather in Leeds"
    [end] = log.of(ServerToolResulted)
    assert (end.call_id, end.outcome) == (search_id, "completed")
    assert log.of(ToolCalled) == []  # the agent started no tool of its own
    assert_every_tool_call_answered(log)


def test_openai_agents_sees_a_hosted_search_and_the_log_keeps_it_apart(
    scripted_model: FakeModel,
) -> None:
    from agents import Agent, Runner, WebSearchTool, set_tracing_disabled

    set_tracing_disabled(True)
    scripted_model.script(searched("ws_9"))
    agent = Agent(name="bot", model="gpt-4o", tools=[WebSearchTool()])
    result = Runner.run_sync(agent, "Weather in Leeds?")
    assert result.final_output == "Rain after noon."
    log = RunLog.from_openai_agents(result)
    [call] = log.of(ServerToolCalled)
    assert (call.call_id, call.name, call.args.get("query")) == (
        "ws_9",
        "web_search",
        "weather in Leeds",
    )
    assert [(e.call_id, e.outcome) for e in log.of(ServerToolResulted)] == [("ws_9", "completed")]
    assert log.of(ToolCalled) == []
    assert_every_tool_call_answered(log)


@pytest.mark.anyio
async def test_openai_agents_stream_logs_the_search_begin_and_end(
    scripted_model: FakeModel,
) -> None:
    from agents import Agent, Runner, WebSearchTool, set_tracing_disabled

    set_tracing_disabled(True)
    scripted_model.script(searched("ws_7"))
    agent = Agent(name="bot", model="gpt-4o", tools=[WebSearchTool()])
    log = RunLog()
    run = Runner.run_streamed(agent, "Weather in Leeds?")
    async for event in run.stream_events():
        log.feed_openai_agents(event)
    assert [(e.event, e.call_id) for e in log.entries if "server_tool" in e.event] == [
        ("server_tool_call", "ws_7"),
        ("server_tool_result", "ws_7"),
    ]
    assert log.of(ToolCalled) == []
    assert_every_tool_call_answered(log)
