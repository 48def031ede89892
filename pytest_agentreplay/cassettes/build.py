"""A cassette built from replies, without a server or a recording session.

:func:`from_replies` renders each :class:`~..neutral.Reply` the way the provider
would have sent it (its SSE events, or its JSON body) with the provider codec a
fake model uses, and pairs it with the request the agent sends. Issue 20: this
took six imports, ``RenderContext`` among them; now it is one call.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..neutral import Provider, Reply, Request
from ..providers import IdFactory, RenderContext, codec_for, target
from ..providers.catalog import facts
from .cassette import Cassette, Interaction, RecordedEvent, RecordedRequest, RecordedResponse
from .io import save

__all__ = ["from_replies"]


def from_replies(
    *replies: Reply | str,
    provider: Provider = "anthropic",
    stream: bool = True,
    request: Mapping[str, Any] | None = None,
    model: str = "fake-model",
    url: str | None = None,
    seed: str = "agentreplay",
    path: str | Path | None = None,
) -> Cassette:
    """A cassette holding one interaction per reply, as ``provider`` sends it:
    streamed (SSE events) when ``stream``, else a JSON body.

    ``request`` is the request body every interaction records (by default a minimal
    one asking ``model`` a question), ``url`` its URL (by default the provider's).
    Replay matches the body by default, so for the ``agentreplay`` marker pass the
    body your agent sends, or match on ``["method", "uri"]``; the parity check
    (``assert_stream_parity(cassette=...)``) serves the interactions in order.
    ``seed`` makes the ids reproducible; with ``path`` the cassette is also saved
    there (scrubbed and written atomically, as recording does).
    """
    codec = codec_for(provider)
    entry = facts(provider)
    ids = IdFactory(seed)
    interactions = []
    for number, item in enumerate(replies):
        reply = Reply.text(item) if isinstance(item, str) else item
        if not isinstance(reply, Reply):
            raise TypeError(f"from_replies: reply #{number} is {item!r}, not a Reply or a str")
        if reply.fault is not None:
            raise ValueError(
                f"from_replies: reply #{number} carries a fault ({reply.fault.kind}); a "
                f"cassette records answers. Inject faults at replay with "
                f"agentreplay.inject(fault, at_call={number})."
            )
        body = dict(request) if request is not None else entry.minimal_body(model, stream)
        where = url or entry.url(model, stream=stream)
        parsed = codec.parse_call("POST", target(where), body)
        ctx = RenderContext(model=model, request=parsed, ids=ids)
        interactions.append(
            Interaction(
                request=RecordedRequest(method="POST", url=where, json=body),
                response=_response(codec, reply, ctx, parsed),
            )
        )
    cassette = Cassette(interactions=interactions)
    if path is not None:
        save(path, cassette)
    return cassette


def _response(codec: Any, reply: Reply, ctx: RenderContext, parsed: Request) -> RecordedResponse:
    if parsed.stream:
        events = codec.render_events(reply, ctx)
        return RecordedResponse(
            status=200,
            headers={"content-type": codec.stream_content_type},
            events=[RecordedEvent.from_sse(e) for e in events],
        )
    return RecordedResponse(
        status=200,
        headers={"content-type": codec.json_content_type},
        json=codec.render_body(reply, ctx),
    )
