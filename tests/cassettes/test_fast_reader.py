"""The reader's fast path: whatever it accepts, the libyaml path loads the same.

Files the plugin wrote are read by the canonical reader and accepted only if the
writer gives back their exact text; anything else goes through the safe libyaml
loader. Both build the model with the same function, and the fast path may refuse
anything (the slow path then reads the file and explains what is wrong); it must
never accept a file the slow path refuses, nor read a value differently. These
tests hold it to that: on every cassette the writer can produce, on mutations of
canonical files (one value or key replaced by a YAML trap), and on the cases the
re-emission check is there for (the model changes a value that the writer would
write back unchanged, or refuses a value the writer writes).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.fields import body_bytes
from pytest_agentreplay.cassettes.from_wire import request_from_wire
from pytest_agentreplay.cassettes.io import CassetteFormatError, dumps, loads
from pytest_agentreplay.cassettes.yaml import fast
from tests import corpus
from tests.cassettes._cassette_strategies import cassettes, json_bodies, text
from tests.cli._helpers import json_interaction, stream_interaction

REALISTIC = dumps(Cassette(interactions=[stream_interaction(), json_interaction()]))


def _slow(text_: str) -> Cassette:
    """The libyaml path, which a hand-edited file takes."""
    data, _ = cassette_io._convert(text_, "c.yaml")
    return cassette_io._validate(data, "c.yaml", text_)


def _same(text_: str) -> None:
    """If the fast path accepts ``text_``, the slow path loads it, to the same cassette."""
    fast = cassette_io._fast(text_)
    if fast is None:
        return
    assert _slow(text_) == fast  # raises CassetteFormatError if it accepted a bad file


@given(cassettes)
def test_every_cassette_the_writer_produces_reads_the_same_either_way(cassette: Cassette) -> None:
    text_ = dumps(cassette)
    _same(text_)  # the strategies hold no NaN: plain equality applies
    assert loads(text_) == cassette


def test_realistic_cassettes_take_the_fast_path() -> None:
    """Not a vacuous property: the files the plugin writes for real traffic (streams
    with timings, JSON bodies, header maps, the real recordings of the corpus) are
    accepted by the fast path, and read as the slow path reads them."""
    texts = [REALISTIC, dumps(Cassette())]
    for path in corpus.files():
        texts.append(dumps(loads(path.read_bytes(), path=str(path))))
    for text_ in texts:
        fast = cassette_io._fast(text_)
        assert fast is not None, text_[:300]
        assert fast == _slow(text_)


def test_a_bom_does_not_stop_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_libyaml(text_: str, path: str) -> Any:
        raise AssertionError("the slow path was taken")

    monkeypatch.setattr(cassette_io, "_load_yaml", no_libyaml)
    assert loads(b"\xef\xbb\xbf" + REALISTIC.encode()) == loads(REALISTIC)


_VALUE_LINE = re.compile(r"^( *(?:- )?[a-z_]+: )(.+)$", re.MULTILINE)
_TRAP_VALUES = [
    "0", "99", "100", "599", "600", "-1", "1", "1.0", "1.5", "0.1234567", "-0.5", "1e3",
    ".inf", ".nan", "true", "false", "null", "~", "''", "'x'", '"a\\rb"', '"a\\nb"',
    '"a\\0b"', "[]", "{}", "[1]", "complete", "cut", "incomplete", "bogus", "Content-Length",
    "'2023-06-01'", "2023-06-01", "yes", "'{\"a\":1}'",
]  # fmt: skip
_TRAP_KEYS = ["content-length", "Content-Type", "transfer-encoding", "extra", "data", "json"]
_KEY_LINE = re.compile(r"^( +(?:- )?)([a-z_-]+):", re.MULTILINE)


def _mutate(data: st.DataObject, spots: re.Pattern[str], replacements: list[str]) -> None:
    """Replace group 2 of one match of ``spots`` in a canonical file by one of
    ``replacements``; the fast path must read it as the slow path does, or refuse it."""
    target = data.draw(st.sampled_from(list(spots.finditer(REALISTIC))))
    mutated = REALISTIC[: target.start(2)] + data.draw(st.sampled_from(replacements))
    try:
        _same(mutated + REALISTIC[target.end(2) :])
    except CassetteFormatError:
        pytest.fail(f"the fast path accepted a file the slow path refuses: {target.group(0)!r}")


@given(st.data())
def test_a_canonical_file_with_one_value_replaced_reads_the_same_or_goes_the_slow_way(
    data: st.DataObject,
) -> None:
    _mutate(data, _VALUE_LINE, _TRAP_VALUES)


@given(st.data())
def test_a_canonical_file_with_a_key_renamed_reads_the_same_or_goes_the_slow_way(
    data: st.DataObject,
) -> None:
    _mutate(data, _KEY_LINE, _TRAP_KEYS)


def _stream(**event: Any) -> str:
    response = RecordedResponse(status=200, events=[RecordedEvent(data="{}")])
    text_ = dumps(Cassette(interactions=[json_interaction().replace(response=response)]))
    line = "    - {data: '{}'}"
    assert line in text_
    fields = ", ".join(f"{k}: {v}" for k, v in event.items())
    return text_.replace(line, f"    - {{{fields}}}" if fields else line)


@pytest.mark.parametrize(
    ("case", "edit"),
    [
        # the writer would write these back unchanged; the model changes or refuses them
        ("time beyond the microsecond", lambda: _stream(t="0.1234567", data="x")),
        ("negative time", lambda: _stream(t="-0.5", data="x")),
        ("negative retry", lambda: _stream(retry="-1", data="x")),
        ("NUL in an id", lambda: _stream(id='"a\\0b"', data="x")),
        ("CR in data", lambda: _stream(data='"a\\rb"')),
        ("line feed in an event name", lambda: _stream(event='"a\\nb"', data="x")),
        ("status out of range", lambda: REALISTIC.replace("status: 200", "status: 600", 1)),
        ("unknown ending", lambda: REALISTIC.replace("end: complete", "end: bogus", 1)),
        ("a text version", lambda: REALISTIC.replace("version: 1", "version: '1'")),
    ],
)
def test_values_the_model_changes_or_refuses_go_the_slow_way(case: str, edit: Any) -> None:
    text_ = edit()
    assert cassette_io._fast(text_) is None, case
    try:
        model = loads(text_)
    except CassetteFormatError:
        return  # refused, with the slow path's precise message
    if case == "time beyond the microsecond":
        events = model.interactions[0].response.events
        assert events is not None and events[0].t == 0.123457  # the model rounds it


def test_a_file_that_is_not_canonical_goes_the_slow_way() -> None:
    hand_edited = REALISTIC.replace(
        "    headers:\n      content-type: application/json\n",
        "    headers: {content-type: application/json}\n",
        1,
    )
    assert hand_edited != REALISTIC
    assert cassette_io._fast(hand_edited) is None
    assert loads(hand_edited).interactions[0].request.headers == {
        "content-type": "application/json"
    }
    assert cassette_io._fast(REALISTIC.replace("version: 1\n", "version: 1\n# x\n")) is None
    assert cassette_io._fast("") is None


@given(
    body=st.one_of(
        json_bodies.map(lambda v: body_bytes(v, None, None)),
        text.map(str.encode),
        st.binary(max_size=40),
    ),
    headers=st.lists(
        st.tuples(
            st.sampled_from(["Content-Type", "X-Key", "accept"]),
            text.map(lambda s: s.replace("\r", "").replace("\n", "")),
        ),
        max_size=4,
    ),
)
def test_a_live_request_built_without_the_json_walk_is_the_checked_one(
    body: bytes, headers: list[tuple[str, str]]
) -> None:
    """The recorder builds a live request's parsed body without walking it again (it
    came from ``json.loads``): building it from its data with every check gives the
    same request."""
    live = request_from_wire("POST", "https://api.anthropic.com/v1/messages", headers, body)
    assert RecordedRequest(**live.to_data()) == live
    assert live.content() == RecordedRequest(**live.to_data()).content()


# --- issue 29: a repeated ``key: scalar`` line is read once per file ------------------

_TWO_CALLS = dumps(
    Cassette(
        interactions=[
            json_interaction().replace(
                request=json_interaction().request.replace(
                    headers={"accept": "application/json", "x-team": "42"}
                )
            )
        ]
        * 2
    )
)


def test_a_line_read_before_is_read_the_same_in_every_mapping() -> None:
    """The reader remembers each ``key: scalar`` line it read; the second interaction,
    made of the same lines, reads as the first does, and as the slow path reads it."""
    fast = cassette_io._fast(_TWO_CALLS)
    assert fast is not None
    first, second = fast.interactions
    assert first == second == _slow(_TWO_CALLS).interactions[0]
    assert first.request.headers == {"accept": "application/json", "x-team": "42"}
    assert first.request.headers is not second.request.headers  # each its own mapping


@pytest.mark.parametrize("line", ["      accept: application/json\n", "      x-team: '42'\n"])
def test_a_line_repeated_in_one_mapping_is_a_duplicate_key_either_way(line: str) -> None:
    """A hand edit that repeats a line (a bad merge) repeats a key: the remembered line
    is refused as the first reading of it would be, and the slow path says where."""
    assert line in _TWO_CALLS
    doubled = _TWO_CALLS.replace(line, line * 2, 1)
    assert cassette_io._fast(doubled) is None
    with pytest.raises(CassetteFormatError, match="duplicate key"):
        loads(doubled)


def test_a_remembered_line_belongs_to_the_mapping_it_is_read_in() -> None:
    """A header's line copied into the JSON body (the same indent, the same text) is a
    body field there, and the headers keep theirs (the slow path agrees)."""
    moved = _TWO_CALLS.replace(
        "      model: gpt-test\n", "      model: gpt-test\n      x-team: '42'\n", 1
    )
    assert moved != _TWO_CALLS
    fast = cassette_io._fast(moved)
    assert fast is not None and fast == _slow(moved)
    assert fast.interactions[0].request.json_body["x-team"] == "42"
    assert fast.interactions[1].request.json_body.get("x-team") is None


def test_a_reader_that_forgets_its_lines_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The remembered lines are bounded (cleared when full): a file with more distinct
    lines than that reads as it does with room for all of them."""
    wide = dumps(Cassette(interactions=[json_interaction(), *([stream_interaction()] * 3)]))
    expected = [cassette_io._fast(text_) for text_ in (_TWO_CALLS, REALISTIC, wide)]
    monkeypatch.setattr(fast, "_SEEN_LINES", 2)
    for text_, before in zip((_TWO_CALLS, REALISTIC, wide), expected, strict=True):
        assert before is not None
        assert cassette_io._fast(text_) == before == _slow(text_)


# -- reading a file's lines a block at a time --------------------------------------
LINE_TEXT = st.text(
    st.characters(blacklist_characters="\n\r\t", blacklist_categories=("Cs",)), max_size=40
)


@given(lines=st.lists(LINE_TEXT, max_size=30), block=st.integers(1, 64))
def test_lines_are_read_whole_across_blocks(lines: list[str], block: int) -> None:
    """A block is cut after its last line break: a line split across blocks, or longer
    than a block, or a character whose UTF-8 bytes straddle a block's end is read
    whole; one block at a time, the handle is left where the next line starts."""
    import io

    data = "".join(line + "\n" for line in lines).encode("utf-8")
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(fast, "BLOCK_BYTES", block)
    try:
        assert fast._lines_of(io.BytesIO(data)) == lines
        handle, one_at_a_time = io.BytesIO(data), []
        while read := fast._lines_of(handle, blocks=1):  # a block holds a line at least
            one_at_a_time.append(read)
        assert [line for got in one_at_a_time for line in got] == lines
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("block", [1, 3, 64 * 1024])
@pytest.mark.parametrize("tail", ["no newline", "ünïcode without newline"])
def test_a_last_line_without_a_line_break_is_refused(
    block: int, tail: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    monkeypatch.setattr(fast, "BLOCK_BYTES", block)
    with pytest.raises(fast.NotCanonicalError, match="line layout"):
        fast._lines_of(io.BytesIO(f"a: 1\n{tail}".encode()))
