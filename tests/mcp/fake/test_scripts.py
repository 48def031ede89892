"""A wrong script fails where it is written, naming the tool and the field; a surprise at
run time (an unknown tool, a script that ran out, a function's answer of the wrong shape)
answers the client with an error and fails the test, as a fake model does."""

from __future__ import annotations

import datetime
import textwrap

import pytest
from mcp.shared.exceptions import MCPError

from pytest_agentreplay.mcp.fake import FakeToolServer, ToolScriptError

from ._client import CITY, session

pytest_plugins = ["pytester"]

FORECAST = {
    "type": "object",
    "properties": {"days": {"type": "array", "items": {"type": "number"}}},
    "required": ["days"],
}


def test_scripting_a_tool_the_server_does_not_have() -> None:
    tools = FakeToolServer(name="weather").tool("forecast", input_schema=CITY)
    with pytest.raises(
        ToolScriptError, match=r"weather: no tool 'wether' to script \(tools: 'forecast'\)"
    ):
        tools.script("wether", "Rain.")


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "string"}, 'tool \'weather\': input_schema must have "type": "object"'),
        ([], "tool 'weather': input_schema must be a JSON Schema object"),
        (
            {"type": "object", "properties": {"city": {"type": "strng"}}},
            r"tool 'weather': input_schema is not a valid JSON Schema at \$.properties.city.type",
        ),
    ],
)
def test_a_schema_that_is_no_schema(schema: object, message: str) -> None:
    with pytest.raises(ToolScriptError, match=message):
        FakeToolServer().tool("weather", input_schema=schema)  # type: ignore[arg-type]


def test_a_result_json_cannot_hold() -> None:
    when = datetime.date(2026, 12, 5)
    with pytest.raises(
        ToolScriptError, match=r"tool 'weather', result #2: \$.days\[1\].when is a date"
    ):
        FakeToolServer().tool("weather", "Rain.", {"days": [{}, {"when": when}]})


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (
            {"days": [1, "two"]},
            r"result #1: the result does not match the tool's output_schema: "
            r"\$.days\[1\]: 'two' is not of type 'number'",
        ),
        ({}, r"result #1: .*\$: 'days' is a required property"),
        ("Rain.", r"result #1: the tool has an output_schema, so its result must be a JSON object"),
    ],
)
def test_a_result_of_the_wrong_shape(result: object, message: str) -> None:
    with pytest.raises(ToolScriptError, match=message):
        FakeToolServer().tool("forecast", result, output_schema=FORECAST)


@pytest.mark.anyio
async def test_arguments_that_do_not_match_the_schema_are_a_tool_error(
    scripted_tools: FakeToolServer,
) -> None:
    """As the protocol asks since 2025-11-25: the model reads the error and corrects
    itself; the scripted answer waits for a valid call."""
    scripted_tools.tool("weather", "Rain.", input_schema=CITY)
    async with session(scripted_tools, "http") as client:
        bad = await client.call_tool("weather", {"town": "Leeds"})
        good = await client.call_tool("weather", {"city": "Leeds"})
    assert bad.is_error
    assert bad.content[0].text == (
        "Invalid arguments for tool 'weather': $: 'city' is a required property"
    )
    assert good.content[0].text == "Rain."
    assert [c.outcome for c in scripted_tools.log] == ["tool_error", "completed"]
    assert scripted_tools.problems == []


@pytest.mark.anyio
async def test_surprises_answer_the_client_and_fail_the_test() -> None:
    tools = FakeToolServer(name="weather").tool(
        "forecast", {"days": [1]}, lambda args: {"days": "soon"}, output_schema=FORECAST
    )
    async with tools, session(tools, "http") as client:
        with pytest.raises(MCPError, match="Unknown tool: wether"):
            await client.call_tool("wether", {})
        await client.call_tool("forecast", {})
        with pytest.raises(MCPError, match=r"result #2: the result does not match"):
            await client.call_tool("forecast", {})
        with pytest.raises(MCPError, match="no scripted result left for tool 'forecast'"):
            await client.call_tool("forecast", {"city": "York"})
        problems = tools.take_problems()
    assert [p.split(":")[0] for p in problems] == ["weather"] * 3
    assert (
        "received a call of tool 'wether', which it does not have (tools: 'forecast')"
        in problems[0]
    )
    assert "$.days: 'soon' is not of type 'array'" in problems[1]
    assert (
        "call #3 of tool 'forecast' after its script ran out (arguments {'city': 'York'})"
        in problems[2]
    )
    assert [c.outcome for c in tools.log] == ["rpc_error", "completed", "rpc_error", "rpc_error"]


def test_the_fixture_fails_a_test_for_what_its_tools_saw(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        textwrap.dedent(
            """
            import pytest
            from mcp import ClientSession
            from mcp.client.streamable_http import streamable_http_client

            @pytest.mark.anyio
            async def test_unused(scripted_tools):
                scripted_tools.tool("weather", "Rain.", "Sun.")
                async with streamable_http_client(scripted_tools.url) as (read, write, *_):
                    async with ClientSession(read, write) as client:
                        await client.initialize()
                        await client.call_tool("weather", {})

            @pytest.mark.anyio
            async def test_unknown(scripted_tools):
                async with streamable_http_client(scripted_tools.url) as (read, write, *_):
                    async with ClientSession(read, write) as client:
                        await client.initialize()
                        try:
                            await client.call_tool("nowhere", {})
                        except Exception:
                            pass  # swallowed by the agent: the fixture still fails the test

            @pytest.fixture
            def anyio_backend():
                return "asyncio"
            """
        )
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*tools: 1 scripted result(s) of tool 'weather' never requested:",
            "*  - 'Sun.'",
            "*tools: received a call of tool 'nowhere', which it does not have (tools: none)*",
        ]
    )
