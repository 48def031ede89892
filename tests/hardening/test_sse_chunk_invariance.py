"""Item 22: SSE streams split into events exactly as a reference decoder (the WHATWG
algorithm written plainly, tests/test_sse.py) splits them, whatever the network
chunking — while recording (a real server sends the chunks; the recorder decodes
them as they arrive and the client gets the bytes unchanged) and on replay (the
recorded events played back through a random chunking).

Streams are random (``strategies.sse_streams``: events with and without names, ids,
multi-line data, comments, noise, mixed line ends, a BOM) plus one hand-made stream
with each named trap: U+2028 in data, a NUL in an id, a bogus retry, mixed line ends,
a BOM, and cuts inside CRLF and inside UTF-8. A final event without its blank line is
reported as truncated, live and on replay, never silently dropped, and its text is
kept as it arrived.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes.cassette import Interaction, RecordedRequest
from pytest_agentreplay.cassettes.from_wire import response_from_wire, split_stream
from pytest_agentreplay.cassettes.handle import AgentReplay
from pytest_agentreplay.cassettes.replay import playback_for
from pytest_agentreplay.sse import SSEDecoder
from pytest_agentreplay.strategies import Chunking, chunkings, sse_streams
from pytest_agentreplay.transport.answer import Plan
from tests.servers import ProviderServer
from tests.test_sse import reference_decode

TRAPS = (
    b"\xef\xbb\xbfevent: a\r\ndata: line\xe2\x80\xa8sep\r\nid: ok\r\n\r\n"
    b"id: bad\x00id\ndata: nul id ignored\nretry: 12x\n\n"
    b": comment\rdata: caf\xc3\xa9 \xf0\x9f\x90\x8d\rdata: second\r\r"
    b"retry: 3000\r\ndata: \r\n\n"
)
TAIL = b"event: last\ndata: no blank line"
DATALESS_BLOCK = b"data: a\n\nevent: no data, so no event\n\n"
"""A blank line that dispatches nothing still ends the block before the tail."""
CR_AT_A_CHUNK_END = b"data: \n\r\n"
"""Split inside the CRLF of its blank line, the event is dispatched at the CR and the
LF starts the next chunk: it must not start the tail too (found by hypothesis 6.100 in
the lowest CI session)."""
TRAP_CUTS = Chunking(sizes=(1, 2, 3), crlf=True, utf8=True)
STREAMS = sse_streams(max_events=5).map(lambda s: s.body)
URL = "/v1/messages"


def _decoded(chunks: list[bytes]) -> tuple[list[tuple[Any, ...]], bool]:
    """Our incremental decoder's events as the reference's tuples, and whether the
    stream ended mid-event."""
    decoder = SSEDecoder()
    events = [e for chunk in chunks for e in decoder.feed(chunk)]
    return _tuples(events), decoder.finish() is not None


def _tuples(events: Iterable[Any]) -> list[tuple[Any, ...]]:
    """Events as the reference decoder's tuples (its "no id yet" is ``""``)."""
    return [(e.event, e.data, e.id or "", e.retry) for e in events]


@pytest.fixture
def agentreplay_config(tmp_path: Path) -> dict[str, Any]:
    return {"cassette": str(tmp_path / "sse.yaml"), "record_mode": "all"}


def test_recording_splits_any_chunking_like_the_reference_and_passes_bytes_through(
    agentreplay: AgentReplay, server: ProviderServer
) -> None:
    @given(body=STREAMS, chunking=chunkings(), tail=st.booleans())
    @example(body=TRAPS, chunking=TRAP_CUTS, tail=True)
    @example(body=DATALESS_BLOCK, chunking=TRAP_CUTS, tail=True)
    @example(body=CR_AT_A_CHUNK_END, chunking=Chunking(sizes=(), crlf=True), tail=True)
    def check(body: bytes, chunking: Chunking, tail: bool) -> None:
        body += TAIL if tail else b""
        server.add_raw(chunking.split(body), headers={"content-type": "text/event-stream"})
        with httpx2.stream("POST", server.url + URL, json={"stream": True}) as response:
            received = b"".join(response.iter_bytes())
        assert received == body, "the recording tee changed the bytes"
        recorded = agentreplay.recorded[-1].response
        assert recorded.events is not None
        assert _tuples(recorded.events) == reference_decode(body)
        assert (recorded.truncated is not None) == tail
        assert recorded.tail == split_stream(body).get("tail"), "the unfinished event's text"

    check()


def _replayed(body: bytes, chunking: Chunking) -> list[bytes]:
    """The bytes replay sends for a recording of ``body``, cut by ``chunking``."""
    response = response_from_wire(200, [("content-type", "text/event-stream")], body)
    request = RecordedRequest(method="POST", url="https://api.example.com" + URL)
    playback = playback_for(
        Interaction(request=request, response=response),
        method="POST",
        path=URL,
        fault=None,
        plan=Plan(),
    )
    return list(chunking(iter(playback.events)))


@given(body=STREAMS, chunking=chunkings(), tail=st.booleans())
@example(body=TRAPS, chunking=TRAP_CUTS, tail=True)
def test_replay_under_any_chunking_decodes_like_the_reference(
    body: bytes, chunking: Chunking, tail: bool
) -> None:
    body += TAIL if tail else b""
    chunks = _replayed(body, chunking)
    events, truncated = _decoded(chunks)
    assert events == reference_decode(body)
    assert reference_decode(b"".join(chunks)) == events
    assert truncated == tail, "the truncated final event was not played back as such"
