"""The command a framework spawns to reach a fake tool server over stdio.

A framework's ``MCPServerStdio`` starts a process and speaks JSON-RPC, one message a
line, on its stdin and stdout. :meth:`FakeToolServer.stdio_command
<.server.FakeToolServer.stdio_command>` gives it :mod:`.relay`: a process of the
standard library alone that posts each line it reads to the fake's loopback port and
writes each answer back as a line, so the script, the holds and the call log stay in
the test's process. Two headers carry what only stdio has: the relay marks its
requests (:data:`RELAY_HEADER`), and the fake tells the relay to die
(:data:`EXIT_HEADER`, a crash or a cut).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["EXIT_HEADER", "RELAY_HEADER", "StdioCommand"]

RELAY_HEADER = "x-agentreplay-transport"
"""Set (to ``stdio``) on every request the relay forwards."""

EXIT_HEADER = "x-agentreplay-exit"
"""On an answer to the relay: write the body as it is (no line end) and exit with
this status."""


@dataclass(frozen=True)
class StdioCommand:
    """A command line: ``command`` and its ``args``."""

    command: str
    args: tuple[str, ...]

    @property
    def argv(self) -> list[str]:
        """The whole command line, as ``subprocess`` takes it."""
        return [self.command, *self.args]

    def params(self) -> dict[str, Any]:
        """``{"command": ..., "args": [...]}``: what openai-agents' ``MCPServerStdio``
        and langchain-mcp-adapters take (``transport="stdio"`` added for the latter)."""
        return {"command": self.command, "args": list(self.args)}
