"""Issue 18, item 17: a block of comments only (``: PROCESSING`` then a blank line, as
some OpenAI-compatible gateways send while a model thinks) is replayed byte for byte.

It dispatches no event, so the decoder attached its comment to the next event and
dropped its blank line: the replay was one byte short of the recording. Recorded
live through the plugin, written, read back and replayed, the bytes are the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest

from pytest_agentreplay.cassettes.cassette import Cassette
from pytest_agentreplay.cassettes.handle import AgentReplay
from pytest_agentreplay.cassettes.io import load, save
from pytest_agentreplay.cassettes.replay import playback_for
from pytest_agentreplay.sse import SSEEvent, decode, encode
from pytest_agentreplay.transport.answer import Plan
from tests.servers import ProviderServer

CHUNK = b'data: {"choices":[{"delta":{"content":"Hi"}}]}\n\n'
BODIES = {
    "before-first-event": b": PROCESSING\n\n" + CHUNK + b"data: [DONE]\n\n",
    "between-events": CHUNK + b": PROCESSING\n\n" + CHUNK + b"data: [DONE]\n\n",
    "several-blocks": b": PROCESSING\n\n:\n\n: a\n: b\n\n" + CHUNK + b"data: [DONE]\n\n",
    "comment-then-event": b": PROCESSING\n\n: attached\n" + CHUNK,
}


@pytest.fixture
def agentreplay_config(tmp_path: Path) -> dict[str, Any]:
    return {"cassette": str(tmp_path / "sse.yaml"), "record_mode": "all"}


@pytest.mark.parametrize("body", BODIES.values(), ids=BODIES.keys())
def test_a_comment_only_block_replays_byte_identically(
    agentreplay: AgentReplay, server: ProviderServer, tmp_path: Path, body: bytes
) -> None:
    server.add_raw([body[:7], body[7:]], headers={"content-type": "text/event-stream"})
    with httpx2.stream("POST", server.url + "/v1/chat/completions", json={}) as response:
        live = b"".join(response.iter_bytes())
    assert live == body
    path = tmp_path / "saved.yaml"
    save(path, Cassette(interactions=[agentreplay.recorded[-1]]))
    [interaction] = load(path).interactions
    playback = playback_for(
        interaction, method="POST", path="/v1/chat/completions", fault=None, plan=Plan()
    )
    replayed = b"".join(playback.events)
    assert replayed == body, f"{len(replayed)} bytes replayed, {len(body)} recorded"


def test_the_blank_line_is_a_none_among_the_comments() -> None:
    [event] = decode(b": PROCESSING\n\n: x\ndata: 1\n\n", keep_comments=True).events
    assert event == SSEEvent(data="1", comments=("PROCESSING", None, "x"))
    assert encode([event], comments=True) == b": PROCESSING\n\n: x\ndata: 1\n\n"
    assert decode(b": PROCESSING\n\ndata: 1\n\n").events == [SSEEvent(data="1")]


def test_a_cassette_written_by_hand_may_hold_the_blank_line_as_null(tmp_path: Path) -> None:
    path = tmp_path / "hand.yaml"
    path.write_text(
        "version: 1\ninteractions:\n- request: {method: POST, url: 'https://x.test/v1'}\n"
        "  response:\n    status: 200\n    headers: {content-type: text/event-stream}\n"
        "    events:\n    - {comments: [PROCESSING, null], data: '1'}\n"
    )
    [interaction] = load(path).interactions
    [event] = interaction.response.events or []
    assert event.comments == ["PROCESSING", None]
