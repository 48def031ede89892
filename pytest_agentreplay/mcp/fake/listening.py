"""A fake tool server on a real loopback port: for the stdio relay, and for clients in
other processes or languages. The same script, holds and call log as in-process."""

from __future__ import annotations

from typing import TypeVar

from ...fakes.listening import Checked, CheckedServer

__all__ = ["ToolServerListener"]

T = TypeVar("T", bound=Checked)


class ToolServerListener(CheckedServer[T]):
    """A :class:`~.server.FakeToolServer` served on a loopback port; ``url`` is its MCP
    endpoint (``http://127.0.0.1:PORT/mcp``), ``tools`` the fake. As a context manager
    it closes the port at the end of the block, then checks the fake. (The fake is
    named by its shape, :class:`~...fakes.listening.Checked`, so that this module and
    :mod:`.server`, which builds listeners, do not import each other.)"""

    def __init__(self, tools: T, *, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(tools, host=host, port=port)
        self.tools: T = tools

    @property
    def url(self) -> str:
        """The MCP endpoint, ``http://127.0.0.1:PORT/mcp``."""
        return f"{super().url}/mcp"
