"""A big stream's events are built when replay reaches them (issue 29).

Replay's load keeps a big cassette's event lines as the file's bytes
(:class:`~pytest_agentreplay.cassettes.lazy_events.LazyEvents`). Everything that read
the built events must read the same thing: the model (``==`` and ``to_data``), the
bytes a client receives, the matching index and a miss's report, a cassette written
back with new episodes, the scrubber, the CLI's readers. A line that cannot be read
is an error naming the file and the line: when replay reaches it (the test's client
gets the error, never a short stream), and at load for every other reader.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_agentreplay.cassettes import io
from pytest_agentreplay.cassettes.big_file import STREAMED_FROM
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.errors import CassetteMiss
from pytest_agentreplay.cassettes.lazy_events import LazyEvents
from pytest_agentreplay.cassettes.session import CassetteSession
from pytest_agentreplay.cli import main
from pytest_agentreplay.cli.analysis import timings, type_counts
from pytest_agentreplay.errors import CassetteFormatError
from pytest_agentreplay.redact import Scrubber
from pytest_agentreplay.transport.encode import encode_lazily
from pytest_agentreplay.transport.router import Router, intercepting

URL = "https://api.anthropic.com/v1/messages"
EVENTS = 12_000  # about 1.4 MB of lines: past STREAMED_FROM


def _event(i: int) -> RecordedEvent:
    """The usual event, with now and then one that takes the other paths: quotes in the
    data, non-ASCII text, empty data, a name YAML would read as a bool (quoted)."""
    text = f"word {i} "
    if i % 997 == 5:
        text = "it's a 'quoted' word"
    if i % 1009 == 7:
        text = "naïve café — 東京 ✓"
    data = '{"type":"content_block_delta","delta":{"text":' + _json(text) + "}}"
    if i % 1013 == 9:
        data = ""
    name = "yes" if i % 1019 == 11 else "content_block_delta"
    return RecordedEvent(event=name, data=data, t=round(0.001 * i, 6))


def _json(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


def _request(content: str, *, stream: bool = True) -> RecordedRequest:
    body: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": content}]}
    if stream:
        body["stream"] = True
    return RecordedRequest(
        method="POST", url=URL, headers={"content-type": "application/json"}, json_body=body
    )


def _stream(content: str, events: list[RecordedEvent]) -> Interaction:
    return Interaction(
        request=_request(content),
        response=RecordedResponse(
            status=200, headers={"content-type": "text/event-stream"}, events=events
        ),
    )


def _small(content: str) -> Interaction:
    return Interaction(
        request=_request(content, stream=False),
        response=RecordedResponse(
            status=200,
            headers={"content-type": "application/json"},
            json_body={"id": content, "content": []},
        ),
    )


def _write(path: Path, interactions: list[Interaction]) -> Path:
    io.save(path, Cassette(interactions=interactions), scrub=False)
    assert path.stat().st_size > STREAMED_FROM
    return path


@pytest.fixture(scope="module")
def events() -> list[RecordedEvent]:
    return [_event(i) for i in range(EVENTS)]


@pytest.fixture
def big(tmp_path: Path, events: list[RecordedEvent]) -> Path:
    """A big cassette: a small call, a named stream, an unnamed (OpenAI-like) one."""
    unnamed = [RecordedEvent(data=e.data or "x", t=e.t) for e in events[:2000]]
    return _write(
        tmp_path / "big.yaml",
        [_small("hi"), _stream("story", events), _stream("other", unnamed)],
    )


@contextlib.contextmanager
def _replaying(path: Path, mode: str = "none") -> Iterator[CassetteSession]:
    router = Router(test="lazy", block=False)
    session = CassetteSession(path=path, record_mode=mode, router=router, scrubber=Scrubber())
    router.add(session)
    router.recorder = session.recorder()
    with intercepting(router):
        yield session


def _received(client: httpx.Client, content: str) -> bytes:
    body = {"model": "m", "messages": [{"role": "user", "content": content}], "stream": True}
    with client.stream("POST", URL, json=body) as response:
        assert response.status_code == 200
        return b"".join(response.iter_raw())


def _wire(events: list[RecordedEvent]) -> bytes:
    """What the plugin sends for ``events`` built the eager way."""
    return b"".join(encode_lazily(events, comments=True))


def test_replay_loads_streams_lazily_into_the_same_model(big: Path) -> None:
    lazy, _ = io.load_with_format(big, lazy=True)
    eager = io.load(big)
    streams = [i.response.events for i in lazy.interactions[1:]]
    assert all(type(events) is LazyEvents for events in streams)
    assert type(eager.interactions[1].response.events) is list
    assert lazy == eager
    assert lazy.to_data() == eager.to_data()


def test_a_client_receives_the_bytes_of_the_built_events(
    big: Path, events: list[RecordedEvent]
) -> None:
    eager = io.load(big)
    with _replaying(big) as session, httpx.Client() as client:
        got = _received(client, "story")
        other = _received(client, "other")
    assert got == _wire(events)
    assert other == _wire(eager.interactions[2].response.events or [])
    assert [call.outcome for call in session.calls][:1] == ["completed"]


def test_an_event_built_and_edited_before_replay_is_replayed_as_edited(big: Path) -> None:
    with _replaying(big) as session, httpx.Client() as client:
        events = session.interactions[1].response.events
        assert isinstance(events, LazyEvents)
        events[3000].data = '{"edited":true}'
        got = _received(client, "story")
    assert b'data: {"edited":true}\n\n' in got
    assert got.count(b"\n\n") == EVENTS


def test_lazy_events_are_a_list_to_every_reader(big: Path, events: list[RecordedEvent]) -> None:
    lazy, _ = io.load_with_format(big, lazy=True)
    stream = lazy.interactions[1].response.events
    assert isinstance(stream, LazyEvents)
    assert len(stream) == EVENTS
    assert stream[-1] == events[-1] and stream[0] == events[0]
    assert stream[5000] == events[5000]
    assert stream[10:20] == events[10:20]
    assert list(stream) == events
    assert stream == events and events == stream
    assert type_counts(stream) == type_counts(events)
    assert timings(stream) == timings(events)
    with pytest.raises(IndexError):
        stream[EVENTS]
    copied = lazy.interactions[1].response.replace(status=201).events  # a copy, as a list's
    assert copied == stream and copied is not stream
    stream.append(RecordedEvent(data="more"))  # changing the list: a plain list inside
    del stream[0]
    assert len(stream) == EVENTS
    assert stream[-1].data == "more" and stream[0] == events[1]
    assert copied == events  # the copy is as it was


def test_the_index_and_a_miss_report_work_on_a_lazy_cassette(big: Path) -> None:
    with _replaying(big) as session, httpx.Client() as client:
        answer = client.post(URL, json=_request("hi", stream=False).json_body)
        assert answer.json()["id"] == "hi"
        with pytest.raises(CassetteMiss) as miss:
            client.post(URL, json={"model": "m", "messages": [], "stream": True})
    assert "big.yaml" in str(miss.value)
    assert session.unplayed == [1, 2]


def test_new_episodes_write_back_keeps_every_event(big: Path) -> None:
    before = big.read_text()
    eager = io.load(big)

    with _replaying(big, "new_episodes") as session, httpx.Client() as client:
        assert _received(client, "story").count(b"\n\n") == EVENTS
        session.add_recorded(_small("new"))
    session.finish(failed=False)
    after = io.load(big)
    assert after.interactions[:3] == eager.interactions
    assert after.interactions[3].response.json_body == {"id": "new", "content": []}
    old_events = [line for line in before.splitlines() if line.startswith("    - {")]
    new_events = [line for line in big.read_text().splitlines() if line.startswith("    - {")]
    assert new_events == old_events


def test_the_scrubber_reads_and_redacts_lazy_events(tmp_path: Path) -> None:
    events = [_event(i) for i in range(EVENTS)]
    events[9000] = RecordedEvent(event="content_block_delta", data='{"key":"SECRET-9000"}', t=9.0)
    path = _write(tmp_path / "secret.yaml", [_stream("story", events)])
    lazy, _ = io.load_with_format(path, lazy=True)

    def custom(interaction: Interaction) -> Interaction:
        stream = interaction.response.events or []
        stream[-1] = stream[-1].replace(data="custom")
        return interaction

    scrubbed = Scrubber(extra_body_keys=["key"], custom=[custom]).scrub(lazy)
    data = [e.data for e in scrubbed.interactions[0].response.events or []]
    assert data[9000] == '{"key":"REDACTED"}'
    assert data[:9000] == [e.data for e in events[:9000]]
    assert data[-1] == "custom"
    assert (lazy.interactions[0].response.events or [])[-1] == events[-1]  # a private copy


def _break_line(path: Path, index: int, replace: tuple[str, str]) -> int:
    """Change the ``index``-th event line of the file; its 1-based line number."""
    lines = path.read_text().split("\n")
    starts = [n for n, line in enumerate(lines) if line.startswith("    - {")]
    n = starts[index]
    assert replace[0] in lines[n]
    lines[n] = lines[n].replace(*replace)
    path.write_text("\n".join(lines))
    return n + 1


def _read_into(received: bytearray, chunks: Iterator[bytes]) -> None:
    for chunk in chunks:
        received += chunk


@pytest.mark.parametrize(
    "edit",
    [
        ("data: '", "data: 'it's "),  # a lone quote: the data ends early, then junk
        ("t: ", "t: -"),  # a negative time
        (", data: ", ", id: "),  # no data
    ],
)
def test_a_bad_event_deep_in_a_stream_names_the_file_and_line_when_replay_reaches_it(
    big: Path, edit: tuple[str, str]
) -> None:
    line = _break_line(big, 10_000, edit)
    with pytest.raises(CassetteFormatError) as at_load:
        io.load(big)  # every other reader (lint, inspect, diff): at load
    assert at_load.value.path == big
    with _replaying(big) as session, httpx.Client() as client:
        assert len(session.interactions[1].response.events or []) == EVENTS
        received = bytearray()
        body = {"model": "m", "messages": [{"role": "user", "content": "story"}], "stream": True}
        with (
            client.stream("POST", URL, json=body) as response,
            pytest.raises(CassetteFormatError) as at_replay,
        ):
            _read_into(received, response.iter_raw())
    error = at_replay.value
    assert error.path == big and error.line == line
    assert error.field is not None
    assert error.field.startswith("interactions[1].response.events[10000]")
    assert f"{big}:{line}" in str(error)
    assert received.count(b"\n\n") == 10_000  # every event before it, then the error
    (call,) = session.calls  # logged as the client saw it: cut after those events
    assert (call.outcome, call.events_sent) == ("cut", 10_000)


def test_lint_finds_a_bad_event_deep_in_a_stream_ahead_of_a_test(
    big: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _break_line(big, 10_000, ("data: '", "data: 'it's "))
    code = main(["lint", str(big)])
    out = capsys.readouterr()
    assert code != 0
    assert f"{big.name}:{line}" in out.out + out.err


def test_a_hand_edited_line_yaml_reads_differently_replays_as_yaml_reads_it(big: Path) -> None:
    """``t: 0.50`` is not how the writer writes 0.5, and a plain name ``yes`` is a bool
    to YAML: the line is read as the whole-file reader (PyYAML) reads it."""
    _break_line(big, 200, ("t: 0.2,", "t: 0.20,"))
    eager = io.load(big)
    lazy, _ = io.load_with_format(big, lazy=True)
    assert lazy == eager
    assert (lazy.interactions[1].response.events or [])[200].t == 0.2


def test_a_block_outside_a_response_is_read_the_eager_way(tmp_path: Path) -> None:
    """An imported interaction's origin holding an ``events`` key at the response's
    indent is not a stream: the file is read without deferring anything."""
    events = [_event(i) for i in range(EVENTS)]
    plain = _stream("story", events)
    origin = {"events": [{"data": "not a stream"}], "source": "trace"}
    path = _write(
        tmp_path / "origin.yaml",
        [
            Interaction(request=plain.request, response=plain.response, origin=origin),
        ],
    )
    lazy, _ = io.load_with_format(path, lazy=True)
    assert lazy == io.load(path)
    assert lazy.interactions[0].origin == origin


def test_small_streams_in_a_big_file_of_calls(tmp_path: Path, events: list[RecordedEvent]) -> None:
    """A file that is mostly calls, with a short stream and a one-event stream: each
    stream keeps its own bytes, and reads as the eager load does."""
    calls = [_small(f"call {i} " + "x" * 300) for i in range(3000)]
    path = _write(
        tmp_path / "calls.yaml",
        [*calls, _stream("story", events[:50]), _stream("one", events[100:101])],
    )
    lazy, _ = io.load_with_format(path, lazy=True)
    assert lazy == io.load(path)
    one = lazy.interactions[-1].response.events
    assert isinstance(one, LazyEvents)
    assert one[-1] == one[0] == events[100] and len(one) == 1
    with _replaying(path), httpx.Client() as client:
        assert _received(client, "story") == _wire(events[:50])
        assert _received(client, "one") == _wire(events[100:101])


def test_an_async_client_meets_a_bad_event_as_a_sync_one_does(big: Path) -> None:
    import asyncio

    line = _break_line(big, 10_000, ("t: ", "t: -"))
    body = {"model": "m", "messages": [{"role": "user", "content": "story"}], "stream": True}

    async def read(received: bytearray) -> None:
        async with (
            httpx.AsyncClient() as client,
            client.stream("POST", URL, json=body) as response,
        ):
            async for chunk in response.aiter_raw():
                received += chunk

    received = bytearray()
    with _replaying(big) as session, pytest.raises(CassetteFormatError) as at_replay:
        asyncio.run(read(received))
    assert (at_replay.value.path, at_replay.value.line) == (big, line)
    assert received.count(b"\n\n") == 10_000
    (call,) = session.calls
    assert (call.outcome, call.events_sent) == ("cut", 10_000)


def test_a_character_yaml_refuses_in_a_non_ascii_block_fails_the_load_naming_it(
    big: Path,
) -> None:
    """A hand edit putting a character YAML refuses (here U+0080, a C1 control) into a
    stream's non-ASCII block: the block is not kept lazily, and loading the file fails
    as the whole-file reader (PyYAML) fails it, naming the file and the character.
    ``_event`` 7 is the first with non-ASCII text."""
    line = _break_line(big, 7, ("naïve", "na\x80ïve"))
    with pytest.raises(CassetteFormatError) as failed:
        io.load_with_format(big, lazy=True)
    assert f"{big}:{line}:" in str(failed.value)
    assert "holds U+0080, a character YAML does not allow" in str(failed.value)
