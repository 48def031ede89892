"""Real MCP servers for the tests: the mcp SDK's ``MCPServer`` over Streamable HTTP on a
free loopback port (started in-test, in a thread), and the same tools as a stdio script.

The network is closed in tests: recording needs a live server, so the tests start one;
replaying stops it (or never starts it) and the cassette answers.
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CALC_TOOLS = '''

@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()
'''
"""The calculator's two tools, on a ``server`` the source before them makes (an
``MCPServer`` here, mcp 1's ``FastMCP`` in tests/mcp/mcp1)."""

TOOLS_SOURCE = (
    """
from mcp.server import MCPServer

server = MCPServer("calc")
"""
    + CALC_TOOLS
)

WORDS_SCRIPT = '''
from mcp.server import MCPServer

server = MCPServer("words")


@server.tool()
def backwards(text: str) -> str:
    """The text backwards."""
    return text[::-1]


if __name__ == "__main__":
    server.run("stdio")
'''
"""A second stdio server, with a tool of its own (an agent with two servers needs two
tool names)."""

STDIO_SCRIPT = (
    TOOLS_SOURCE
    + """

if __name__ == "__main__":
    server.run("stdio")
"""
)


CALLS_SOURCE = """
import os
import mcp.client.session as mcp_session
from mcp_types import Implementation


def tool_calls(monkeypatch):
    \"\"\"The calls the user test makes: add then shout (reversed with MCP_REVERSE),
    from the client version MCP_CLIENT_VERSION when it is set.\"\"\"
    version = os.environ.get("MCP_CLIENT_VERSION")
    if version:
        monkeypatch.setattr(mcp_session, "DEFAULT_CLIENT_INFO",
                            Implementation(name="mcp", version=version))
    order = [("add", {"a": 1, "b": int(os.environ.get("MCP_B", "2"))}),
             ("shout", {"text": "hi"})]
    if os.environ.get("MCP_REVERSE"):
        order.reverse()
    return order
"""
"""The user tests' shared part, at their head: which tool calls they make,
in which order, as which client version."""


def tools_server() -> Any:
    """A fresh two-tool ``MCPServer`` (``add`` and ``shout``)."""
    namespace: dict[str, Any] = {}
    exec(compile(TOOLS_SOURCE, "<mcp tools>", "exec"), namespace)
    return namespace["server"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def http_server(
    *, port: int | None = None, stateless: bool = False, json_response: bool = False
) -> Iterator[str]:
    """Serve the tools over Streamable HTTP on 127.0.0.1; yields the endpoint URL."""
    import uvicorn

    port = port or free_port()
    app = tools_server().streamable_http_app(stateless_http=stateless, json_response=json_response)
    # A client that failed mid-session may leave its GET stream open: the server stops
    # anyway (uvicorn would wait for it for ever).
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the MCP test server did not start")
        threading.Event().wait(0.01)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join()


def stdio_script(folder: Path, *, words: bool = False) -> list[str]:
    """Write a stdio server script into ``folder`` (the calculator, or the words server
    with ``backwards``); the command that runs it."""
    script = folder / ("words_server.py" if words else "calc_server.py")
    script.write_text(WORDS_SCRIPT if words else STDIO_SCRIPT)
    return [sys.executable, str(script)]
