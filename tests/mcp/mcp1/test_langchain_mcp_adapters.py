"""langchain-mcp-adapters against recorded MCP servers, under the mcp 1.x it requires.

langchain-mcp-adapters 0.3 requires ``mcp<2``, the test extra mcp 2: this module runs
in the ``mcp1`` session of noxfile.py and is skipped by the main suite. Its
``MultiServerMCPClient`` gets the tools of a stdio server (a FastMCP script it spawns)
and of a Streamable HTTP server (FastMCP on a free loopback port), and calls each. As
the adapters do by default, every ``get_tools()`` and every tool call opens a session
of its own: one test spawns the stdio server several times, and opens several HTTP
sessions. The run is recorded once with the servers live, then replayed with the
script deleted and the HTTP server stopped, the tools called in the other order, by
an SDK reporting another version, under ``--agentreplay-strict``. A stdio server the
cassette never recorded is not started in replay. Nothing in the package needs mcp 2
to import, and the scripted fake tool server serves the adapters too.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

# The client module, not the package: an adapters release that installed beside mcp 2
# imports as a package and fails only in its client (``RequestContext``).
pytest.importorskip("langchain_mcp_adapters.client")

from tests.mcp._servers import CALC_TOOLS, free_port

pytest_plugins = ["pytester"]

CALC_SCRIPT = (
    """
from mcp.server.fastmcp import FastMCP

server = FastMCP("calc")
"""
    + CALC_TOOLS
    + """

if __name__ == "__main__":
    server.run("stdio")
"""
)


WORDS_SCRIPT = '''
import sys

from mcp.server.fastmcp import FastMCP

server = FastMCP("words", host="127.0.0.1", port=int(sys.argv[1]), log_level="WARNING")


@server.tool()
def backwards(text: str) -> str:
    """The text backwards."""
    return text[::-1]


@server.tool()
def repeat(text: str, times: int) -> str:
    """The text, ``times`` times."""
    return text * times


if __name__ == "__main__":
    server.run("streamable-http")
'''


@contextmanager
def words_server(folder: Path) -> Iterator[str]:
    """FastMCP's Streamable HTTP server, two tools of its own, in a process of its own
    on a free loopback port (what an mcp 1.x server leaves behind when it stops stays
    there); yields the endpoint URL."""
    script = folder / "words_server.py"
    script.write_text(WORDS_SCRIPT)
    port = free_port()
    process = subprocess.Popen([sys.executable, str(script), str(port)])
    try:
        while not _accepts(port):
            if process.poll() is not None:
                raise RuntimeError(f"the MCP test server exited with {process.returncode}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait()


def _accepts(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


USER_TEST = """
import asyncio, json, os, sys
import pytest
import mcp.client.session as mcp_session
from mcp.types import Implementation
from langchain_mcp_adapters.client import MultiServerMCPClient
from pytest_agentreplay import Reply

CALLS = [("add", {"a": 1, "b": 2}), ("backwards", {"text": "abc"}),
         ("shout", {"text": "hi"}), ("repeat", {"text": "ab", "times": 3})]


@pytest.fixture(autouse=True)
def _setting(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-openai-key")
    version = os.environ.get("MCP_CLIENT_VERSION")
    if version:  # the SDK reports another version in clientInfo
        monkeypatch.setattr(mcp_session, "DEFAULT_CLIENT_INFO",
                            Implementation(name="mcp", version=version))


def client():
    return MultiServerMCPClient({
        "calc": {"transport": "stdio", "command": sys.executable,
                 "args": [os.environ["MCP_SCRIPT"]]},
        "words": {"transport": "streamable_http", "url": os.environ["MCP_URL"]},
    })


def ordered(calls):
    return list(reversed(calls)) if os.environ.get("MCP_REVERSE") else calls


def text(result):
    # A tool's content: a string, or content blocks (langchain-core 1.x).
    if isinstance(result, str):
        return result
    return "".join(block["text"] for block in result if block.get("type") == "text")


def report(**values):
    with open(os.environ["AR_OUT"], "a") as out:
        out.write(json.dumps(values) + "\\n")


@pytest.mark.agentreplay
def test_tools(agentreplay):
    async def main():
        tools = {tool.name: tool for tool in await client().get_tools()}
        texts = [text(await tools[name].ainvoke(args)) for name, args in ordered(CALLS)]
        return sorted(tools), texts

    names, texts = asyncio.run(main())
    report(test="tools", names=names, texts=texts, unplayed=agentreplay.unplayed)


@pytest.mark.agentreplay(cassette="agent.yaml")
def test_agent(agentreplay, scripted_model):
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    calls = ordered(CALLS[:2])  # one tool of each server
    scripted_model.script(*(Reply.tool_call(name, args) for name, args in calls),
                          Reply.text("Done."))

    async def main():
        agent = create_react_agent(ChatOpenAI(model="gpt-4o"), await client().get_tools())
        return await agent.ainvoke({"messages": [("user", "Go.")]})

    state = asyncio.run(main())
    assert state["messages"][-1].content == "Done."
    seen = [r.content for r in scripted_model.requests[-1].tool_results]
    report(test="agent", tool_results=seen, unplayed=agentreplay.unplayed)
"""


@pytest.fixture
def user(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's test module and the stdio server's script; ``AR_OUT`` set."""
    pytester.makepyfile(test_user=USER_TEST)
    script = pytester.path / "calc_server.py"
    script.write_text(CALC_SCRIPT)
    monkeypatch.setenv("MCP_SCRIPT", str(script))
    monkeypatch.setenv("AR_OUT", str(pytester.path / "out.jsonl"))
    return script


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """The user's suite in a fresh process, as a user runs it (the environment set by
    ``monkeypatch`` goes with it)."""
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=120)


def results(pytester: pytest.Pytester) -> dict[str, dict[str, Any]]:
    """What the user's tests reported, by test; the file is emptied."""
    out = pytester.path / "out.jsonl"
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    out.unlink()
    return {line.pop("test"): line for line in lines}


@pytest.fixture
def recorded(pytester: pytest.Pytester, user: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's tests recorded with both servers live; then the HTTP server is
    stopped (its URL stays set, nothing answers there)."""
    with words_server(pytester.path) as url:
        monkeypatch.setenv("MCP_URL", url)
        run(pytester, "--agentreplay-record-mode=once").assert_outcomes(passed=2)
    assert results(pytester) == {
        "tools": {
            "names": ["add", "backwards", "repeat", "shout"],
            "texts": ["3", "cba", "HI", "ababab"],
            "unplayed": [],
        },
        "agent": {"tool_results": ["3", "cba"], "unplayed": []},
    }
    return pytester.path / "cassettes" / "test_user" / "test_tools.yaml"


def test_multi_server_client_replays_with_the_servers_gone(
    pytester: pytest.Pytester, user: Path, recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tools called directly and by the agent, from the recordings: in the other
    order, by an SDK reporting another version, each recorded exchange played once."""
    import yaml

    stored = yaml.safe_load(recorded.read_text("utf-8"))["interactions"]
    urls = [i["request"]["url"] for i in stored]
    stdio = [url for url in urls if url == "stdio:python%20calc_server.py"]
    assert stdio, urls
    assert any(url.startswith("http://127.0.0.1:") for url in urls)
    initializes = [i for i in stored if i["request"].get("json", {}).get("method") == "initialize"]
    assert len(initializes) > 2  # a session per get_tools() and per call, on each server
    user.unlink()  # the stdio server cannot start; the HTTP one is stopped
    monkeypatch.setenv("MCP_REVERSE", "1")
    monkeypatch.setenv("MCP_CLIENT_VERSION", "99.0.0")
    run(pytester, "--agentreplay-strict").assert_outcomes(passed=2)
    assert results(pytester) == {
        "tools": {
            "names": ["add", "backwards", "repeat", "shout"],
            "texts": ["ababab", "HI", "cba", "3"],
            "unplayed": [],
        },
        "agent": {"tool_results": ["cba", "3"], "unplayed": []},
    }


def test_the_plugin_imports_under_mcp_1() -> None:
    """Nothing in the package needs mcp 2 at import time: every module imports here,
    but for the two whose optional dependency the ``mcp1`` extra leaves out."""
    import mcp

    import pytest_agentreplay

    assert Version(version("mcp")).major == 1, mcp.__file__
    missing = {}
    prefix = f"{pytest_agentreplay.__name__}."
    for module in pkgutil.walk_packages(pytest_agentreplay.__path__, prefix):
        if module.name.endswith(".__main__"):  # runs the command line
            continue
        try:
            importlib.import_module(module.name)
        except ModuleNotFoundError as exc:
            missing[module.name] = exc.name
    assert missing == {
        "pytest_agentreplay.snapshot.syrupy_ext": "syrupy",
        "pytest_agentreplay.transport.aio_stream": "aiohttp",
    }


def test_an_unrecorded_stdio_server_is_not_started_in_replay(
    pytester: pytest.Pytester, recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = pytester.path / "other_server.py"
    canary = pytester.path / "started"
    other.write_text(f"open({str(canary)!r}, 'w').close()\n")
    monkeypatch.setenv("MCP_SCRIPT", str(other))
    result = run(pytester, "-k", "test_tools")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*StdioServerNotRecorded*'python other_server.py' is not in cassette*"]
    )
    assert not canary.exists()


def test_a_fake_tool_server_serves_langchain_mcp_adapters(scripted_tools: Any) -> None:
    """The scripted fake needs no mcp 2: mcp 1.x's clients, under the adapters, reach
    it over Streamable HTTP (in-process) and over stdio (its relay)."""
    import asyncio

    from langchain_mcp_adapters.client import MultiServerMCPClient

    city = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    scripted_tools.tool(
        "weather", "Rain.", input_schema=city, respond=lambda args: f"Sun in {args['city']}."
    )
    client = MultiServerMCPClient(
        {
            "http": {"transport": "streamable_http", "url": scripted_tools.url},
            "stdio": {"transport": "stdio", **scripted_tools.stdio_command().params()},
        }
    )

    async def main() -> list[Any]:
        http = await client.get_tools(server_name="http")
        stdio = await client.get_tools(server_name="stdio")
        assert [t.name for t in http] == [t.name for t in stdio] == ["weather"]
        return [
            await http[0].ainvoke({"city": "Leeds"}),
            await stdio[0].ainvoke({"city": "York"}),
        ]

    answers = asyncio.run(main())
    texts = [a if isinstance(a, str) else "".join(b["text"] for b in a) for a in answers]
    assert texts == ["Rain.", "Sun in York."]
    assert [(c.tool, c.arguments, c.transport, c.outcome) for c in scripted_tools.log] == [
        ("weather", {"city": "Leeds"}, "http", "completed"),
        ("weather", {"city": "York"}, "stdio", "completed"),
    ]
