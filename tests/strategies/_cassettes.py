"""Write a cassette of one recorded Anthropic stream, as if it had been recorded."""

from __future__ import annotations

from pathlib import Path

from pytest_agentreplay import Reply
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.io import dumps
from pytest_agentreplay.providers import codec_for
from pytest_agentreplay.providers.base import RenderContext

URL = "https://api.anthropic.com/v1/messages"


def anthropic_stream(request: dict[str, object], *replies: Reply) -> Cassette:
    """One streamed interaction per reply, each answering ``request``."""
    codec = codec_for("anthropic")
    interactions = []
    for reply in replies:
        events = codec.render_events(reply, RenderContext(model="claude-sonnet-4-6"))
        interactions.append(
            Interaction(
                request=RecordedRequest(method="POST", url=URL, json=request),
                response=RecordedResponse(
                    status=200,
                    headers={"content-type": "text/event-stream; charset=utf-8"},
                    events=[
                        RecordedEvent(data=e.data, event=e.event, t=0.01 * i)
                        for i, e in enumerate(events)
                    ],
                ),
            )
        )
    return Cassette(interactions=interactions)


def write(path: Path, cassette: Cassette) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(cassette), encoding="utf-8")
    return path
