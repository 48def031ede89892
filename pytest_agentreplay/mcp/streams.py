"""The standalone GET stream of a Streamable HTTP MCP server.

A stateful server lets the client open a GET stream for messages the server starts
(notifications, requests). A live server holds it open until the client closes it;
when it ends, the client opens another one a second later. A recording of it is
therefore not one answer to play once: replay holds it open after its recorded events
and answers a reconnect the same way, with no events (issue 31: the reconnect missed
inside the transport's task group, ``consumed``, and the session failed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..transport.router import SentHeaders, decode_headers

if TYPE_CHECKING:
    from ..cassettes.cassette import Interaction
    from ..transport.answer import Plan
    from ..transport.gate import Gate

__all__ = ["MCP_HEADERS", "held_open", "is_standalone_stream"]

MCP_HEADERS = frozenset({"mcp-session-id", "mcp-protocol-version"})
"""Request headers only an MCP client sends over Streamable HTTP."""


def is_standalone_stream(method: str, headers: SentHeaders) -> bool:
    """Whether a request opens an MCP server's standalone stream: a GET that accepts
    ``text/event-stream`` and carries an MCP session or protocol header. ``headers``
    are the request's, decoded or as the client module holds them (bytes): only a
    GET's are read."""
    if method.upper() != "GET":
        return False
    names = {k.lower(): v for k, v in decode_headers(headers)}
    return not MCP_HEADERS.isdisjoint(names) and "text/event-stream" in names.get("accept", "")


def held_open(interaction: Interaction, plan: Plan, gate: Gate, *, again: bool) -> Interaction:
    """A recorded standalone stream as a live server serves it: its recorded events
    (none on a reconnect, ``again``), then held at ``gate`` (opened when the test
    ends) until the client closes it, however the recording ended."""
    response = interaction.response
    if response.events is None:
        return interaction
    events = [] if again else response.events
    plan.extra_gates[len(events)] = gate
    return interaction.replace(response=response.replace(events=events, end="complete"))
