"""How a scripted tool call fails: the tool side's counterpart of a model ``Fault``.

A :class:`ToolFault` is a script item of a fake tool server
(:class:`~.server.FakeToolServer`), in place of a result. The names follow the
model side's where the fault is the same (``cut``, ``stall``); the others are the
ways an MCP server fails that a model provider has no word for:

- ``rpc_error`` — a JSON-RPC error response (the protocol failed: unknown tool,
  invalid params, an internal error);
- ``tool_error`` — a result with ``isError: true`` (the tool ran and failed; the
  model is meant to read it);
- ``stall`` — the response starts (Streamable HTTP: the 200 and its headers) and
  then nothing comes until the test calls ``release()`` or the client gives up;
- ``cut`` — the response ends before the result: the SSE stream drops, the stdio
  server's output stops mid-line and the process ends;
- ``crash`` — the server dies: a stdio server exits with ``exit_code`` before
  answering, an HTTP server drops the connection before any response.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ToolFault", "ToolFaultKind"]

ToolFaultKind = Literal["rpc_error", "tool_error", "stall", "cut", "crash"]


class ToolFault(BaseModel):
    """One way a tool call fails; build it with the class methods."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ToolFaultKind
    code: int = -32603
    message: str = ""
    data: Any = None
    exit_code: int = Field(default=1, ge=0, le=255)

    @classmethod
    def rpc_error(
        cls, code: int = -32603, message: str = "Internal error", data: Any = None
    ) -> ToolFault:
        """A JSON-RPC error response (``-32602`` invalid params, ``-32603`` internal...)."""
        return cls(kind="rpc_error", code=code, message=message, data=data)

    @classmethod
    def tool_error(cls, message: str = "The tool failed.") -> ToolFault:
        """A ``CallToolResult`` with ``isError: true`` and ``message`` as its text."""
        return cls(kind="tool_error", message=message)

    @classmethod
    def stall(cls, then: Any = "") -> ToolFault:
        """Start the response, then send nothing until ``release()`` (or a hang-up);
        once released, answer ``then`` (a value or a ``CallToolResult``)."""
        return cls(kind="stall", data=then)

    @classmethod
    def cut(cls) -> ToolFault:
        """End the response before its result (the stream drops)."""
        return cls(kind="cut")

    @classmethod
    def crash(cls, exit_code: int = 1) -> ToolFault:
        """The server dies before answering (stdio: exits with ``exit_code``)."""
        return cls(kind="crash", exit_code=exit_code)
