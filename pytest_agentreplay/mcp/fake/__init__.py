"""Scripted fake MCP tool servers: the tool side's :class:`~pytest_agentreplay.FakeModel`.

A :class:`FakeToolServer` declares tools with JSON schemas and scripts their answers
(values, ``CallToolResult``s, :class:`ToolFault`s, or functions of the arguments). It
is served in-process at its URL to every HTTP client of the test (the MCP SDK's
Streamable HTTP client and the frameworks on it), on a loopback port
(:meth:`~FakeToolServer.listen`), and over stdio to a framework that spawns
:meth:`~FakeToolServer.stdio_command`. It holds calls (``block()``, ``release()``),
fails them (:class:`ToolFault`) and logs each (:class:`ToolServerCall`: tool,
arguments, outcome, result), and it refuses surprises as a fake model does.

:class:`FakeToolServer` is in :mod:`.server`; the protocol framing in :mod:`.protocol`;
a tool and its checks in :mod:`.tools` and :mod:`.schemas`; answers in :mod:`.results`;
faults in :mod:`.faults`; holds in :mod:`.holds`; the call log in :mod:`.calls`; the
port in :mod:`.listening`; stdio in :mod:`.stdio` and :mod:`.relay`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

if TYPE_CHECKING:
    from .calls import ToolCallOutcome, ToolServerCall
    from .errors import ToolScriptError
    from .faults import ToolFault
    from .listening import ToolServerListener
    from .server import FakeToolServer
    from .stdio import StdioCommand

__all__ = [
    "FakeToolServer",
    "StdioCommand",
    "ToolCallOutcome",
    "ToolFault",
    "ToolScriptError",
    "ToolServerCall",
    "ToolServerListener",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            ".calls": ("ToolCallOutcome", "ToolServerCall"),
            ".errors": ("ToolScriptError",),
            ".faults": ("ToolFault",),
            ".listening": ("ToolServerListener",),
            ".server": ("FakeToolServer",),
            ".stdio": ("StdioCommand",),
        },
    )
