"""The playback fast paths (issue 9) send exactly what the general paths send.

``encode_lazily`` builds the usual event's bytes in one step instead of going through
``SSEEncoder``; a :class:`Delivery` with one chunk per event, no gates and no pacing
skips the chunking machinery. Both must be invisible: same bytes, same event counts,
same endings, same errors.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pytest_agentreplay import sse
from pytest_agentreplay.cassettes.cassette import RecordedEvent
from pytest_agentreplay.errors import SSEEncodeError
from pytest_agentreplay.sse import SSEEvent
from pytest_agentreplay.transport.chunking import Chunking
from pytest_agentreplay.transport.delivery import Delivery
from pytest_agentreplay.transport.encode import encode_lazily
from pytest_agentreplay.transport.playback import Playback

_LINE = st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n")
_ANY = st.characters(blacklist_categories=("Cs",))


@st.composite
def _events(draw: st.DrawFn) -> list[SSEEvent]:
    """Mostly plain events, with every field the fast path must hand back sprinkled in."""
    out = []
    last_id = ""
    for _ in range(draw(st.integers(0, 8))):
        if draw(st.integers(0, 4)) == 0:
            last_id = draw(st.text(_LINE, max_size=4))
        out.append(
            SSEEvent(
                data=draw(st.text(_ANY, max_size=12) | st.sampled_from(["", "a\nb", "\n"])),
                event=draw(st.none() | st.just("") | st.text(_ANY, min_size=1, max_size=8)),
                id=last_id,
                retry=draw(st.none() | st.none() | st.integers(0, 9)),
                comments=tuple(draw(st.lists(st.text(_LINE, max_size=5), max_size=2))),
            )
        )
    return out


def _general(events: list[SSEEvent], comments: bool) -> bytes:
    encoder = sse.SSEEncoder(comments=comments)
    return b"".join(encoder.encode(e) for e in events)


@given(_events(), st.booleans())
def test_encode_lazily_writes_what_the_encoder_writes(
    events: list[SSEEvent], comments: bool
) -> None:
    try:
        want: bytes | type[SSEEncodeError] = _general(events, comments)
    except SSEEncodeError:
        want = SSEEncodeError
    try:
        got: bytes | type[SSEEncodeError] = b"".join(encode_lazily(events, comments=comments))
    except SSEEncodeError:
        got = SSEEncodeError
    assert got == want


@given(_events(), st.booleans())
def test_stored_events_encode_as_their_sse_events(events: list[SSEEvent], comments: bool) -> None:
    try:
        stored = [RecordedEvent.from_sse(e) for e in events]
    except ValueError:  # a CR in data, a line break in a name: not storable
        assume(False)
    try:
        want: bytes | type[SSEEncodeError] = _general([e.to_sse() for e in stored], comments)
    except SSEEncodeError:
        want = SSEEncodeError
    try:
        got: bytes | type[SSEEncodeError] = b"".join(encode_lazily(stored, comments=comments))
    except SSEEncodeError:
        got = SSEEncodeError
    assert got == want


def test_an_id_set_mid_stream_is_written_once_and_then_tracked() -> None:
    events = [SSEEvent("a"), SSEEvent("b", id="7"), SSEEvent("c", id="7"), SSEEvent("d")]
    assert b"".join(encode_lazily(events)) == sse.encode(events)
    assert b"".join(encode_lazily(events)).count(b"id:") == 2  # set, then reset


class _Raiser:
    def cut(self) -> BaseException:
        return ConnectionError("cut")

    def timeout(self) -> BaseException:
        return TimeoutError("timeout")


def _via_general_path(events: Iterator[bytes]) -> Iterator[bytes]:
    """What ``Chunking.PER_EVENT`` does, as a different chunker object: the general path."""
    yield from events


def _play(
    events: list[bytes], deliver: int | None, ending: str, general: bool
) -> tuple[list[tuple[bytes, int]], str | None, str | None]:
    ended: list[tuple[str, int]] = []
    playback = Playback(
        status=200,
        headers=[],
        events=iter(events),
        deliver=deliver,
        ending=ending,  # type: ignore[arg-type]
        chunker=_via_general_path if general else Chunking.PER_EVENT,
        on_end=lambda outcome, sent: ended.append((outcome, sent)),
    )
    delivery = Delivery(playback, _Raiser())
    seen: list[tuple[bytes, int]] = []
    error = None
    try:
        for chunk in delivery.iterate():
            seen.append((chunk, delivery.events_sent))
    except (ConnectionError, TimeoutError) as exc:
        error = type(exc).__name__
    assert len(ended) == 1
    return seen, error, f"{ended[0][0]}:{ended[0][1]}"


@given(
    st.lists(st.binary(max_size=5), max_size=6),
    st.none() | st.integers(0, 7),
    st.sampled_from(["complete", "cut", "timeout"]),
)
def test_one_chunk_per_event_plays_as_the_general_path(
    events: list[bytes], deliver: int | None, ending: str
) -> None:
    assert _play(events, deliver, ending, general=False) == _play(
        events, deliver, ending, general=True
    )


@pytest.mark.parametrize("general", [False, True])
def test_closing_early_is_a_hang_up_on_both_paths(general: bool) -> None:
    ended: list[str] = []
    playback = Playback(
        status=200,
        headers=[],
        events=iter([b"a", b"b", b"c"]),
        chunker=_via_general_path if general else Chunking.PER_EVENT,
        on_end=lambda outcome, sent: ended.append(f"{outcome}:{sent}"),
    )
    delivery = Delivery(playback, _Raiser())
    chunks = delivery.iterate()
    assert next(chunks) == b"a"
    delivery.close()
    assert ended == ["cancelled:1"]
