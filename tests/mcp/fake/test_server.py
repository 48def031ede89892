"""A fake tool server speaks MCP to the SDK's own client: tools listed with their schemas,
scripted answers in order (values, structured objects, functions, results), each call
logged with its arguments and outcome, over Streamable HTTP and over stdio alike."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import pytest
from mcp import types

from pytest_agentreplay.mcp.fake import FakeToolServer

from ._client import CITY, session

pytestmark = pytest.mark.anyio

FORECAST = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "array", "items": {"type": "number"}},
    },
    "required": ["city", "days"],
}

TRANSPORTS = ["http", "stdio"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_tools_are_listed_with_their_schemas(
    transport: str, scripted_tools: FakeToolServer
) -> None:
    scripted_tools.tool("weather", input_schema=CITY, description="Weather now.")
    scripted_tools.tool("forecast", input_schema=CITY, output_schema=FORECAST)

    async with session(scripted_tools, transport) as client:
        listed = (await client.list_tools()).tools

    assert [(t.name, t.input_schema, t.description, t.output_schema) for t in listed] == [
        ("weather", CITY, "Weather now.", None),
        ("forecast", CITY, None, FORECAST),
    ]
    assert scripted_tools.log == []  # listing is no tool call


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_scripted_answers_are_served_in_order_and_logged(
    transport: str, scripted_tools: FakeToolServer
) -> None:
    structured = {"city": "Leeds", "days": [11.5, 9]}
    scripted_tools.tool("forecast", structured, input_schema=CITY, output_schema=FORECAST)
    scripted_tools.tool(
        "weather",
        "Rain.",
        lambda args: f"Sun in {args['city']}.",
        types.CallToolResult(content=[types.TextContent(type="text", text="As built.")]),
        input_schema=CITY,
    )

    async with session(scripted_tools, transport) as client:
        forecast = await client.call_tool("forecast", {"city": "Leeds"})
        texts = [
            (await client.call_tool("weather", {"city": city})).content[0].text
            for city in ("Leeds", "York", "Hull")
        ]

    assert forecast.structured_content == structured
    assert json.loads(forecast.content[0].text) == structured
    assert texts == ["Rain.", "Sun in York.", "As built."]
    assert [(c.tool, c.arguments, c.outcome, c.transport) for c in scripted_tools.log] == [
        ("forecast", {"city": "Leeds"}, "completed", transport),
        ("weather", {"city": "Leeds"}, "completed", transport),
        ("weather", {"city": "York"}, "completed", transport),
        ("weather", {"city": "Hull"}, "completed", transport),
    ]
    assert [c.text for c in scripted_tools.log[1:]] == texts


async def test_an_async_function_answers_past_the_script(scripted_tools: FakeToolServer) -> None:
    async def look_up(args: dict[str, str]) -> str:
        await asyncio.sleep(0)
        return args["city"].upper()

    scripted_tools.tool("weather", "first", input_schema=CITY, respond=look_up)
    async with session(scripted_tools, "http") as client:
        texts = [(await client.call_tool("weather", {"city": c})).content[0].text for c in "ab"]
    assert texts == ["first", "B"]


@pytest.mark.parametrize("json_response", [False, True])
async def test_json_or_sse_responses(json_response: bool) -> None:
    tools = FakeToolServer(name="plain", json_response=json_response).tool("echo", respond=str)
    async with tools, session(tools, "http") as client:
        answer = await client.call_tool("echo", {"x": 1})
    assert answer.content[0].text == "{'x': 1}"
    assert tools.url == "http://plain.mcp.invalid/mcp"


async def test_a_real_port_for_other_processes(tool_server) -> None:  # type: ignore[no-untyped-def]
    tool_server.tools.tool("weather", "Rain.", input_schema=CITY)
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "weather", "arguments": {"city": "Leeds"}},
    }
    request = urllib.request.Request(
        tool_server.url,
        data=json.dumps(call).encode(),
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        },
    )
    # urllib is not a hooked client: this goes through the socket to the port.
    body = await asyncio.to_thread(lambda: urllib.request.urlopen(request).read().decode())
    assert tool_server.url.startswith("http://127.0.0.1:")
    [data] = [line[len("data: ") :] for line in body.splitlines() if line.startswith("data: ")]
    assert json.loads(data) == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"content": [{"type": "text", "text": "Rain."}], "isError": False},
    }
    assert tool_server.tools.log[0].request_id == 7


async def test_the_2026_probe_falls_back_to_the_handshake(scripted_tools: FakeToolServer) -> None:
    """The SDK's ``mode='auto'`` connect probes ``server/discover`` (2026-07-28) first;
    the fake answers "method not found", which sends it to ``initialize``."""
    from mcp import ClientSession
    from mcp.client._probe import negotiate_auto
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(scripted_tools.url) as (read, write, *_),
        ClientSession(read, write) as client,
    ):
        await negotiate_auto(client)
        assert client.initialize_result is not None
    methods = [m.get("method") for m in scripted_tools.requests]
    assert methods[:2] == ["server/discover", "initialize"]
