"""The frameworks' own MCP clients, unmodified, against a fake tool server: pydantic-ai's
``MCPToolset`` (which replaced ``MCPServerStreamableHTTP`` / ``MCPServerStdio`` in v2),
and openai-agents' ``MCPServerStreamableHttp`` / ``MCPServerStdio``, each over Streamable
HTTP (in-process) and over stdio (a spawned relay), with the model from a fake model.

(langchain-mcp-adapters needs mcp 1: tests/mcp/mcp1 runs it on the fake, in the mcp1
nox session.)"""

from __future__ import annotations

import pytest

from pytest_agentreplay import FakeModel, Reply
from pytest_agentreplay.mcp.fake import FakeToolServer

from ._client import CITY
from ._frameworks import openai_agents_server, pydantic_ai_toolset

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("framework_env")]


def _weather(tools: FakeToolServer) -> None:
    tools.tool(
        "weather",
        input_schema=CITY,
        description="The weather in a city.",
        respond=lambda args: f"Rain in {args['city']}.",
    )


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_pydantic_ai_calls_a_scripted_tool(
    transport: str, scripted_model: FakeModel, scripted_tools: FakeToolServer
) -> None:
    from pydantic_ai import Agent

    _weather(scripted_tools)
    scripted_model.script(Reply.tool_call("weather", {"city": "Leeds"}), "Rain, then.")
    agent = Agent(
        "anthropic:claude-sonnet-4-6", toolsets=[pydantic_ai_toolset(scripted_tools, transport)]
    )

    result = await agent.run("Weather in Leeds?")

    assert result.output == "Rain, then."
    [call] = scripted_tools.log
    assert (call.tool, call.arguments, call.outcome, call.transport) == (
        "weather",
        {"city": "Leeds"},
        "completed",
        transport,
    )
    [tool] = scripted_model.requests[0].tools
    assert (tool.name, tool.parameters["required"]) == ("weather", ["city"])
    [answer] = scripted_model.requests[1].tool_results
    assert "Rain in Leeds." in str(answer.content)


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_openai_agents_calls_a_scripted_tool(
    transport: str, scripted_model: FakeModel, scripted_tools: FakeToolServer
) -> None:
    from agents import Agent, Runner

    _weather(scripted_tools)
    scripted_model.script(Reply.tool_call("weather", {"city": "York"}), "Rain, then.")
    async with openai_agents_server(scripted_tools, transport) as server:
        agent = Agent(name="weatherbot", model="gpt-4o", mcp_servers=[server])
        result = await Runner.run(agent, "Weather in York?")

    assert result.final_output == "Rain, then."
    [call] = scripted_tools.log
    assert (call.tool, call.arguments, call.outcome, call.transport) == (
        "weather",
        {"city": "York"},
        "completed",
        transport,
    )
    [answer] = scripted_model.requests[1].tool_results
    assert "Rain in York." in str(answer.content)
