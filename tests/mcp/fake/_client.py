"""The mcp SDK's own client session on a fake tool server, over either transport."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from pytest_agentreplay.mcp.fake import FakeToolServer

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
"""The input schema of the tests' weather tools: one required city."""


@asynccontextmanager
async def session(tools: FakeToolServer, transport: str) -> AsyncIterator[ClientSession]:
    """An initialized session with ``tools`` over ``"http"`` (in-process) or ``"stdio"``."""
    if transport == "http":
        streams = streamable_http_client(tools.url)
    else:
        command = tools.stdio_command()
        streams = stdio_client(
            StdioServerParameters(command=command.command, args=list(command.args))
        )
    async with streams as (read, write, *_), ClientSession(read, write) as client:
        await client.initialize()
        yield client
