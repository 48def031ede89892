"""Real agent frameworks run unmodified against the fakes: no http_client, no base_url."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator

import pytest

from pytest_agentreplay import FakeModel, Reply, Usage


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic-key")
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")


@pytest.fixture(autouse=True)
def _close_default_loop() -> Iterator[None]:
    """The frameworks' ``run_sync`` leave the default event loop they made open, on
    purpose (they reuse it); close it so its ResourceWarning does not land in a later test."""
    yield
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            loop = asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:  # no default loop was made
        return
    if not loop.is_running():
        loop.close()
        asyncio.set_event_loop(None)


def weather(city: str) -> str:
    """Weather in a city."""
    return f"sunny in {city}"


@pytest.mark.parametrize(
    "model",
    [
        "anthropic:claude-sonnet-4-6",
        "openai-chat:gpt-4o",
        "openai-responses:gpt-4o",
    ],
)
def test_pydantic_ai_agent_runs_a_tool_loop(model: str, scripted_model: FakeModel) -> None:
    from pydantic_ai import Agent

    scripted_model.script(
        Reply.tool_call(
            "weather", {"city": "Leeds"}, usage=Usage(input_tokens=20, output_tokens=5)
        ),
        Reply.text("It is sunny in Leeds.", usage=Usage(input_tokens=30, output_tokens=7)),
    )
    agent = Agent(model, tools=[weather], name="weatherbot")
    result = agent.run_sync("Weather in Leeds?")
    assert result.output == "It is sunny in Leeds."
    assert result.usage.input_tokens == 50
    assert result.usage.output_tokens == 12
    [result_part] = scripted_model.requests[1].tool_results
    assert result_part.content == "sunny in Leeds"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "model", ["anthropic:claude-sonnet-4-6", "openai-chat:gpt-4o", "openai-responses:gpt-4o"]
)
async def test_pydantic_ai_streams_text(model: str, scripted_model: FakeModel) -> None:
    from pydantic_ai import Agent

    scripted_model.script(Reply.text("Streaming, word by word, to the agent."))
    agent = Agent(model)
    async with agent.run_stream("Say something") as run:
        pieces = [text async for text in run.stream_text(delta=True, debounce_by=None)]
    assert "".join(pieces) == "Streaming, word by word, to the agent."
    assert len(pieces) > 1
    assert scripted_model.log[0].streaming is True


def test_openai_agents_runner_with_a_function_tool(scripted_model: FakeModel) -> None:
    from agents import Agent, Runner, function_tool, set_tracing_disabled

    set_tracing_disabled(True)  # tracing would POST to api.openai.com/v1/traces/ingest

    @function_tool
    def weather(city: str) -> str:
        """Weather in a city."""
        return f"sunny in {city}"

    scripted_model.script(
        Reply.tool_call("weather", {"city": "Leeds"}), Reply.text("Sunny in Leeds.")
    )
    agent = Agent(name="weatherbot", instructions="Be brief.", tools=[weather], model="gpt-4o")
    result = Runner.run_sync(agent, "Weather in Leeds?")
    assert result.final_output == "Sunny in Leeds."
    first, second = scripted_model.requests
    assert first.provider == "openai_responses"
    assert first.system == "Be brief."
    assert [t.name for t in first.tools] == ["weather"]
    assert second.tool_results[0].content == "sunny in Leeds"


@pytest.mark.anyio
async def test_openai_agents_streamed_run(scripted_model: FakeModel) -> None:
    from agents import Agent, Runner, set_tracing_disabled

    set_tracing_disabled(True)
    scripted_model.script(Reply.text("Hello from a streamed run."))
    agent = Agent(name="bot", model="gpt-4o")
    run = Runner.run_streamed(agent, "hi")
    deltas = [
        event.data.delta
        async for event in run.stream_events()
        if event.type == "raw_response_event" and event.data.type == "response.output_text.delta"
    ]
    assert "".join(deltas) == "Hello from a streamed run."
    assert run.final_output == "Hello from a streamed run."
