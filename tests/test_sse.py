"""The SSE decoder and encoder against the WHATWG rules, a reference decoder and both SDKs."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay import sse
from pytest_agentreplay.errors import SSEDecodeError, SSEEncodeError
from pytest_agentreplay.sse import SSEDecoder, SSEEvent, TruncatedStreamError
from tests import corpus

# --- strategies -------------------------------------------------------------------

_LINE_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n")
_NAME = st.text(_LINE_CHARS, min_size=1, max_size=12)
_ID = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n\x00"), max_size=8
)
# Data may hold LF (written as several data lines) but never CR.
_DATA = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=40
) | st.sampled_from(["", "\n", "a\n\nb", " lead", "\u2028", "\ufeff"])


@st.composite
def events(draw: st.DrawFn, *, comments: bool = False) -> list[SSEEvent]:
    out = []
    last_id = ""
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            last_id = draw(_ID)
        out.append(
            SSEEvent(
                data=draw(_DATA),
                event=draw(st.none() | _NAME),
                id=last_id,
                retry=draw(st.none() | st.integers(0, 10**6)),
                comments=tuple(draw(st.lists(st.text(_LINE_CHARS, max_size=10), max_size=2)))
                if comments
                else (),
            )
        )
    return out


@st.composite
def chunked(draw: st.DrawFn, data: bytes) -> list[bytes]:
    """``data`` split at arbitrary offsets: inside CRLF, inside multi-byte UTF-8, anywhere."""
    if not data:
        return [b""]
    cuts = sorted(set(draw(st.lists(st.integers(0, len(data)), max_size=12))))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in pairwise(bounds)]


def feed_all(chunks: list[bytes], **kwargs: bool) -> tuple[list[SSEEvent], sse.Truncated | None]:
    decoder = SSEDecoder(**kwargs)
    out: list[SSEEvent] = []
    for chunk in chunks:
        out.extend(decoder.feed(chunk))
    return out, decoder.finish()


# --- a reference decoder: the standard's algorithm, written as plainly as possible ----


def reference_decode(data: bytes) -> list[tuple[str | None, str, str, int | None]]:
    text = data.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = re.split(r"\r\n|\r|\n", text)
    lines.pop()  # text after the last line end is not a complete line
    out = []
    event_type, buf, last_id, retry = "", "", "", None
    for line in lines:
        if line == "":
            if buf == "":
                event_type, retry = "", None
                continue
            out.append(
                (event_type or None, buf[:-1] if buf.endswith("\n") else buf, last_id, retry)
            )
            event_type, buf, retry = "", "", None
            continue
        if line.startswith(":"):
            continue
        if ":" in line:
            name, value = line.split(":", 1)
            value = value.removeprefix(" ")
        else:
            name, value = line, ""
        if name == "event":
            event_type = value
        elif name == "data":
            buf += value + "\n"
        elif name == "id" and "\0" not in value:
            last_id = value
        elif name == "retry" and value and all(c in "0123456789" for c in value):
            retry = int(value)
    return out


def as_tuples(evs: list[SSEEvent]) -> list[tuple[str | None, str, str, int | None]]:
    return [(e.event, e.data, e.id, e.retry) for e in evs]


# --- round trip -----------------------------------------------------------------


@given(st.data(), events(), st.sampled_from(["\n", "\r\n", "\r"]), st.booleans())
def test_decode_of_any_chunking_of_encode_gives_the_events_back(
    data: st.DataObject,
    evs: list[SSEEvent],
    line_end: sse.LineEnd,
    bom: bool,
) -> None:
    body = (b"\xef\xbb\xbf" if bom else b"") + sse.encode(evs, line_end=line_end)
    chunks = data.draw(chunked(body))
    decoded, truncated = feed_all(chunks)
    assert decoded == evs
    assert truncated is None


@given(st.data(), events(comments=True))
def test_comments_survive_a_round_trip_when_asked(data: st.DataObject, evs: list[SSEEvent]) -> None:
    body = sse.encode(evs, comments=True)
    decoded, _ = feed_all(data.draw(chunked(body)), keep_comments=True)
    assert decoded == evs
    plain, _ = feed_all([body])
    assert [e.comments for e in plain] == [() for _ in evs]


@given(st.data(), st.binary(max_size=300))
def test_any_chunking_decodes_like_the_reference(data: st.DataObject, raw: bytes) -> None:
    decoded, _ = feed_all(data.draw(chunked(raw)))
    assert as_tuples(decoded) == reference_decode(raw)


_SSE_ALPHABET = st.sampled_from(
    [
        "data",
        "event",
        "id",
        "retry",
        ":",
        " ",
        "x",
        "é",
        "😀",
        "\u2028",
        "\x00",
        "1",
        "\r",
        "\n",
        "\r\n",
        "\ufeff",
        "data: ",
        "event: e",
        "retry: 5",
    ]
)


@given(st.data(), st.lists(_SSE_ALPHABET, max_size=60).map("".join))
def test_sse_shaped_text_decodes_like_the_reference(data: st.DataObject, text: str) -> None:
    raw = text.encode("utf-8")
    decoded, _ = feed_all(data.draw(chunked(raw)))
    assert as_tuples(decoded) == reference_decode(raw)


@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_raise_in_lenient_mode(raw: bytes) -> None:
    sse.decode(raw)


@given(st.binary(max_size=200))
def test_strict_utf8_raises_only_the_module_error(raw: bytes) -> None:
    decoder = SSEDecoder(strict_utf8=True)
    try:
        decoder.feed(raw)
        decoder.finish()
    except SSEDecodeError:
        pass


# --- the rules, one by one --------------------------------------------------------


def test_one_leading_bom_is_stripped_even_split_across_chunks() -> None:
    decoded, _ = feed_all([b"\xef", b"\xbb", b"\xbfdata: x\n\n"])
    assert decoded == [SSEEvent(data="x")]
    # A second BOM is part of the first field name, which is then unknown.
    assert sse.decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n").events == []


def test_cr_at_chunk_end_and_lf_at_next_start_is_one_line_end() -> None:
    decoded, truncated = feed_all([b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"])
    assert decoded == [SSEEvent(data="a\nb")]
    assert truncated is None


def test_cr_then_empty_chunk_then_lf_is_still_one_line_end() -> None:
    decoded, _ = feed_all([b"data: a\r", b"", b"\n", b"\n"])
    assert decoded == [SSEEvent(data="a")]


def test_lone_cr_line_ends() -> None:
    assert sse.decode(b"event: e\rdata: 1\r\r").events == [SSEEvent(data="1", event="e")]


def test_field_without_colon_and_unknown_fields() -> None:
    got = sse.decode(b"data\nfoo: bar\ndata:x\n\n").events
    assert got == [SSEEvent(data="\nx")]


def test_only_one_space_after_the_colon_is_removed() -> None:
    assert sse.decode(b"data:  two\n\n").events == [SSEEvent(data=" two")]


def test_event_with_empty_data_buffer_is_not_dispatched() -> None:
    assert sse.decode(b"event: ping\n\nid: 3\n\n").events == []
    # ... but an empty data *line* is data.
    assert sse.decode(b"data:\n\n").events == [SSEEvent(data="")]


def test_id_persists_and_is_ignored_when_it_contains_nul() -> None:
    got = sse.decode(b"id: 1\ndata: a\n\ndata: b\n\nid: x\x00y\ndata: c\n\nid\ndata: d\n\n")
    assert [(e.data, e.id) for e in got.events] == [("a", "1"), ("b", "1"), ("c", "1"), ("d", "")]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1500", 1500),
        ("0", 0),
        ("-1", None),
        ("+5", None),
        (" 5", None),
        ("5s", None),
        ("\u0661\u0662", None),
        ("", None),
    ],
)
def test_retry_accepts_only_ascii_digits(value: str, expected: int | None) -> None:
    decoder = SSEDecoder()
    got = decoder.feed(f"retry: {value}\ndata: x\n\n".encode())
    assert got[0].retry == expected
    assert decoder.reconnection_time == expected


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert sse.decode(b"data: \xff\xfe\n\n").events == [SSEEvent(data="\ufffd\ufffd")]
    with pytest.raises(SSEDecodeError, match="line 1: invalid UTF-8"):
        SSEDecoder(strict_utf8=True).feed(b"data: \xff\n\n")


def test_truncated_final_event_is_reported_not_dropped() -> None:
    got = sse.decode(b"data: a\n\nevent: message_stop\ndata: {}")
    assert got.events == [SSEEvent(data="a")]
    assert got.truncated is not None
    assert got.truncated.partial == SSEEvent(data="", event="message_stop")
    assert got.truncated.unterminated_line == "data: {}"
    assert "message_stop" in got.truncated.describe()


def test_event_missing_only_its_blank_line_is_reported() -> None:
    got = sse.decode(b"data: a\n")
    assert got.events == []
    assert got.truncated is not None
    assert got.truncated.partial == SSEEvent(data="a")
    assert got.truncated.unterminated_line == ""


def test_clean_end_and_trailing_comment_are_not_truncation() -> None:
    assert sse.decode(b"data: a\n\n").truncated is None
    assert sse.decode(b"data: a\n\n: keep-alive\n").truncated is None


def test_iter_events_raises_on_truncation_unless_allowed() -> None:
    with pytest.raises(TruncatedStreamError) as info:
        list(sse.iter_events([b"data: a\n\n", b"data: b"]))
    assert info.value.truncated.unterminated_line == "data: b"
    assert [e.data for e in sse.iter_events([b"data: a\n\ndata: b"], allow_truncated=True)] == ["a"]


def test_decoder_is_reusable_after_finish() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: half")
    assert decoder.finish() is not None
    assert decoder.feed(b"data: b\n\n") == [SSEEvent(data="b")]


def test_json_and_type_helpers() -> None:
    event = SSEEvent(data='{"a": 1}')
    assert event.json() == {"a": 1}
    assert event.type == "message"
    assert SSEEvent(data="", event="ping").type == "ping"


# --- encoder refusals -------------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [
        SSEEvent(data="a\rb"),
        SSEEvent(data="x", event="two\nlines"),
        SSEEvent(data="x", id="a\x00b"),
        SSEEvent(data="x", id="a\nb"),
        SSEEvent(data="x", retry=-1),
    ],
)
def test_encoder_refuses_what_it_cannot_write_faithfully(event: SSEEvent) -> None:
    with pytest.raises(SSEEncodeError):
        sse.encode([event])


def test_encoder_refuses_comment_with_newline_only_when_writing_comments() -> None:
    event = SSEEvent(data="x", comments=("a\nb",))
    assert sse.encode([event]) == b"data: x\n\n"
    with pytest.raises(SSEEncodeError, match="comment"):
        sse.encode([event], comments=True)


def test_encoder_writes_id_only_when_it_changes() -> None:
    body = sse.encode(
        [SSEEvent(data="a", id="1"), SSEEvent(data="b", id="1"), SSEEvent(data="c", id="")]
    )
    assert body == b"id: 1\ndata: a\n\ndata: b\n\nid:\ndata: c\n\n"


def test_encoder_rejects_unknown_line_end() -> None:
    with pytest.raises(SSEEncodeError):
        sse.SSEEncoder(line_end="\n\n")  # type: ignore[arg-type]


# --- the real corpus, against both SDK decoders -------------------------------------

_SSE_ITEMS = [item for item in corpus.interactions() if item.is_sse]


@pytest.mark.parametrize("item", _SSE_ITEMS, ids=[i.id for i in _SSE_ITEMS])
def test_corpus_streams_decode_like_both_sdks(item: corpus.CorpusInteraction) -> None:
    from anthropic._streaming import SSEDecoder as AnthropicDecoder
    from openai._streaming import SSEDecoder as OpenAIDecoder

    ours = as_tuples(sse.decode(item.body).events)
    assert ours, "every corpus stream has events"
    for decoder in (AnthropicDecoder(), OpenAIDecoder()):
        theirs = [
            (e.event, e.data, e.id or "", e.retry) for e in decoder.iter_bytes(iter([item.body]))
        ]
        assert ours == theirs
    # One byte at a time gives the same events.
    one_by_one, _ = feed_all([item.body[i : i + 1] for i in range(len(item.body))])
    assert as_tuples(one_by_one) == ours


def test_corpus_files_without_trailing_blank_line_are_reported_truncated() -> None:
    raw = [i for i in _SSE_ITEMS if i.file.name.endswith(".sse.txt")]
    assert len(raw) == 3
    for item in raw:
        got = sse.decode(item.body)
        assert got.truncated is not None
        assert got.truncated.partial is not None
        assert got.truncated.partial.event == "message_stop"


def test_corpus_comments_are_kept_when_asked() -> None:
    [item] = [i for i in _SSE_ITEMS if "openrouter_stream_error" in i.file.name]
    first = sse.decode(item.body, keep_comments=True).events[0]
    # Each is a block of comments only: its blank line is kept as a None (issue 18).
    assert first.comments == ("OPENROUTER PROCESSING", None) * 17


# --- one event written in one step (a fake's stream) --------------------------------


@given(
    _DATA | st.text(max_size=20),
    st.none() | st.text(max_size=12),
    st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_event_bytes_writes_what_the_encoder_writes_or_fails_as_it_does(
    data: str, name: str | None, line_end: sse.LineEnd
) -> None:
    event = SSEEvent(data=data, event=name)
    try:
        expected = sse.SSEEncoder(line_end=line_end).encode(event)
    except SSEEncodeError as exc:
        with pytest.raises(SSEEncodeError, match=re.escape(str(exc))):
            sse.event_bytes(data, name, line_end)
        return
    assert sse.event_bytes(data, name, line_end) == expected
