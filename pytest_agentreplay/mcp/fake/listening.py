"""A fake tool server on a real loopback port: for the stdio relay, and for clients in
other processes or languages. The same script, holds and call log as in-process."""

from __future__ import annotations

from types import TracebackType
from typing import Generic, Protocol, TypeVar

from ...transport.router import Handler
from ...transport.server import ModelServer

__all__ = ["ToolServerListener"]


class _Checked(Handler, Protocol):
    """What the listener serves: a handler that checks itself at the end
    (:class:`~.server.FakeToolServer`; named by its shape, so that this module and
    :mod:`.server`, which builds listeners, do not import each other)."""

    def verify(self) -> None: ...


T = TypeVar("T", bound=_Checked)


class ToolServerListener(ModelServer, Generic[T]):
    """A :class:`~.server.FakeToolServer` served on a loopback port; ``url`` is its MCP
    endpoint (``http://127.0.0.1:PORT/mcp``), ``tools`` the fake. As a context manager
    it closes the port at the end of the block, then checks the fake."""

    def __init__(self, tools: T, *, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(tools, host=host, port=port)
        self.tools: T = tools

    @property
    def url(self) -> str:
        """The MCP endpoint, ``http://127.0.0.1:PORT/mcp``."""
        return f"{super().url}/mcp"

    def __exit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc: BaseException | None = None,
        tb: TracebackType | None = None,
    ) -> None:
        self.close()
        if exc_type is None:
            self.tools.verify()
