"""The tool-call invariants across both halves of a run: the model's tool calls, the
agent's log, and what the MCP tool server saw (a fake tool server, watched by the run
log). Each is shown to hold for a correct runtime and to fail on a planted bug
(tests/invariants/_mcp_agent.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from pytest_agentreplay import FakeModel, Reply, invariants
from pytest_agentreplay.invariants import InvariantViolation
from pytest_agentreplay.mcp.fake import FakeToolServer, ToolFault
from pytest_agentreplay.runlog import RunLog
from tests.invariants._mcp_agent import McpAgent

pytestmark = pytest.mark.anyio

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
LEEDS = {"city": "Leeds"}


@asynccontextmanager
async def agent_on(
    tools: FakeToolServer, model: FakeModel, bugs: frozenset[str] = frozenset()
) -> AsyncIterator[McpAgent]:
    log = RunLog.from_fake(model).watch(tools)
    async with (
        streamable_http_client(tools.url) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        agent = McpAgent(session, log, bugs)
        try:
            yield agent
        finally:
            tools.release()
            for task in agent.background:
                task.cancel()
            await asyncio.gather(*agent.background, return_exceptions=True)


async def _ended(tools: FakeToolServer, count: int) -> None:
    """Until ``count`` calls have ended at the server (the client's cancel is on its way)."""
    while len(tools.log) < count:
        await asyncio.sleep(0.005)


# --- every tool call answered once, or reported failed ------------------------------------


async def test_a_runtime_that_answers_each_call_once(
    scripted_model: FakeModel, scripted_tools: FakeToolServer
) -> None:
    scripted_tools.tool("weather", "Rain.", input_schema=CITY)
    scripted_model.script(Reply.tool_call("weather", LEEDS), "Rain in Leeds.")
    async with agent_on(scripted_tools, scripted_model) as agent:
        assert await agent.run_turn("Weather?") == "Rain in Leeds."
        log = agent.log
    invariants.assert_every_tool_call_answered(log)
    [call] = log.tool_calls
    assert (call.tool, call.arguments, call.outcome, call.text) == (
        "weather",
        LEEDS,
        "completed",
        "Rain.",
    )
    assert log.tool_servers == {"tools": ["weather"]}


async def test_planted_bug_a_request_answers_a_call_twice(
    scripted_model: FakeModel, scripted_tools: FakeToolServer
) -> None:
    scripted_tools.tool("weather", "Rain.", input_schema=CITY)
    scripted_model.script(Reply.tool_call("weather", LEEDS), "Rain in Leeds.")
    async with agent_on(scripted_tools, scripted_model, frozenset({"double_result"})) as agent:
        await agent.run_turn("Weather?")
    with pytest.raises(
        InvariantViolation, match=r"model call #1, tool call 'toolu_\w+'.*answers it 2 times"
    ):
        invariants.assert_every_tool_call_answered(agent.log)


async def test_planted_bug_a_result_neither_sent_nor_logged(
    scripted_model: FakeModel, scripted_tools: FakeToolServer
) -> None:
    scripted_tools.tool("weather", "Rain.", input_schema=CITY)
    scripted_model.script(Reply.tool_call("weather", LEEDS), "never asked for").configure(
        check_unused=False
    )
    async with agent_on(scripted_tools, scripted_model, frozenset({"forget_result"})) as agent:
        await agent.run_turn("Weather?")
    with pytest.raises(
        InvariantViolation,
        match=r"model call #0, tool call weather\(\{'city': 'Leeds'\}\): "
        r"the model asked for it last",
    ):
        invariants.assert_every_tool_call_answered(agent.log)


async def test_a_call_its_server_reports_failed_needs_no_result(
    scripted_model: FakeModel, blocking_tools: FakeToolServer
) -> None:
    """Stopped mid-tool: the agent logged the call and no result, but the server ended
    it ``cancelled``: reported failed, so answered."""
    blocking_tools.tool("weather", input_schema=CITY)
    scripted_model.script(Reply.tool_call("weather", LEEDS))
    async with agent_on(blocking_tools, scripted_model) as agent:
        turn = asyncio.ensure_future(agent.run_turn("Weather?"))
        assert await blocking_tools.wait_blocked_async(10)
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        await _ended(blocking_tools, 1)
    log = agent.log.frozen()
    log.entries = [e for e in log.entries if e.event != "tool_result"]  # the agent logged none
    invariants.assert_every_tool_call_answered(log)
    assert [c.outcome for c in log.tool_calls] == ["cancelled"]


async def test_planted_bug_a_call_left_running(
    scripted_model: FakeModel, blocking_tools: FakeToolServer
) -> None:
    blocking_tools.tool("weather", "released at the end", input_schema=CITY)
    blocking_tools.check_unused = False  # the running call is let go as the test ends
    scripted_model.script(Reply.tool_call("weather", LEEDS))
    async with agent_on(blocking_tools, scripted_model, frozenset({"shield_call"})) as agent:
        turn = asyncio.ensure_future(agent.run_turn("Weather?"))
        assert await blocking_tools.wait_blocked_async(10)
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        with pytest.raises(
            InvariantViolation, match=r"tool call #0 \(weather on 'tools'\): it never ended"
        ):
            invariants.assert_every_tool_call_answered(agent.log)


# --- a tool call interrupted by the user ends exactly once ----------------------------------


async def _stop_mid_tool(
    model: FakeModel, tools: FakeToolServer, bugs: frozenset[str] = frozenset()
) -> RunLog:
    tools.tool("weather", "after the stop", input_schema=CITY).block("weather")
    tools.check_unused = False  # a correct runtime never runs the call again
    model.script(Reply.tool_call("weather", LEEDS))
    async with agent_on(tools, model, bugs) as agent:
        turn = asyncio.ensure_future(agent.run_turn("Weather?"))
        assert await tools.wait_blocked_async(10)
        agent.log.interrupt_requested("t1")  # the user presses stop
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        await _ended(tools, 2 if "retry_after_stop" in bugs else 1)
        return agent.log.frozen()


async def test_a_stopped_tool_call_ends_once(
    scripted_model: FakeModel, scripted_tools: FakeToolServer
) -> None:
    log = await _stop_mid_tool(scripted_model, scripted_tools)
    invariants.assert_interrupted_tool_call_ended_once(log)
    invariants.assert_every_tool_call_answered(log)
    invariants.assert_single_terminal_step(log)
    [entry] = [e for e in log.entries if e.event == "interrupt_requested"]
    assert (entry.tool_calls_before, entry.tool_calls_open) == (1, [0])
    assert [(c.tool, c.outcome) for c in log.tool_calls] == [("weather", "cancelled")]
    assert [e.outcome for e in log.entries if e.event == "tool_result"] == ["interrupted"]


@pytest.mark.parametrize(
    ("bug", "message"),
    [
        ("log_twice", r"tool call #0 \(weather on 'tools'\): the agent logged 2 results for it"),
        (
            "retry_after_stop",
            r"tool call #0 \(weather on 'tools'\): it ran again after stop was pressed "
            r"\(as tool call #1",
        ),
    ],
)
async def test_planted_bug_a_stopped_call_ends_twice(
    bug: str, message: str, scripted_model: FakeModel, scripted_tools: FakeToolServer
) -> None:
    log = await _stop_mid_tool(scripted_model, scripted_tools, frozenset({bug}))
    with pytest.raises(InvariantViolation, match=message):
        invariants.assert_interrupted_tool_call_ended_once(log)


async def test_planted_bug_a_stopped_call_left_running(
    scripted_model: FakeModel, blocking_tools: FakeToolServer
) -> None:
    blocking_tools.tool("weather", "released at the end", input_schema=CITY)
    blocking_tools.check_unused = False  # the running call is let go as the test ends
    scripted_model.script(Reply.tool_call("weather", LEEDS))
    async with agent_on(blocking_tools, scripted_model, frozenset({"shield_call"})) as agent:
        turn = asyncio.ensure_future(agent.run_turn("Weather?"))
        assert await blocking_tools.wait_blocked_async(10)
        agent.log.interrupt_requested("t1")
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        with pytest.raises(InvariantViolation, match=r"it never ended after stop was pressed"):
            invariants.assert_interrupted_tool_call_ended_once(agent.log)


async def test_an_interrupt_with_no_tool_server_watched_is_refused() -> None:
    log = RunLog()
    log.interrupt_requested("t1")
    with pytest.raises(InvariantViolation, match="watched no tool server when stop was pressed"):
        invariants.assert_interrupted_tool_call_ended_once(log)


# --- a retried tool call resends identical arguments ------------------------------------------


@pytest.mark.parametrize(
    "fault", [ToolFault.rpc_error(-32000, "busy"), ToolFault.cut()], ids=["rpc_error", "cut"]
)
async def test_a_retry_resends_the_arguments(
    fault: ToolFault, scripted_model: FakeModel, scripted_tools: FakeToolServer
) -> None:
    scripted_tools.tool("weather", fault, "Rain.", input_schema=CITY)
    scripted_model.script(Reply.tool_call("weather", LEEDS), "Rain in Leeds.")
    async with agent_on(scripted_tools, scripted_model) as agent:
        await agent.run_turn("Weather?")
    invariants.assert_tool_retries_resend_identical_arguments(agent.log)
    invariants.assert_every_tool_call_answered(agent.log)
    assert [(c.arguments, c.outcome) for c in agent.log.tool_calls] == [
        (LEEDS, "rpc_error" if fault.kind == "rpc_error" else "cut"),
        (LEEDS, "completed"),
    ]


async def test_planted_bug_a_retry_with_other_arguments(
    scripted_model: FakeModel, scripted_tools: FakeToolServer
) -> None:
    scripted_tools.tool("weather", ToolFault.cut(), "Rain.", input_schema=CITY)
    scripted_model.script(Reply.tool_call("weather", LEEDS), "Rain in Leeds.")
    async with agent_on(scripted_tools, scripted_model, frozenset({"mangle_retry"})) as agent:
        await agent.run_turn("Weather?")
    with pytest.raises(InvariantViolation) as raised:
        invariants.assert_tool_retries_resend_identical_arguments(agent.log)
    assert str(raised.value).startswith(
        "assert_tool_retries_resend_identical_arguments failed at tool call #1 (weather on "
        "'tools'), the retry of tool call #0 (weather on 'tools') (cut): the retry sent "
        "different arguments than the try it repeats"
    )
    assert "attempt" in str(raised.value)


async def test_a_new_call_the_model_asked_for_is_no_retry(
    scripted_model: FakeModel, scripted_tools: FakeToolServer
) -> None:
    """The model read the failure and asked again with other arguments: not a retry."""
    york = {"city": "York"}
    scripted_tools.tool(
        "weather",
        ToolFault.rpc_error(-32000, "busy"),
        "Leeds: rain.",
        "York: sun.",
        input_schema=CITY,
    )
    scripted_model.script(
        Reply.tool_call("weather", LEEDS), Reply.tool_call("weather", york), "Done."
    )
    async with agent_on(scripted_tools, scripted_model) as agent:
        await agent.run_turn("Weather?")
    invariants.assert_tool_retries_resend_identical_arguments(agent.log)  # the one true retry
    with pytest.raises(InvariantViolation, match=r"found 0 tool retries, expected at least 1"):
        invariants.assert_tool_retries_resend_identical_arguments(
            RunLog(tool_calls=agent.log.tool_calls[2:])
        )
