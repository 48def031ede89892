"""A cassette miss on a JSON-RPC request, answered the way the protocol answers.

A miss on a model call raises the miss report in the client, which fails the test.
An MCP client sends its requests from a task group and waits for the answer on
another task: the report raised in the sender never reached the waiter, and the test
hung (issue 31). So a JSON-RPC request that matches no recording is answered with a
JSON-RPC error whose message is the miss report (the closest recording and how it
differs); a notification is accepted (``202``) as a server would. The session keeps
the report, and the test fails with it even if the client swallowed the error.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ..transport.playback import Playback
from . import jsonrpc

__all__ = ["answer_miss"]


def answer_miss(
    live_body: bytes, report: str, on_end: Callable[[str, int], None] | None = None
) -> Playback | None:
    """The answer to a JSON-RPC request (or batch) that matched nothing: an error
    response per request, carrying ``report``; ``202`` for notifications alone.
    ``None`` when the body is not JSON-RPC (the miss is raised as usual)."""
    value = jsonrpc.messages_of(live_body)
    if value is None:
        return None
    ids = jsonrpc.request_ids(value)
    if not ids:
        return Playback(status=202, headers=[("content-length", "0")], events=[], on_end=on_end)
    message = f"agentreplay: cassette miss: {report}"
    errors = [jsonrpc.error_response(i, jsonrpc.SERVER_ERROR, message) for i in ids]
    body = json.dumps(errors if isinstance(value, list) else errors[0]).encode("utf-8")
    headers = [("content-type", "application/json"), ("content-length", str(len(body)))]
    return Playback(status=200, headers=headers, events=[body], on_end=on_end)
