"""Replay's plain records (``_records``): whatever they accept, the model loads the same.

The plain reader may refuse anything (the model then reads the file and explains
what is wrong); it must never accept a file the model refuses, nor read a value
differently. These tests hold it to that: on every cassette the writer can produce,
on mutations of canonical files (one value or key replaced by a YAML trap), and on
the cases the re-emission check alone would not catch (the model changes a value
that the writer would write back unchanged, or refuses a value the writer writes).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes import records as _records
from pytest_agentreplay.cassettes.io import (
    CassetteFormatError,
    dumps,
    loads,
    request_from_wire,
)
from pytest_agentreplay.cassettes.model import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedResponse,
)
from tests import corpus
from tests.cassettes._cassette_strategies import cassettes, json_bodies, text
from tests.cli._helpers import json_interaction, stream_interaction

REALISTIC = dumps(Cassette(interactions=[stream_interaction(), json_interaction()]))


def _same(text_: str) -> None:
    """If the plain reader accepts ``text_``, the model loads it, to the same data."""
    plain = _records.loads(text_)
    if plain is None:
        return
    model = loads(text_)  # raises CassetteFormatError if the reader accepted a bad file
    assert [_records.as_data(i) for i in plain] == [_records.as_data(i) for i in model.interactions]


@given(cassettes)
def test_every_cassette_the_writer_produces_reads_the_same_plain_or_not(cassette: Cassette) -> None:
    text_ = dumps(cassette)
    plain = _records.loads(text_)
    model = loads(text_)
    if plain is not None:  # the strategies hold no NaN: plain equality applies
        assert [_records.as_data(i) for i in plain] == [
            _records.as_data(i) for i in model.interactions
        ]


def test_realistic_cassettes_are_read_plain() -> None:
    """Not a vacuous property: the files the plugin writes for real traffic (streams
    with timings, JSON bodies, header maps, the real recordings of the corpus) are
    accepted by the plain reader, and read as the model reads them."""
    texts = [REALISTIC, dumps(Cassette())]
    for path in corpus.files():
        texts.append(dumps(loads(path.read_bytes(), path=str(path))))
    for text_ in texts:
        plain = _records.loads(text_)
        assert plain is not None, text_[:300]
        model = loads(text_)
        assert [_records.as_data(i) for i in plain] == [
            _records.as_data(i) for i in model.interactions
        ]


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
    ``replacements``; the plain reader must read it as the model does, or refuse it."""
    target = data.draw(st.sampled_from(list(spots.finditer(REALISTIC))))
    mutated = REALISTIC[: target.start(2)] + data.draw(st.sampled_from(replacements))
    try:
        _same(mutated + REALISTIC[target.end(2) :])
    except CassetteFormatError:
        pytest.fail(f"the plain reader accepted a file the model refuses: {target.group(0)!r}")


@given(st.data())
def test_a_canonical_file_with_one_value_replaced_reads_the_same_or_goes_to_the_model(
    data: st.DataObject,
) -> None:
    _mutate(data, _VALUE_LINE, _TRAP_VALUES)


@given(st.data())
def test_a_canonical_file_with_a_key_renamed_reads_the_same_or_goes_to_the_model(
    data: st.DataObject,
) -> None:
    _mutate(data, _KEY_LINE, _TRAP_KEYS)


def _stream(**event: Any) -> str:
    response = RecordedResponse(status=200, events=[RecordedEvent(data="{}")])
    text_ = dumps(
        Cassette(interactions=[json_interaction().model_copy(update={"response": response})])
    )
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
def test_values_the_model_changes_or_refuses_are_left_to_it(case: str, edit: Any) -> None:
    text_ = edit()
    assert _records.loads(text_) is None, case
    try:
        model = loads(text_)
    except CassetteFormatError:
        return  # refused, with the model's precise message
    if case == "time beyond the microsecond":
        events = model.interactions[0].response.events
        assert events is not None and events[0].t == 0.123457  # the model rounds it


def test_a_file_that_is_not_canonical_is_left_to_the_model() -> None:
    hand_edited = REALISTIC.replace(
        "    headers:\n      content-type: application/json\n",
        "    headers: {content-type: application/json}\n",
        1,
    )
    assert hand_edited != REALISTIC
    assert _records.loads(hand_edited) is None
    assert loads(hand_edited).interactions[0].request.headers == {
        "content-type": "application/json"
    }
    assert _records.loads(REALISTIC.replace("version: 1\n", "version: 1\n# x\n")) is None
    assert _records.loads("") is None


def test_an_unreadable_file_is_left_to_the_model(tmp_path: Any) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(REALISTIC.encode()[:-3] + b"\xff\n")
    assert _records.load(bad) is None
    assert _records.load(tmp_path / "missing.yaml") is None
    good = tmp_path / "good.yaml"
    good.write_bytes(b"\xef\xbb\xbf" + REALISTIC.encode())  # a BOM is skipped, as by the model
    assert _records.load(good) is not None


@given(
    body=st.one_of(
        json_bodies.map(lambda v: _records.body_bytes(v, None, None)),
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
def test_a_live_request_is_read_as_the_model_reads_it(
    body: bytes, headers: list[tuple[str, str]]
) -> None:
    url = "https://api.anthropic.com/v1/messages"
    plain = _records.live_request("POST", url, headers, body)
    model = request_from_wire("POST", url, headers, body)
    left = _records.as_data(_records.Interaction(plain, _records.Response(200, {})))
    right = _records.as_data(Interaction(request=model, response=RecordedResponse(status=200)))
    assert left == right
    assert plain.content() == model.content()


def test_the_public_model_is_built_from_plain_records_on_request() -> None:
    plain = _records.loads(REALISTIC)
    assert plain is not None
    model = _records.to_cassette(plain)
    assert model == loads(REALISTIC)
    model.interactions[1].response.json_body["id"] = "changed"  # a copy: records untouched
    assert plain[1].response.json_body["id"] != "changed"


def test_plain_events_play_as_the_model_s() -> None:
    plain = _records.loads(REALISTIC)
    assert plain is not None
    model = loads(REALISTIC)
    assert plain[0].response.sse_events() == model.interactions[0].response.sse_events()
    assert plain[0].response.is_stream and not plain[1].response.is_stream
    assert plain[1].response.content() == model.interactions[1].response.content()
