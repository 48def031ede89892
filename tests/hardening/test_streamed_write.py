"""Issue 18, item 19: a cassette too big to hold is written in pieces, safely.

The writer no longer holds a cassette's text: it is dumped a batch of events at a
time into the temporary file, each piece scanned before it is written, and the file
is verified by reading it back line by line before it takes the cassette's name.
These tests attack what that could break: a secret deep in a big stream must still
stop the write *before any byte of it reaches disk* (a temporary file left by a
killed process could be committed: `git add` takes dot files), a key across two
pieces or two scan windows must still be found, a writer bug in a big file must
still be caught by the verification, and the line-by-line reader must read every
file exactly as the whole-text reader does.
"""

from __future__ import annotations

import contextlib
import gc
import json
import secrets
import string
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from pytest_agentreplay.cassettes import atomic as _files
from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.io import CassetteFormatError, load, save
from pytest_agentreplay.cassettes.yaml import fast
from pytest_agentreplay.cassettes.yaml.fast import (
    NotCanonicalError,
    read_canonical,
    read_canonical_file,
    scan_canonical_file,
)
from pytest_agentreplay.redact import Scrubber, SecretLeakError, assembled
from pytest_agentreplay.redact.scan import OVERLAP, PieceScan
from tests.cassettes.test_cassette_format import EXPECTED

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-ant-api03-" + "".join(
    secrets.choice(string.ascii_letters + string.digits) for _ in range(93)
)


def _delta(text: str) -> RecordedEvent:
    data = {"type": "content_block_delta", "index": 0, "delta": {"text": text}}
    return RecordedEvent(event="content_block_delta", data=json.dumps(data), t=0.5)


def _stream(texts: list[str]) -> Cassette:
    request = RecordedRequest(method="POST", url="https://api.anthropic.com/v1/messages")
    headers = {"content-type": "text/event-stream"}
    response = RecordedResponse(status=200, headers=headers, events=list(map(_delta, texts)))
    return Cassette(interactions=[Interaction(request=request, response=response)])


def _filler(n: int) -> list[str]:
    return [f"word {i} " * 4 for i in range(n)]


@pytest.fixture
def written(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every byte the writer hands to a temporary file."""
    seen: list[bytes] = []
    real = _files.atomic_writer

    class Spy:
        def __init__(self, handle: BinaryIO) -> None:
            self.handle = handle

        def write(self, data: bytes) -> int:
            seen.append(bytes(data))
            return self.handle.write(data)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.handle, name)

    @contextlib.contextmanager
    def spying(target: Any) -> Iterator[tuple[Any, Path]]:
        with real(target) as (handle, path):
            yield Spy(handle), path

    monkeypatch.setattr(_files, "atomic_writer", spying)
    return seen


def test_a_key_deep_in_a_big_stream_never_reaches_disk(
    tmp_path: Path, written: list[bytes]
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(EXPECTED)
    texts = _filler(20_000)
    texts[15_000] = f"my key is {KEY} ok"
    with pytest.raises(SecretLeakError) as info:
        save(path, _stream(texts), scrubber=Scrubber(env={}))
    assert "interactions[0].response.events[15000]" in str(info.value)
    assert written, "nothing was written before the key: the text was not streamed"
    assert not any(KEY.encode() in piece for piece in written)
    assert KEY[:20].encode() not in b"".join(written)
    assert path.read_text() == EXPECTED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_a_big_clean_stream_is_written_whole_and_loads_back(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    cassette = _stream(_filler(20_000))
    save(path, cassette, scrubber=Scrubber(env={}))
    assert path.stat().st_size > 1024 * 1024  # verified line by line, not by libyaml
    assert load(path) == cassette
    assert path.read_text() == cassette_io.dumps(cassette)


def test_a_writer_bug_in_a_big_file_is_caught_before_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(EXPECTED)
    real = cassette_io.iter_interactions

    def dropping(*args: Any) -> Iterator[str]:  # loses one event of 20,000
        for piece in real(*args):
            yield piece.replace("word 12345 word 12345 ", "word 12345 ", 1)

    monkeypatch.setattr(cassette_io, "iter_interactions", dropping)
    with pytest.raises(CassetteFormatError, match="would not load back"):
        save(path, _stream(_filler(20_000)), scrubber=Scrubber(env={}))
    assert path.read_text() == EXPECTED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_a_hit_only_a_piece_sees_is_settled_by_the_whole_text() -> None:
    """The scan of a piece starts mid-line when a line is longer than the overlap: a
    key-shaped string right there has lost the character before it, which in the whole
    text glues it to a longer token (no key). The whole text decides: written."""
    first = "Z" * 10 + KEY + " " * (OVERLAP - len(KEY))
    pieces = [first, "more text\n"]
    asked: list[int] = []

    def whole() -> str:
        asked.append(1)
        return "".join(pieces)

    scrubber = Scrubber(env={})
    assert not scrubber.scan("".join(pieces))
    out = list(scrubber.checked(pieces, None, cassette=Cassette(), whole=whole))
    assert out == pieces
    assert asked == [1], "the piece scan never saw the cut key: the test proves nothing"


@pytest.mark.parametrize("cut", [1, 7, 13, 30, 50, len(KEY) - 1])
def test_a_key_across_two_pieces_is_found(cut: int) -> None:
    text = f"data: one\nkey: {KEY} two\n"
    at = text.index(KEY) + cut
    scan = PieceScan(Scrubber(env={})._finder())
    # A long enough head of the key is key-shaped itself: then the first piece finds it.
    assert scan.finds(text[:at]) or scan.finds(text[at:])


def test_a_key_split_across_events_is_found_across_scan_windows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each key's assembled text is scanned a window at a time: a key split across
    events that straddles two windows, wherever it falls, is still found."""
    monkeypatch.setattr(assembled, "WINDOW", 400)
    monkeypatch.setattr(assembled, "WINDOW_VALUES", 40)
    monkeypatch.setattr(assembled, "OVERLAP", 150)
    scrubber = Scrubber(env={})
    for start in range(0, 120, 3):
        texts = [f"w{i:03d} " for i in range(start)]
        texts += [KEY[i : i + 5] for i in range(0, len(KEY), 5)]
        texts += [f" v{i:03d}" for i in range(60)]
        found = scrubber.scan_cassette(_stream(texts))
        assert [f.kind.split(" ")[0] for f in found] == ["anthropic-key"], start
        assert found[0].where == f"interactions[0].response.events[{start}]"


def _cassettes() -> list[Path]:
    return sorted(p for p in (ROOT / "cassettes").rglob("*.yaml"))


@pytest.mark.parametrize("reader", [read_canonical_file, scan_canonical_file])
def test_the_file_readers_read_every_file_as_the_whole_text_reader(
    tmp_path: Path, reader: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fast, "BLOCK_BYTES", 512)  # many blocks in every file
    files = _cassettes()
    extra = tmp_path / "example.yaml"
    extra.write_text(EXPECTED)
    assert len(files) > 50
    for path in [*files, extra]:
        text = path.read_text("utf-8")
        events: list[Any] = []
        streamed = reader(path, event=events.append)
        if reader is read_canonical_file:  # replay's load: the data, and the writer's proof
            streamed, _ = streamed
        assert streamed == read_canonical(text, event=lambda e: None), path
        expected_events: list[Any] = []
        read_canonical(text, event=expected_events.append)
        assert events == expected_events, path


@pytest.mark.parametrize("reader", [read_canonical_file, scan_canonical_file])
@pytest.mark.parametrize(
    "text",
    [
        "interactions: []\nversion: 1",
        "interactions: []\r\nversion: 1\r\n",
        "a:\n\tb: 1\n",
        "interactions: []\nversion: 1\nextra: 2\n  indented: 3\n",
        "interactions: []\nversion: 1\n\xff\n",
    ],
    ids=["no-final-newline", "crlf", "tab", "text-after", "not-utf-8"],
)
def test_the_file_readers_refuse_what_the_whole_text_reader_refuses(
    tmp_path: Path, text: str, reader: Any
) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises((NotCanonicalError, UnicodeDecodeError)):
        read_canonical(path.read_bytes().decode("utf-8"))
    with pytest.raises(NotCanonicalError):
        reader(path, event=lambda e: None)


def test_loading_a_big_file_the_plugin_wrote_holds_little_more_than_the_model(
    tmp_path: Path,
) -> None:
    """Replay loads a big cassette a line at a time: 6.1 times the file at peak when it
    was read whole (text, lines, a dict per event, the text written again), 2.0 now,
    of which 1.7 is the loaded model itself."""
    path = tmp_path / "c.yaml"
    cassette = _stream(_filler(12_000))
    save(path, cassette, scrubber=Scrubber(env={}))
    size = path.stat().st_size
    load(path)  # patterns compiled, modules imported
    gc.collect()
    tracemalloc.start()
    try:
        loaded = load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak / size < 3.0, f"loading peaked at {peak / size:.1f}x the file"
    assert loaded == cassette


def test_a_big_file_edited_by_hand_still_loads_and_a_cut_one_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.yaml"
    cassette = _stream(_filler(12_000))
    save(path, cassette, scrubber=Scrubber(env={}))
    text = path.read_text()
    path.write_text(text.replace("    events:\n", "    events:  # edited\n", 1))
    assert load(path) == cassette  # not the writer's text: the whole-text reader reads it
    path.write_text(text[: len(text) // 2])
    with pytest.raises(CassetteFormatError) as info:
        load(path)
    assert info.value.line is not None


def test_a_split_key_and_a_whole_one_are_both_named(tmp_path: Path) -> None:
    """The split-key scan runs first (it needs no text); when it finds something, the
    refusal still names everything the text scan finds too."""
    texts = _filler(3000)
    texts[100:100] = [KEY[:50], KEY[50:] + " "]
    texts[2000] = f"my key is {KEY} ok"
    with pytest.raises(SecretLeakError) as info:
        save(tmp_path / "c.yaml", _stream(texts), scrubber=Scrubber(env={}))
    places = [finding.where for finding in info.value.findings]
    assert "interactions[0].response.events[100]" in places
    assert "interactions[0].response.events[2000].data" in places
    assert list(tmp_path.iterdir()) == []


def test_a_stream_of_one_character_deltas_is_scanned_a_bounded_number_of_times() -> None:
    """Each window keeps the end of the one before; with one-character deltas that end
    must not be a whole window, or every delta after it scans the window again."""
    calls: list[int] = []
    find = Scrubber(env={})._finder()

    def counting(text: str) -> list[Any]:
        calls.append(len(text))
        return find(text)

    events = [_delta("ab"[i % 2]) for i in range(40_000)]
    assert list(assembled.split_hits(events, counting)) == []
    assert len(calls) < 200, f"{len(calls)} scans of {sum(calls):,} characters"
