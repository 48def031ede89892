"""What a fake tool server saw: one :class:`ToolServerCall` per ``tools/call``.

The tool side's :class:`~pytest_agentreplay.neutral.ModelCall`: the tool, the arguments
as the client sent them, and how the call ended — the result or the JSON-RPC error
the client was sent, or why it got neither. A call is logged when it arrives
(``outcome`` ``None`` while it runs) and ended once: the first ending counts, so a
call that was cancelled and then released is still ``cancelled``. Run logs read these
(``RunLog.watch(tool_server)``), and so do the invariants.
"""

from __future__ import annotations

import threading
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ToolCallLog", "ToolCallOutcome", "ToolServerCall", "ToolTransport"]

ToolCallOutcome = Literal["completed", "tool_error", "rpc_error", "cut", "crashed", "cancelled"]
"""How a tool call ended: ``completed`` (a result), ``tool_error`` (a result with
``isError``), ``rpc_error`` (a JSON-RPC error), ``cut`` (the response ended before the
result), ``crashed`` (the server died), ``cancelled`` (the client gave up or sent
``notifications/cancelled`` first)."""

ToolTransport = Literal["http", "stdio"]

FAILED: frozenset[str] = frozenset({"tool_error", "rpc_error", "cut", "crashed", "cancelled"})
"""The outcomes that are not a result the tool gave."""


class ToolServerCall(BaseModel):
    """One ``tools/call`` a fake tool server received, and how it ended."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int = Field(ge=0)
    server: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    transport: ToolTransport = "http"
    request_id: str | int | None = None
    outcome: ToolCallOutcome | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None

    @property
    def ended(self) -> bool:
        """Whether the call has ended (it has an outcome)."""
        return self.outcome is not None

    @property
    def failed(self) -> bool:
        """Whether it ended without a result the tool gave (an ``isError`` result counts)."""
        return self.outcome in FAILED

    @property
    def text(self) -> str:
        """The text blocks of its result, joined (``""`` without a result)."""
        content = (self.result or {}).get("content") or []
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))


class ToolCallLog:
    """The calls of one fake tool server, in arrival order (thread-safe)."""

    def __init__(self, server: str) -> None:
        self.server = server
        self._lock = threading.Lock()
        self._calls: list[ToolServerCall] = []

    def open(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        transport: ToolTransport,
        request_id: str | int | None,
    ) -> int:
        """Log a call that arrived; returns its index."""
        with self._lock:
            index = len(self._calls)
            self._calls.append(
                ToolServerCall(
                    index=index,
                    server=self.server,
                    tool=tool,
                    arguments=arguments,
                    transport=transport,
                    request_id=request_id,
                )
            )
        return index

    def ended(
        self,
        index: int,
        outcome: ToolCallOutcome,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> bool:
        """Call ``index`` ended; ``False`` (and nothing changes) if it had already."""
        with self._lock:
            call = self._calls[index]
            if call.outcome is not None:
                return False
            update = {"outcome": outcome, "result": result, "error": error}
            self._calls[index] = call.model_copy(update=update)
        return True

    def outcome(self, index: int) -> ToolCallOutcome | None:
        with self._lock:
            return self._calls[index].outcome

    def close_open(self) -> None:
        """End the calls still running as ``cancelled`` (the test is over)."""
        for call in self.all():
            if call.outcome is None:
                self.ended(call.index, "cancelled")

    def all(self) -> list[ToolServerCall]:
        """Every call, running ones included (``outcome`` ``None``)."""
        with self._lock:
            return list(self._calls)

    def find(self, request_id: str | int | None, transport: ToolTransport) -> int | None:
        """The running call with this JSON-RPC id on ``transport`` (what a
        ``notifications/cancelled`` names)."""
        with self._lock:
            for call in reversed(self._calls):
                if (
                    call.outcome is None
                    and call.request_id == request_id
                    and call.transport == transport
                ):
                    return call.index
        return None
