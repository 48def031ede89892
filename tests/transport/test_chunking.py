"""The chunking presets cut exactly where the chunkers they replaced cut.

``"event"``, ``"whole"``, ``"lines"``, a byte size and seeded random sizes were once
five chunker functions; they are :class:`Chunking` presets now. The functions live
on here as references: for any events, each preset yields the same chunks.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.transport.chunking import Chunking, is_per_event, resolve_chunking

EVENTS = st.lists(st.binary(max_size=12) | st.sampled_from([b"a\r", b"\nb", b"\r\n", b"\r"]))


def _whole(events: Iterator[bytes]) -> Iterator[bytes]:
    body = b"".join(events)
    if body:
        yield body


def _lines(events: Iterator[bytes]) -> Iterator[bytes]:
    for event in events:
        yield from event.splitlines(keepends=True)


def _sized(size: int, events: Iterator[bytes]) -> Iterator[bytes]:
    buffer = b""
    for event in events:
        buffer += event
        while len(buffer) >= size:
            yield buffer[:size]
            buffer = buffer[size:]
    if buffer:
        yield buffer


def _random(seed: int, max_size: int, events: Iterator[bytes]) -> Iterator[bytes]:
    rng = random.Random(seed)
    buffer = b""
    for event in events:
        buffer += event
        while len(buffer) >= max_size:
            size = rng.randint(1, max_size)
            yield buffer[:size]
            buffer = buffer[size:]
    while buffer:
        size = rng.randint(1, max_size)
        yield buffer[:size]
        buffer = buffer[size:]


@given(EVENTS)
def test_whole_and_per_line_cut_as_before(events: list[bytes]) -> None:
    assert list(Chunking.WHOLE(iter(events))) == list(_whole(iter(events)))
    assert list(Chunking.PER_LINE(iter(events))) == list(_lines(iter(events)))


@given(EVENTS)
def test_per_event_hands_over_every_non_empty_event(events: list[bytes]) -> None:
    assert list(Chunking.PER_EVENT(iter(events))) == [e for e in events if e]


@given(EVENTS, st.integers(1, 9))
def test_a_byte_size_cuts_as_before(events: list[bytes], size: int) -> None:
    assert list(Chunking.sized(size)(iter(events))) == list(_sized(size, iter(events)))


@given(EVENTS, st.integers(0, 99), st.integers(1, 9))
def test_seeded_random_sizes_cut_as_before(events: list[bytes], seed: int, most: int) -> None:
    chunking = Chunking.random(seed=seed, max_size=most)
    assert list(chunking(iter(events))) == list(_random(seed, most, iter(events)))
    assert list(chunking(iter(events))) == list(chunking(iter(events)))  # reproducible


@pytest.mark.parametrize(
    ("spec", "expected"),
    [("event", Chunking.PER_EVENT), ("whole", Chunking.WHOLE), ("lines", Chunking.PER_LINE)],
)
def test_names_resolve_to_the_presets(spec: str, expected: Chunking) -> None:
    assert resolve_chunking(spec) is expected  # type: ignore[arg-type]


def test_sizes_chunkings_and_functions_resolve_as_given() -> None:
    assert resolve_chunking(7) == Chunking(sizes=(7,))
    chunking = Chunking(crlf=True)
    assert resolve_chunking(chunking) is chunking
    assert resolve_chunking(_whole) is _whole


@pytest.mark.parametrize("spec", ["bytes", True, 0, -3])
def test_anything_else_is_refused(spec: object) -> None:
    with pytest.raises(ValueError, match="chunk"):
        resolve_chunking(spec)  # type: ignore[arg-type]


def test_only_one_chunk_per_event_takes_the_fast_path() -> None:
    assert is_per_event(Chunking.PER_EVENT)
    assert is_per_event(Chunking(events=True))
    assert not is_per_event(Chunking.PER_LINE)
    assert not is_per_event(_whole)


def test_random_sizes_need_a_largest_size() -> None:
    with pytest.raises(ValueError, match="largest size"):
        Chunking(seed=1)
