"""The frameworks' MCP clients on a fake tool server, over either transport."""

from __future__ import annotations

from typing import Any

from pytest_agentreplay.mcp.fake import FakeToolServer


def pydantic_ai_toolset(tools: FakeToolServer, transport: str) -> Any:
    """pydantic-ai's ``MCPToolset`` at the fake's URL, or spawning its stdio command."""
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai.mcp import MCPToolset

    if transport == "http":
        return MCPToolset(tools.url)
    command = tools.stdio_command()
    return MCPToolset(StdioTransport(command.command, list(command.args)))


def openai_agents_server(tools: FakeToolServer, transport: str) -> Any:
    """openai-agents' ``MCPServerStreamableHttp`` or ``MCPServerStdio`` on the fake."""
    from agents.mcp import MCPServerStdio, MCPServerStreamableHttp

    if transport == "http":
        return MCPServerStreamableHttp(params={"url": tools.url}, name="w")
    return MCPServerStdio(params=tools.stdio_command().params(), name="w")
