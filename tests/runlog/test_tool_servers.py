"""A run log watches fake tool servers beside the model: their calls (begun and ended),
the tools each serves, and which calls were running when stop was pressed; the model
side is not confused with them."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from pytest_agentreplay import FakeModel
from pytest_agentreplay.mcp.fake import FakeToolServer, ToolFault
from pytest_agentreplay.runlog import InterruptRequested, RunLog

pytestmark = pytest.mark.anyio


async def test_the_tool_side_is_read_live_and_kept_apart_from_the_model_side(
    scripted_model: FakeModel, scripted_tools: FakeToolServer
) -> None:
    scripted_tools.tool("search", "found", ToolFault.rpc_error(-32000, "busy"))
    scripted_tools.tool("fetch", "page", ToolFault.stall(then="late"))
    other = FakeToolServer(name="files").tool("read", "text")
    log = RunLog.from_fake(scripted_model).watch(scripted_tools, other)

    async with other:
        for server, calls in (
            (scripted_tools, ["search", "search", "fetch", "fetch"]),
            (other, ["read"]),
        ):
            async with (
                streamable_http_client(server.url) as (read, write, *_),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                for name in calls[:-1]:
                    with contextlib.suppress(MCPError):  # the scripted JSON-RPC error
                        await client.call_tool(name, {"q": name})
                last = asyncio.ensure_future(client.call_tool(calls[-1], {"q": "last"}))
                if server is scripted_tools:  # the stall: running when stop is pressed
                    assert await scripted_tools.wait_blocked_async(10)
                    stop = log.interrupt_requested()
                    assert [c.outcome for c in log.tool_calls] == [
                        "completed",
                        "rpc_error",
                        "completed",
                        None,
                    ]
                    scripted_tools.release()
                await last

    assert log.tool_servers == {"tools": ["search", "fetch"], "files": ["read"]}
    assert [(c.index, c.server, c.tool, c.outcome) for c in log.tool_calls] == [
        (0, "tools", "search", "completed"),
        (1, "tools", "search", "rpc_error"),
        (2, "tools", "fetch", "completed"),
        (3, "tools", "fetch", "completed"),
        (4, "files", "read", "completed"),  # re-indexed across servers
    ]
    # the interrupt counted no model call (the servers' JSON-RPC requests are no model calls)
    assert isinstance(stop, InterruptRequested)
    assert (stop.calls_before, stop.tool_calls_before, stop.tool_calls_open) == (0, 4, [3])
    assert log.model_calls == []
    copy = log.frozen()
    assert copy == log
    assert RunLog.model_validate_json(log.model_dump_json()) == copy


def test_a_log_watching_no_tool_server_dumps_as_before() -> None:
    log = RunLog()
    log.interrupt_requested("t1")
    assert log.model_dump(mode="json") == {
        "model_calls": [],
        "entries": [
            {"event": "interrupt_requested", "turn_id": "t1", "calls_before": None, "at": None}
        ],
        "egress": None,
    }
