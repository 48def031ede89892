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
from ..providers import codec_for
from ..providers.base import IdFactory, RenderContext
from ..providers.routes import target
from .cassette import Cassette, Interaction, RecordedEvent, RecordedRequest, RecordedResponse
from .io import save

__all__ = ["from_replies"]

_URLS: dict[str, str] = {
    "anthropic": "https://api.anthropic.com/v1/messages",
    "openai_chat": "https://api.openai.com/v1/chat/completions",
    "openai_responses": "https://api.openai.com/v1/responses",
    "gemini": "https://generativelanguage.googleapis.com/v1beta/models/{model}:{method}",
}


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
        body = dict(request) if request is not None else _default_body(provider, model, stream)
        where = url or _URLS[provider].format(
            model=model, method="streamGenerateContent?alt=sse" if stream else "generateContent"
        )
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


def _default_body(provider: str, model: str, stream: bool) -> dict[str, Any]:
    """The smallest request body ``provider`` accepts, asking ``model`` "Hi"."""
    if provider == "anthropic":
        messages = [{"role": "user", "content": "Hi"}]
        return {"model": model, "max_tokens": 1024, "messages": messages, "stream": stream}
    if provider == "openai_chat":
        return {"model": model, "messages": [{"role": "user", "content": "Hi"}], "stream": stream}
    if provider == "openai_responses":
        return {"model": model, "input": "Hi", "stream": stream}
    return {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
