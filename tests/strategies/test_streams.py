"""``chunkings()`` and ``sse_streams()``: cuts in the hard places, bodies that decode
to the events they promise — through our decoder, chunk by chunk, and the SDKs."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_agentreplay import FakeModel, Reply, sse
from pytest_agentreplay.strategies import Chunking, SSEStream, chunkings, replies, sse_streams
from pytest_agentreplay.transport.chunking import Chunker
from tests.strategies._minimal import minimal

QUICK = settings(max_examples=200, derandomize=True, database=None, deadline=None)
CRLF_AND_UTF8 = "data: naïve ☃ 🐍\r\n\r\n".encode()


def _cuts(chunks: list[bytes]) -> list[int]:
    """The offsets at which ``chunks`` cut their concatenation."""
    offsets, at = [], 0
    for chunk in chunks[:-1]:
        at += len(chunk)
        offsets.append(at)
    return offsets


def _inside_crlf(data: bytes, chunks: list[bytes]) -> bool:
    return any(data[cut - 1 : cut + 1] == b"\r\n" for cut in _cuts(chunks))


def _inside_utf8(data: bytes, chunks: list[bytes]) -> bool:
    return any(0x80 <= data[cut] < 0xC0 for cut in _cuts(chunks))


# --- chunkings ------------------------------------------------------------------------------


@QUICK
@given(chunking=chunkings(), data=st.binary(max_size=200) | st.just(CRLF_AND_UTF8))
def test_chunks_reassemble_to_the_original_bytes(chunking: Chunking, data: bytes) -> None:
    chunks = chunking.split(data)
    assert b"".join(chunks) == data
    assert all(chunks)  # never an empty chunk


@QUICK
@given(chunking=chunkings(), events=st.lists(st.binary(max_size=30), max_size=6))
def test_a_chunking_is_a_chunker_over_events(chunking: Chunking, events: list[bytes]) -> None:
    as_chunker: Chunker = chunking
    assert b"".join(as_chunker(iter(events))) == b"".join(events)


def test_chunkings_include_cuts_inside_crlf_and_inside_utf8() -> None:
    def crlf(c: Chunking) -> bool:
        return _inside_crlf(CRLF_AND_UTF8, c.split(CRLF_AND_UTF8))

    def utf8(c: Chunking) -> bool:
        return _inside_utf8(CRLF_AND_UTF8, c.split(CRLF_AND_UTF8))

    # By size, anywhere (one byte a chunk cuts everywhere): which of the two ways the
    # shrinker prefers depends on hypothesis's release, so ask for sizes alone...
    assert minimal(chunkings(), lambda c: crlf(c) and not (c.crlf or c.utf8)).sizes
    assert minimal(chunkings(), lambda c: utf8(c) and not (c.crlf or c.utf8)).sizes
    # ... and on purpose, whatever the sizes.
    assert minimal(chunkings(), lambda c: crlf(c) and not c.sizes) == Chunking(crlf=True)
    assert minimal(chunkings(), lambda c: utf8(c) and not c.sizes) == Chunking(utf8=True)
    every_byte = minimal(chunkings(), lambda c: len(c.split(CRLF_AND_UTF8)) == len(CRLF_AND_UTF8))
    assert every_byte == Chunking(sizes=(1,))


def test_the_simplest_chunking_is_the_whole_body() -> None:
    assert minimal(chunkings()) == Chunking()
    assert Chunking().split(CRLF_AND_UTF8) == [CRLF_AND_UTF8]


def test_the_hard_cuts_are_where_they_should_be() -> None:
    data = "a\r\nb€\r\n".encode()
    assert Chunking(crlf=True).split(data) == [b"a\r", b"\nb\xe2\x82\xac\r", b"\n"]
    assert Chunking(utf8=True).split(data) == [b"a\r\nb\xe2", b"\x82\xac\r\n"]
    assert Chunking(sizes=(2, 3)).split(data) == [b"a\r", b"\nb\xe2", b"\x82\xac", b"\r\n"]
    assert Chunking(events=True)(iter([b"ab", b"", b"c"])) is not None
    assert list(Chunking(events=True)(iter([b"ab", b"", b"c"]))) == [b"ab", b"c"]


def test_a_crlf_split_across_events_is_still_cut_between_cr_and_lf() -> None:
    assert list(Chunking(crlf=True)(iter([b"x\r", b"\ny"]))) == [b"x\r", b"\ny"]


def test_chunks_are_handed_over_as_soon_as_they_are_known() -> None:
    pulled: list[bytes] = []

    def events() -> Iterator[bytes]:
        for event in (b"abcd", b"efgh", b"ijkl"):
            pulled.append(event)
            yield event

    chunks = Chunking(sizes=(3,))(events())
    assert next(chunks) == b"abc"
    assert pulled == [b"abcd"]  # the rest is not read yet


def test_chunk_sizes_must_be_positive() -> None:
    with pytest.raises(ValueError, match=">= 1"):
        Chunking(sizes=(0,))
    with pytest.raises(ValueError, match=">= 1"):
        chunkings(max_size=0)


@settings(max_examples=40, derandomize=True, database=None, deadline=None)
@given(chunking=chunkings(), reply=replies(tool_calls=False, thinking=False))
def test_the_sdk_reads_the_same_reply_under_any_chunking(chunking: Chunking, reply: Reply) -> None:
    with FakeModel(reply, chunking=chunking):
        client = anthropic.Anthropic(api_key="test", max_retries=0)
        with client.messages.stream(
            model="m", max_tokens=99, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            text = "".join(stream.text_stream)
    assert text == reply.text_content


# --- SSE streams --------------------------------------------------------------------------


@QUICK
@given(stream=sse_streams())
def test_sse_streams_decode_to_the_events_they_promise(stream: SSEStream) -> None:
    decoded = sse.decode(stream.body, keep_comments=True)
    assert decoded.truncated is None
    assert tuple(decoded.events) == stream.events
    without = sse.decode(stream.body)
    assert [e.comments for e in without.events] == [()] * len(stream.events)


@QUICK
@given(stream=sse_streams(), chunking=chunkings())
def test_sse_streams_decode_the_same_in_any_chunking(stream: SSEStream, chunking: Chunking) -> None:
    decoder = sse.SSEDecoder(keep_comments=True)
    events = [e for chunk in chunking.split(stream.body) for e in decoder.feed(chunk)]
    assert decoder.finish() is None
    assert tuple(events) == stream.events


@QUICK
@given(stream=sse_streams(comments=False))
def test_our_encoder_writes_the_events_back(stream: SSEStream) -> None:
    body = sse.encode(stream.events)
    assert tuple(sse.decode(body).events) == stream.events


@pytest.mark.parametrize(
    ("condition", "what"),
    [
        (lambda s: s.body.startswith(b"\xef\xbb\xbf"), "a BOM"),
        (lambda s: b"\r\n" in s.body, "CRLF"),
        (lambda s: b"\r" in s.body.replace(b"\r\n", b""), "a lone CR"),
        (lambda s: any("\n" in e.data for e in s.events), "multi-line data"),
        (lambda s: any(e.comments for e in s.events), "a comment"),
        (lambda s: any(e.id for e in s.events), "an id"),
        (lambda s: any(e.retry is not None for e in s.events), "a retry"),
        (lambda s: b"\nfoo" in s.body or s.body.startswith(b"foo"), "an unknown field"),
        (lambda s: len(set(s.line_ends)) > 1, "mixed line ends"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_sse_streams_cover(condition: object, what: str) -> None:
    minimal(sse_streams(), condition)  # type: ignore[arg-type]  # raises if never found


def test_sse_streams_shrink_to_the_smallest_stream() -> None:
    assert minimal(sse_streams()) == SSEStream(events=(), body=b"")
    one = minimal(sse_streams(), lambda s: len(s.events) == 1)
    assert one.body == b"data: \n\n"
    assert one.events == (sse.SSEEvent(data=""),)


def test_sse_streams_options() -> None:
    stream = minimal(
        sse_streams(data=st.just("x"), min_events=2, line_ends=("\r",), bom=True, noise=False)
    )
    assert stream.body == b"\xef\xbb\xbfdata: x\r\rdata: x\r\r"
    assert stream.text.startswith("\ufeff")
    with pytest.raises(ValueError, match="line_ends"):
        sse_streams(line_ends=("\n\r",))
    with pytest.raises(ValueError, match="min_events"):
        sse_streams(min_events=3, max_events=2)
