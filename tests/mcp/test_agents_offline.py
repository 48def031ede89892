"""Agents with MCP tool servers, run fully offline: the model scripted, the tools replayed.

A pydantic-ai agent and an openai-agents agent each use one Streamable HTTP MCP server
(the SDK's ``MCPServer`` on a free loopback port) and one stdio MCP server (a script the
framework spawns), with ``scripted_model`` as the model. The run is recorded once with
the servers live; then the HTTP server is stopped and the script deleted, and the run
replays from the cassette unchanged — with the tools called in the other order, another
reported SDK version, and a session held past the client's reconnect delay (issue 31).
"""

from __future__ import annotations

from pathlib import Path

import agents  # noqa: F401 - imported once here: in-process runs reuse them
import fastmcp  # noqa: F401
import mcp  # noqa: F401
import pydantic_ai  # noqa: F401
import pytest

from tests.cassettes._plugin_runs import results, run
from tests.mcp._servers import http_server, stdio_script

pytest_plugins = ["pytester"]

USER_TEST = """
import asyncio, json, os, sys
import pytest
import fastmcp
import mcp.client.session as mcp_session
from mcp_types import Implementation
from pytest_agentreplay import Reply

URL = os.environ["MCP_URL"]
SCRIPT = os.environ["MCP_SCRIPT"]
PAUSE = float(os.environ.get("MCP_PAUSE", "0"))
CALLS = [("add", {"a": 1, "b": 2}), ("backwards", {"text": "abc"})]


@pytest.fixture(autouse=True)
def _setting(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
    version = os.environ.get("MCP_CLIENT_VERSION")
    if version:  # the SDKs report another version in clientInfo
        monkeypatch.setattr(mcp_session, "DEFAULT_CLIENT_INFO",
                            Implementation(name="mcp", version=version))
        monkeypatch.setattr(fastmcp, "__version__", version)


def script(model):
    calls = list(reversed(CALLS)) if os.environ.get("MCP_REVERSE") else CALLS
    model.script(*(Reply.tool_call(name, args) for name, args in calls), Reply.text("Done."))


def report(name, model):
    results = [r.content for r in model.requests[-1].tool_results]  # the whole history
    with open(os.environ["AR_OUT"], "a") as out:
        out.write(json.dumps({"agent": name, "tool_results": results}) + "\\n")


@pytest.mark.agentreplay(cassette="pydantic_ai.yaml")
def test_pydantic_ai(scripted_model):
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset

    script(scripted_model)
    stdio = MCPToolset(fastmcp.Client(StdioTransport(sys.executable, [SCRIPT], keep_alive=False)))
    agent = Agent("openai-chat:gpt-4o", toolsets=[MCPToolset(URL), stdio])

    async def main():
        async with agent:
            await asyncio.sleep(PAUSE)
            return await agent.run("Go.")

    assert asyncio.run(main()).output == "Done."
    report("pydantic_ai", scripted_model)


@pytest.mark.agentreplay(cassette="openai_agents.yaml")
def test_openai_agents(scripted_model):
    from agents import Agent, Runner, set_tracing_disabled
    from agents.mcp import MCPServerStdio, MCPServerStreamableHttp

    set_tracing_disabled(True)
    script(scripted_model)

    async def main():
        async with MCPServerStreamableHttp(params={"url": URL}) as http, MCPServerStdio(
            params={"command": sys.executable, "args": [SCRIPT]}
        ) as stdio:
            await asyncio.sleep(PAUSE)
            agent = Agent(name="tools", model="gpt-4o", mcp_servers=[http, stdio])
            return await Runner.run(agent, "Go.")

    assert asyncio.run(main()).final_output == "Done."
    report("openai_agents", scripted_model)
"""


def _by_agent(pytester: pytest.Pytester) -> dict[str, list[object]]:
    return {r["agent"]: r["tool_results"] for r in results(pytester)}


def test_agents_with_mcp_servers_run_offline_from_cassettes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    script = Path(stdio_script(pytester.path, words=True)[1])
    with http_server() as url:
        env = {"MCP_URL": url, "MCP_SCRIPT": str(script)}
        run(pytester, "--agentreplay-record-mode=once", **env).assert_outcomes(passed=2)
    recorded = _by_agent(pytester)
    assert recorded == {"pydantic_ai": ["3", "cba"], "openai_agents": ["3", "cba"]}

    script.unlink()  # the stdio server cannot start, the HTTP one is stopped
    result = run(
        pytester,
        "--agentreplay-strict",
        MCP_REVERSE="1",
        MCP_CLIENT_VERSION="99.0.0",
        MCP_PAUSE="1.5",  # past the client's one-second reconnect delay
        **env,
    )
    result.assert_outcomes(passed=2)
    assert _by_agent(pytester) == {"pydantic_ai": ["cba", "3"], "openai_agents": ["cba", "3"]}
