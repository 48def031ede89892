"""Faults of a fake tool server, as the SDK's client meets them: a call held until released
or cancelled, a JSON-RPC error, an ``isError`` result, a stall, a cut stream, a crash; and
how each call is logged."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from mcp.shared.exceptions import MCPError

from pytest_agentreplay.mcp.fake import FakeToolServer, ToolFault

from ._client import session

pytestmark = pytest.mark.anyio


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside ``exc``'s (nested) exception groups, or ``exc`` itself."""
    inner = getattr(exc, "exceptions", None)
    return [leaf for e in inner for leaf in _leaves(e)] if inner else [exc]


TRANSPORTS = ["http", "stdio"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_blocked_call_waits_for_release(
    transport: str, blocking_tools: FakeToolServer
) -> None:
    blocking_tools.tool("slow", "done")
    async with session(blocking_tools, transport) as client:
        call = asyncio.ensure_future(client.call_tool("slow", {}))
        assert await blocking_tools.wait_blocked_async(10)
        assert not call.done()
        assert [c.outcome for c in blocking_tools.calls] == [None]  # begun, not ended
        blocking_tools.release()
        answer = await call
    assert answer.content[0].text == "done"
    assert [c.outcome for c in blocking_tools.log] == ["completed"]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_cancelled_call_ends_once_as_cancelled(
    transport: str, blocking_tools: FakeToolServer
) -> None:
    blocking_tools.tool("slow", "the only answer")
    async with session(blocking_tools, transport) as client:
        call = asyncio.ensure_future(client.call_tool("slow", {"n": 1}))
        assert await blocking_tools.wait_blocked_async(10)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        while not blocking_tools.log:  # the client's notifications/cancelled is on its way
            await asyncio.sleep(0.005)
        # the session goes on: the next call gets the next answer
        after = await client.call_tool("slow", {"n": 2})
    assert after.content[0].text == "the only answer"  # the cancelled call took none
    assert [(c.arguments, c.outcome) for c in blocking_tools.log] == [
        ({"n": 1}, "cancelled"),
        ({"n": 2}, "completed"),
    ]
    cancels = [m for m in blocking_tools.requests if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancels] == [blocking_tools.log[0].request_id]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_rpc_error_and_tool_error(transport: str, scripted_tools: FakeToolServer) -> None:
    scripted_tools.tool(
        "flaky",
        ToolFault.rpc_error(-32000, "backend down", data={"retry": True}),
        ToolFault.tool_error("No such city."),
    )
    async with session(scripted_tools, transport) as client:
        with pytest.raises(MCPError, match="backend down") as raised:
            await client.call_tool("flaky", {})
        failed = await client.call_tool("flaky", {})
    assert raised.value.error.code == -32000
    assert (failed.is_error, failed.content[0].text) == (True, "No such city.")
    assert [(c.outcome, c.error, c.result) for c in scripted_tools.log] == [
        ("rpc_error", {"code": -32000, "message": "backend down", "data": {"retry": True}}, None),
        (
            "tool_error",
            None,
            {"content": [{"type": "text", "text": "No such city."}], "isError": True},
        ),
    ]


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_stall_holds_after_the_response_began(
    transport: str, scripted_tools: FakeToolServer
) -> None:
    scripted_tools.tool("slow", ToolFault.stall(then="late"))
    async with session(scripted_tools, transport) as client:
        call = asyncio.ensure_future(client.call_tool("slow", {}))
        assert await scripted_tools.wait_blocked_async(10)
        assert not call.done()
        scripted_tools.release()
        assert (await call).content[0].text == "late"
    assert [c.outcome for c in scripted_tools.log] == ["completed"]


async def test_a_cut_stream_reaches_the_client_as_a_closed_stream(
    scripted_tools: FakeToolServer,
) -> None:
    scripted_tools.tool("slow", ToolFault.cut(), "after")
    async with session(scripted_tools, "http") as client:
        with pytest.raises(MCPError, match="ended without a response"):
            await client.call_tool("slow", {})
        assert (await client.call_tool("slow", {})).content[0].text == "after"
    assert [c.outcome for c in scripted_tools.log] == ["cut", "completed"]


async def test_a_cut_stdio_server_dies_mid_line(scripted_tools: FakeToolServer) -> None:
    scripted_tools.tool("slow", ToolFault.cut())
    with pytest.raises(BaseException) as raised:  # noqa: PT011 - the SDK's task group wraps it
        async with session(scripted_tools, "stdio") as client:
            await client.call_tool("slow", {})
    assert [str(e) for e in _leaves(raised.value)] == ["Connection closed"]
    assert [c.outcome for c in scripted_tools.log] == ["cut"]


async def test_an_http_crash_drops_the_connection(scripted_tools: FakeToolServer) -> None:
    import httpx2

    scripted_tools.tool("slow", ToolFault.crash())
    with pytest.raises(BaseException) as raised:  # noqa: PT011 - the SDK's task group wraps it
        async with session(scripted_tools, "http") as client:
            await client.call_tool("slow", {})
    assert [type(e) for e in _leaves(raised.value)] == [httpx2.RemoteProtocolError]
    assert [c.outcome for c in scripted_tools.log] == ["crashed"]


def test_a_stdio_crash_exits_with_its_status(scripted_tools: FakeToolServer) -> None:
    """The relay as a framework spawns it: a process whose stdout is the server's, which
    exits with the crash's status before answering."""
    scripted_tools.tool("boom", ToolFault.crash(exit_code=3))
    command = scripted_tools.stdio_command()
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "boom"}}
    # stdin stays open, as a framework keeps it: the relay ends by the crash alone
    relay = subprocess.Popen(command.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert relay.stdin is not None and relay.stdout is not None
    relay.stdin.write(json.dumps(call) + "\n")
    relay.stdin.flush()
    try:
        assert (relay.wait(timeout=60), relay.stdout.read()) == (3, "")
    finally:
        relay.stdin.close()
        relay.stdout.close()
    assert [(c.tool, c.outcome, c.transport) for c in scripted_tools.log] == [
        ("boom", "crashed", "stdio")
    ]
    assert command.argv[0] == sys.executable


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_block_of_one_tool_holds_only_its_call(
    transport: str, scripted_tools: FakeToolServer
) -> None:
    """Calls in parallel: ``block("slow")`` holds the slow tool's call while the other
    tool answers; cancelling the held call lets it go alone, and the next block holds
    the next call."""
    scripted_tools.tool("slow", "slow answer").tool("fast", "fast answer", "again")
    scripted_tools.block("slow").block("slow")
    async with session(scripted_tools, transport) as client:
        first = asyncio.ensure_future(client.call_tool("slow", {"n": 1}))
        assert await scripted_tools.wait_blocked_async(10)
        assert (await client.call_tool("fast", {})).content[0].text == "fast answer"
        second = asyncio.ensure_future(client.call_tool("slow", {"n": 2}))
        while len(scripted_tools.calls) < 3:  # the second slow call has arrived
            await asyncio.sleep(0.005)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        assert (await client.call_tool("fast", {})).content[0].text == "again"
        assert not second.done()  # still held: only the cancelled call was let go
        scripted_tools.release()
        assert (await second).content[0].text == "slow answer"
    outcomes = {(c.tool, c.arguments.get("n")): c.outcome for c in scripted_tools.log}
    assert outcomes == {
        ("slow", 1): "cancelled",
        ("fast", None): "completed",
        ("slow", 2): "completed",
    }
    assert len(scripted_tools.log) == 4
