"""The errors of MCP recording and replay."""

from __future__ import annotations

from ..transport.errors import EgressBlocked

__all__ = ["StdioServerNotRecorded"]


class StdioServerNotRecorded(EgressBlocked):
    """In replay, a framework spawned a stdio MCP server the cassette never recorded.

    The real server is not started in its place (replay sends nothing anywhere, and a
    server is code that may): the test fails, naming the command. Like a cassette
    miss it is a pytest failure outcome, which ``except Exception`` cannot swallow.
    """
