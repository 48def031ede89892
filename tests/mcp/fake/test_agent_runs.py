"""Agent runs against a fake tool server, as issue 31's "done when" asks: the user presses
stop while a scripted tool is blocked (pydantic-ai and openai-agents, the model from a
fake), and the run log shows one terminal event for the tool and one for the step; a
failing tool (a JSON-RPC error, an ``isError`` result) reaches the model as each
framework documents, asserted on the next request the model receives."""

from __future__ import annotations

import asyncio

import pytest

from pytest_agentreplay import FakeModel, Reply, invariants
from pytest_agentreplay.mcp.fake import FakeToolServer, ToolFault
from pytest_agentreplay.runlog import RunLog, StepCompleted, ToolCalled, ToolResulted

from ._client import CITY
from ._frameworks import openai_agents_server, pydantic_ai_toolset

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("framework_env")]

LEEDS = {"city": "Leeds"}


async def _ended(tools: FakeToolServer) -> None:
    """Until the server has ended every call it received."""
    while any(not c.ended for c in tools.calls):
        await asyncio.sleep(0.005)


def _assert_stopped_once(log: RunLog) -> None:
    """One terminal event for the tool (its server's, ``cancelled``) and one for the step;
    the invariants about stopping hold."""
    [call] = log.tool_calls
    assert (call.tool, call.arguments, call.outcome) == ("weather", LEEDS, "cancelled")
    [step] = log.steps()
    assert [e.outcome for e in step.ended] == ["completed"]  # the step that asked for it
    assert len(log.of(StepCompleted)) == 1
    invariants.assert_single_terminal_step(log)
    invariants.assert_interrupted_tool_call_ended_once(log)
    invariants.assert_every_tool_call_answered(log)
    invariants.assert_no_model_call_after_interrupt(log)


# --- stop while a tool is blocked ---------------------------------------------------------------


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_pydantic_ai_stop_while_a_tool_is_blocked(
    transport: str, scripted_model: FakeModel, blocking_tools: FakeToolServer
) -> None:
    from pydantic_ai import Agent, capture_run_messages

    blocking_tools.tool("weather", input_schema=CITY)  # the held call needs no answer
    scripted_model.script(Reply.tool_call("weather", LEEDS))
    toolset = pydantic_ai_toolset(blocking_tools, transport)
    agent = Agent("anthropic:claude-sonnet-4-6", toolsets=[toolset])

    with capture_run_messages() as messages:
        run = asyncio.ensure_future(agent.run("Weather in Leeds?"))
        assert await blocking_tools.wait_blocked_async(10)
        # the user presses stop: what the agent logged so far, the model and the tools
        log = RunLog.from_pydantic_ai(list(messages), model=scripted_model).watch(blocking_tools)
        log.interrupt_requested()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
    await _ended(blocking_tools)

    _assert_stopped_once(log)
    [called] = log.of(ToolCalled)  # the agent's one tool call, never answered by it:
    assert (called.name, called.args, log.of(ToolResulted)) == ("weather", LEEDS, [])
    assert blocking_tools.calls[0].request_id in [
        m["params"]["requestId"]
        for m in blocking_tools.requests
        if m.get("method") == "notifications/cancelled"
    ]


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_openai_agents_stop_while_a_tool_is_blocked(
    transport: str, scripted_model: FakeModel, blocking_tools: FakeToolServer
) -> None:
    from agents import Agent, Runner

    blocking_tools.tool("weather", input_schema=CITY)
    scripted_model.script(Reply.tool_call("weather", LEEDS))
    log = RunLog.from_fake(scripted_model).watch(blocking_tools)

    async with openai_agents_server(blocking_tools, transport) as server:
        agent = Agent(name="weatherbot", model="gpt-4o", mcp_servers=[server])
        result = Runner.run_streamed(agent, "Weather in Leeds?")

        async def consume() -> None:
            async for event in result.stream_events():
                log.feed_openai_agents(event)

        consuming = asyncio.ensure_future(consume())
        assert await blocking_tools.wait_blocked_async(10)
        log.interrupt_requested()  # the user presses stop:
        result.cancel()  # openai-agents' own stop
        await consuming
        await _ended(blocking_tools)

    _assert_stopped_once(log)
    assert [e.event for e in log.entries] == [
        "step_started",
        "step_completed",
        "tool_call",
        "interrupt_requested",
    ]


# --- a failing tool reaches the model as the framework documents -----------------------------


FAILURES = [ToolFault.rpc_error(-32000, "backend down"), ToolFault.tool_error("No such city.")]


@pytest.mark.parametrize("fault", FAILURES, ids=["rpc_error", "tool_error"])
async def test_pydantic_ai_sends_a_failed_tool_back_as_a_retry(
    fault: ToolFault, scripted_model: FakeModel, scripted_tools: FakeToolServer
) -> None:
    """``MCPToolset(tool_error_behavior='retry')``, the default: a protocol error and an
    ``isError`` result alike raise ``ModelRetry`` with the error's text, which the next
    request carries as an error tool result (Anthropic's ``is_error: true``)."""
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset

    scripted_tools.tool("weather", fault, input_schema=CITY)
    scripted_model.script(Reply.tool_call("weather", LEEDS), "Sorry, no weather.")
    agent = Agent("anthropic:claude-sonnet-4-6", toolsets=[MCPToolset(scripted_tools.url)])

    result = await agent.run("Weather in Leeds?")

    assert result.output == "Sorry, no weather."
    [sent] = scripted_model.requests[1].raw["messages"][-1]["content"]
    assert sent == {
        "type": "tool_result",
        "tool_use_id": scripted_model.requests[1].tool_results[0].tool_call_id,
        "content": [{"type": "text", "text": fault.message}],
        "is_error": True,
    }
    [call] = scripted_tools.log
    assert call.outcome == fault.kind
    log = RunLog.from_pydantic_ai(result.all_messages(), model=scripted_model).watch(scripted_tools)
    invariants.assert_every_tool_call_answered(log)


@pytest.mark.parametrize(
    ("fault", "output"),
    [
        # a protocol error: the default failure_error_function hides it from the model
        (FAILURES[0], "An error occurred while running the tool. Please try again."),
        # an isError result: its content is the tool's output (not its structured content)
        (FAILURES[1], [{"type": "input_text", "text": "No such city."}]),
    ],
    ids=["rpc_error", "tool_error"],
)
async def test_openai_agents_sends_a_failed_tool_back_as_its_output(
    fault: ToolFault, output: object, scripted_model: FakeModel, scripted_tools: FakeToolServer
) -> None:
    from agents import Agent, Runner
    from agents.mcp import MCPServerStreamableHttp

    scripted_tools.tool("weather", fault, input_schema=CITY)
    scripted_model.script(Reply.tool_call("weather", LEEDS), "Sorry, no weather.")
    async with MCPServerStreamableHttp(params={"url": scripted_tools.url}, name="w") as server:
        agent = Agent(name="weatherbot", model="gpt-4o", mcp_servers=[server])
        result = await Runner.run(agent, "Weather in Leeds?")

    assert result.final_output == "Sorry, no weather."
    sent = scripted_model.requests[1].raw["input"][-1]
    assert (sent["type"], sent["output"]) == ("function_call_output", output)
    assert [c.outcome for c in scripted_tools.log] == [fault.kind]
    log = RunLog.from_openai_agents(result, model=scripted_model).watch(scripted_tools)
    invariants.assert_every_tool_call_answered(log)
