"""MCP tool servers: their JSON-RPC traffic recorded, replayed and matched.

An agent run is model calls and tool calls; since 2025 the tool calls go more and more
to MCP servers, over Streamable HTTP or stdio. This package holds what the plugin knows
about them: JSON-RPC 2.0 messages (:mod:`.jsonrpc`), how a cassette matches and answers
them, and stdio servers recorded and replayed by their command.
"""

from __future__ import annotations

__all__: list[str] = []
