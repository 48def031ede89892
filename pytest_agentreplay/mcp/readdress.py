"""A recorded MCP (JSON-RPC) answer re-addressed to the live request it now answers.

A JSON-RPC request is matched without its id (:mod:`.jsonrpc`), so the recording that
answers it was made for another id: the client drops a response whose id it did not
send, and waits for ever (issue 31). Here the response's id — in a JSON body, or in the
SSE event that carries it — becomes the live request's, and so does the progress token
of a ``notifications/progress`` event about it.

A Streamable HTTP server names its session in an ``Mcp-Session-Id`` header, and the
client sends it back. A recording made in another session than the live client's (the
same tool called in another order across two sessions) would hand the client a
session id it never opened: the response's header says what the live request said.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..transport.router import SentHeaders, decode_headers
from . import jsonrpc

if TYPE_CHECKING:
    from ..cassettes.cassette import Interaction, RecordedResponse

__all__ = ["SESSION_HEADER", "header", "readdress"]

SESSION_HEADER = "mcp-session-id"

LiveHeaders = Mapping[str, str] | SentHeaders
"""A live request's headers: a mapping, or its (name, value) pairs, decoded or as the
client module holds them (bytes)."""


def header(headers: Mapping[str, str], name: str) -> str | None:
    """The value of header ``name`` (any case), ``None`` when absent."""
    wanted = name.lower()
    if all(map(str.islower, headers)):  # names as a recording stores them: looked up as they are
        return headers.get(wanted)
    if wanted not in map(str.lower, headers):  # the common answer, found without a loop here
        return None
    return next((v for k, v in headers.items() if k.lower() == wanted), None)


def _recorded_value(interaction: Interaction) -> Any:
    request = interaction.request
    if request.json_body is not None:
        return request.json_body
    return jsonrpc.messages_of(request.content())


def _session(response: RecordedResponse, live_headers: LiveHeaders) -> dict[str, str]:
    """The response's headers with its session id set to the one the client sent."""
    recorded = header(response.headers, SESSION_HEADER)
    if recorded is None:  # not an MCP session's answer: the live headers are not read
        return response.headers
    pairs = (
        live_headers if isinstance(live_headers, Mapping) else dict(decode_headers(live_headers))
    )
    live = header(pairs, SESSION_HEADER)
    if live is None or live == recorded:
        return response.headers
    return {k: (live if k.lower() == SESSION_HEADER else v) for k, v in response.headers.items()}


def _body(response: RecordedResponse, ids: Mapping[Any, Any]) -> dict[str, Any]:
    """The fields of ``response``'s body (JSON, text or events) with ids moved."""
    if response.events is not None:
        events = [
            e.replace(data=jsonrpc.rewrite_event_data(e.data, ids)) if e.data else e
            for e in response.events
        ]
        return {"events": events}
    if response.json_body is not None:
        return {"json_body": jsonrpc.rewrite_value(response.json_body, ids)}
    if response.body is not None:
        text = jsonrpc.rewrite_ids(response.body.encode("utf-8"), ids)
        return {"body": text.decode("utf-8")}
    return {}


def readdress(interaction: Interaction, live_body: bytes, live_headers: LiveHeaders) -> Interaction:
    """``interaction`` answering the live request (``live_body``, ``live_headers``: a
    mapping, or the request's pairs, decoded or not, read only for an MCP session's
    answer): response
    ids moved to the live request's, the session header to the client's. The same
    object when nothing changes (anything that is not JSON-RPC)."""
    response = interaction.response
    recorded = _recorded_value(interaction)
    # Only a recorded JSON-RPC request has ids to move: any other request (a model
    # call, every replayed request of most suites) is not parsed again here.
    live = jsonrpc.messages_of(live_body) if jsonrpc.request_ids(recorded) else None
    ids = {} if live is None else jsonrpc.id_map(recorded, live)
    headers = _session(response, live_headers)
    if not ids and headers is response.headers:
        return interaction
    changes: dict[str, Any] = _body(response, ids) if ids else {}
    if headers is not response.headers:
        changes["headers"] = headers
    return interaction.replace(response=response.replace(**changes))
