"""A replayed response's stream lets go of its delivery once closed (issue 29).

A module's ``Response`` and the stream the client wraps it in refer to each other,
so only the cyclic garbage collector frees them. The delivery, its playback, headers
and body used to hang from that cycle; a closed stream now holds a stand-in that
reads as a closed delivery does (nothing more, no second ending), and the rest is
freed by reference counting. A recording's tee is kept: its live body decides.

Each test plays a body of one event (sent whole, by a ``WholeBody``) and of two (by a
delivery).
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import httpx
import pytest

from pytest_agentreplay.transport.family import Family
from pytest_agentreplay.transport.playback import Playback
from pytest_agentreplay.transport.tee import Tee

FAMILY = Family("httpx", httpx)
REQUEST = httpx.Request("POST", "https://api.example.com/v1/messages")


BODIES = {"whole": [b'{"ok": true}'], "delivered": [b'{"ok": ', b"true}"]}
bodies = pytest.mark.parametrize("body", list(BODIES))


def _playback(ends: list[tuple[str, int]], body: str) -> Playback:
    return Playback(
        status=200,
        headers=[("content-type", "application/json")],
        events=list(BODIES[body]),
        on_end=lambda outcome, sent: ends.append((outcome, sent)),
    )


@bodies
def test_a_closed_sync_stream_frees_its_playback_without_the_collector(body: str) -> None:
    ends: list[tuple[str, int]] = []
    playback = _playback(ends, body)
    watched = weakref.ref(playback)
    response = FAMILY.start(REQUEST, playback, sync=True)
    del playback
    gc.disable()
    try:
        assert response.read() == b'{"ok": true}'  # read to the end: closes the stream
        assert watched() is None  # freed at once, the response still alive
    finally:
        gc.enable()
    assert ends == [("completed", len(BODIES[body]))]
    assert list(response.stream) == []  # read again: nothing more, as a closed delivery
    response.stream.close()
    assert ends == [("completed", len(BODIES[body]))]  # and the call ended once


@bodies
def test_a_closed_async_stream_frees_its_playback_without_the_collector(body: str) -> None:
    ends: list[tuple[str, int]] = []

    async def run() -> list[bytes]:
        playback = _playback(ends, body)
        watched = weakref.ref(playback)
        response = FAMILY.start(REQUEST, playback, sync=False)
        del playback
        assert await response.aread() == b'{"ok": true}'
        assert watched() is None
        again = [chunk async for chunk in response.stream]
        await response.stream.aclose()
        return again

    gc.disable()
    try:
        assert asyncio.run(run()) == []
    finally:
        gc.enable()
    assert ends == [("completed", len(BODIES[body]))]


@bodies
def test_a_stream_closed_before_it_was_read_ends_the_call_cancelled_once(body: str) -> None:
    ends: list[tuple[str, int]] = []
    response = FAMILY.start(REQUEST, _playback(ends, body), sync=True)
    response.close()
    assert ends == [("cancelled", 0)]
    assert list(response.stream) == []
    response.close()
    assert ends == [("cancelled", 0)]


class _Sink:
    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.ends: list[str] = []

    def chunk(self, data: bytes) -> None:
        self.chunks.append(data)

    def end(self, how: str) -> None:
        self.ends.append(how)


class _Live:
    """A live body that can be read again after it was closed (what a tee passes on)."""

    def __init__(self) -> None:
        self.closed = 0

    def __iter__(self) -> Iterator[bytes]:
        return iter([b"a", b"b"])

    def close(self) -> None:
        self.closed += 1


def test_a_closed_tee_stays_its_streams_body() -> None:
    sink, live = _Sink(), _Live()
    stream = FAMILY.sync_stream(Tee(live, sink, FAMILY.classify))
    stream.close()
    assert sink.ends == ["cancelled"] and live.closed == 1
    assert list(stream) == [b"a", b"b"]  # the live body decides, as before
    assert sink.ends == ["cancelled"]  # the first ending counts
