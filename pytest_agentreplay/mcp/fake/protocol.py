"""The JSON-RPC 2.0 and MCP framing a fake tool server speaks, without its tools.

What a stateless Streamable HTTP MCP server answers, as the protocol's revisions up to
2025-11-25 (the ``initialize`` handshake) say: a request is answered on its own POST,
as one SSE event (``event: message``) or a JSON body; a notification or a response is
accepted with 202 and no body; there is no session and no GET stream (405). A
``server/discover`` probe of the 2026 protocol gets "method not found", which tells
the SDK's client to fall back to the handshake.
"""

from __future__ import annotations

import json
from typing import Any

from ...sse import SSEEvent, encode
from ...transport.playback import Playback

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "accepted",
    "answer",
    "error",
    "framed",
    "initialize_result",
    "line",
    "negotiate",
    "not_allowed",
    "nothing",
    "result",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The protocol revisions reached through ``initialize`` that the fake speaks."""


def result(request_id: Any, value: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response."""
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def negotiate(requested: Any) -> str:
    """The protocol version to answer ``initialize`` with: the client's, when the fake
    speaks it, else the newest the fake speaks (the client then decides)."""
    return requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]


def initialize_result(params: dict[str, Any], name: str, version: str) -> dict[str, Any]:
    """The result of ``initialize``: tools only, no list changes announced."""
    return {
        "protocolVersion": negotiate(params.get("protocolVersion")),
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": name, "version": version},
    }


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


def framed(message: dict[str, Any], *, sse: bool) -> tuple[list[tuple[str, str]], bytes]:
    """The headers and body that carry ``message``: one SSE ``message`` event, or JSON."""
    if sse:
        event = SSEEvent(data=line(message).decode(), event="message")
        headers = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]
        return headers, encode([event])
    return [("content-type", "application/json")], line(message)


def nothing(*, sse: bool) -> Playback:
    """An answer that carries no message: a held call the client cancelled is let go
    with an empty stream (the client stopped waiting for it)."""
    headers = framed({}, sse=sse)[0] if sse else [("content-length", "0")]
    return Playback(status=200 if sse else 202, headers=headers, events=[])


def accepted() -> Playback:
    """202 Accepted, no body: a notification or a response was received."""
    return Playback(status=202, headers=[("content-length", "0")], events=[])


def not_allowed(method: str) -> Playback:
    """405 for a GET (no server-initiated stream) or a DELETE (no session)."""
    body = line(error(None, METHOD_NOT_FOUND, f"{method} is not supported by this server"))
    headers = [("allow", "POST"), ("content-type", "application/json")]
    return Playback(status=405, headers=headers, events=[body])


def answer(message: dict[str, Any], *, sse: bool, status: int = 200) -> Playback:
    """A whole response carrying ``message``."""
    headers, body = framed(message, sse=sse)
    return Playback(status=status, headers=headers, events=[body])
