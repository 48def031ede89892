"""The cassette YAML layout: exact text, byte stability, and YAML's traps."""

from __future__ import annotations

import base64

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.io import CassetteFormatError, dumps, from_data, loads
from pytest_agentreplay.cassettes.yaml import emit
from pytest_agentreplay.cassettes.yaml.fast import read_canonical
from pytest_agentreplay.cassettes.yaml.scalars import IMPLICIT, IMPLICIT_TAGS, MAX_DEPTH
from tests.cassettes._cassette_strategies import TRAPS, cassettes, json_values

EXPECTED = """\
interactions:
- request:
    method: POST
    url: https://api.anthropic.com/v1/messages
    headers:
      anthropic-version: '2023-06-01'
      content-type: application/json
    json:
      model: claude-sonnet-4-6
      stream: true
      max_tokens: 1024
      messages:
      - role: user
        content:
        - type: text
          text: |
            Two lines,
            the second one ends here.
      metadata: {}
      stop_sequences: []
  response:
    status: 200
    headers:
      content-type: text/event-stream; charset=utf-8
    events:
    - {t: 0.012, event: message_start, data: '{"type":"message_start"}'}
    - {t: 0.5, event: ping, data: '{"type": "ping"}'}
    - {event: content_block_delta, data: '{"text":"it''s"}'}
    - {id: '7', comments: [OPENROUTER PROCESSING], data: "a\\nb"}
    end: cut
- request:
    method: GET
    url: https://example.invalid/x?a=1#frag
  response:
    status: 404
    body: not found
version: 1
"""


def _example() -> Cassette:
    return Cassette(
        interactions=[
            Interaction(
                request=RecordedRequest(
                    method="POST",
                    url="https://api.anthropic.com/v1/messages",
                    headers={"Content-Type": "application/json", "anthropic-version": "2023-06-01"},
                    json={
                        "model": "claude-sonnet-4-6",
                        "stream": True,
                        "max_tokens": 1024,
                        "messages": [
                            {
                                "role": "user",
                                "content": [
                                    {
                                        "type": "text",
                                        "text": "Two lines,\nthe second one ends here.\n",
                                    }
                                ],
                            }
                        ],
                        "metadata": {},
                        "stop_sequences": [],
                    },
                ),
                response=RecordedResponse(
                    status=200,
                    headers={
                        "content-type": "text/event-stream; charset=utf-8",
                        "Content-Length": "999",
                        "transfer-encoding": "chunked",
                    },
                    events=[
                        RecordedEvent(
                            t=0.012, event="message_start", data='{"type":"message_start"}'
                        ),
                        RecordedEvent(t=0.5, event="ping", data='{"type": "ping"}'),
                        RecordedEvent(event="content_block_delta", data='{"text":"it\'s"}'),
                        RecordedEvent(id="7", comments=["OPENROUTER PROCESSING"], data="a\nb"),
                    ],
                    end="cut",
                ),
            ),
            Interaction(
                request=RecordedRequest(method="GET", url="https://example.invalid/x?a=1#frag"),
                response=RecordedResponse(status=404, body="not found"),
            ),
        ]
    )


def test_layout_is_exactly_the_documented_one() -> None:
    assert dumps(_example()) == EXPECTED


def test_own_file_loads_back_and_re_saves_byte_identical() -> None:
    loaded = loads(EXPECTED)
    assert loaded == _example()
    assert dumps(loaded) == EXPECTED


def test_own_file_takes_the_fast_path() -> None:
    # The canonical reader accepts what the writer wrote (no libyaml fallback).
    assert cassette_io._fast(EXPECTED) == _example()


@pytest.mark.parametrize("loader", [yaml.CSafeLoader, yaml.SafeLoader], ids=["libyaml", "pure"])
def test_standard_yaml_readers_see_the_same_data(loader: type[yaml.SafeLoader]) -> None:
    assert from_data(yaml.load(EXPECTED, Loader=loader)) == _example()


def test_version_is_the_last_line_so_truncation_is_noticed() -> None:
    cut = EXPECTED[: EXPECTED.index("- request:\n    method: GET")]
    with pytest.raises(CassetteFormatError, match="truncated"):
        loads(cut)


def _roundtrip(cassette: Cassette) -> None:
    text = dumps(cassette)
    assert loads(text) == cassette
    assert dumps(loads(text)) == text
    for loader in (yaml.CSafeLoader, yaml.SafeLoader):
        assert from_data(yaml.load(text, Loader=loader)) == cassette
    assert from_data(read_canonical(text)) == cassette


@given(cassettes)
def test_any_cassette_dumps_and_loads_back_equal(cassette: Cassette) -> None:
    _roundtrip(cassette)


@given(json_values)
def test_any_json_body_survives(value: object) -> None:
    body = value if isinstance(value, (dict, list)) and value else {"v": value}
    request = RecordedRequest(method="POST", url="u", json=body)
    _roundtrip(Cassette(interactions=[Interaction(request=request, response=_ok())]))


def _ok() -> RecordedResponse:
    return RecordedResponse(status=200)


@pytest.mark.parametrize("trap", TRAPS, ids=repr)
def test_yaml_traps_survive_in_every_position(trap: str) -> None:
    data = trap.replace("\r", "")
    request = RecordedRequest(
        method="POST", url=trap or "u", headers={"x-trap": trap}, json={trap: [trap, {trap: trap}]}
    )
    response = RecordedResponse(
        status=200,
        events=[RecordedEvent(data=data, event=data.replace("\n", "") or None)],
        truncated=trap,
        tail=trap,
    )
    text_body = RecordedResponse(status=200, body=trap)
    _roundtrip(
        Cassette(
            interactions=[
                Interaction(request=request, response=response),
                Interaction(request=RecordedRequest(method="GET", url="u"), response=text_body),
            ]
        )
    )


@pytest.mark.parametrize("typed", ["1e3", "0o17", "0x1F", "yes", "y", "null", "2025-01-01", "1:20"])
def test_strings_other_yaml_versions_would_type_are_quoted(typed: str) -> None:
    text = dumps(_with_header(typed))
    assert f"x: '{typed}'" in text


def test_the_writer_knows_every_implicit_type_pyyaml_resolves() -> None:
    """The writer decides "plain or quoted" without importing PyYAML, from a copy of
    its implicit resolvers: the copy must still be PyYAML's, pattern for pattern."""
    theirs = {
        (tag, rx.pattern, rx.flags)
        for resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.values()
        for tag, rx in resolvers
    }
    ours = {(tag, rx.pattern, rx.flags) for tag, rx in IMPLICIT_TAGS.items()}
    assert ours == theirs


@given(
    text=st.text(alphabet="0123456789-+._:eExXbBoOTtZz nNyYuUlLfFaAsS~<=!&*\t", max_size=14)
    | st.sampled_from(["", " ", "<<", "=", "!", "&", "*", "~", ".NaN", "-.INF", "2001-1-1 1:2:3"])
)
def test_the_implicit_patterns_asked_at_once_say_what_each_says(text: str) -> None:
    """The writer asks PyYAML's patterns in one match (issue 29): it matches exactly
    when one of them does, each with its own flags."""
    each = any(rx.match(text) for rx in IMPLICIT_TAGS.values())
    assert (IMPLICIT.match(text) is not None) == each


_TYPED_ALPHABET = st.text(alphabet="0123456789-+._:eExXbBoOTtZz nNyYuUlLfFaAsS~<=", max_size=14)


@given(
    text=_TYPED_ALPHABET
    | st.sampled_from(
        ["1_000", "0b101", "190:20:30", "2001-12-14 21:59:43.10 -5", ".inf", "Off", "~", "<<", "="]
    )
)
def test_a_plain_written_string_reads_back_as_that_string(text: str) -> None:
    dumped = dumps(_with_header(text))
    assert (
        yaml.load(dumped, Loader=yaml.CSafeLoader)["interactions"][0]["request"]["headers"]["x"]
        == text
    )
    plain = f"      x: {text}\n" in dumped
    resolved = yaml.resolver.Resolver().resolve(yaml.ScalarNode, text, (True, False))
    if plain:
        assert resolved == "tag:yaml.org,2002:str"


def _with_header(value: str) -> Cassette:
    request = RecordedRequest(method="GET", url="u", headers={"x": value})
    return Cassette(interactions=[Interaction(request=request, response=_ok())])


def test_no_line_is_ever_wrapped() -> None:
    long = "word " * 400 + "end"
    text = dumps(_with_header(long))
    (line,) = [line for line in text.splitlines() if line.startswith("      x: ")]
    assert line.strip("' ").endswith(long)


def test_shared_objects_never_become_anchors() -> None:
    shared = {"role": "user", "content": "hi"}
    request = RecordedRequest(method="POST", url="u", json={"a": shared, "b": shared})
    text = dumps(Cassette(interactions=[Interaction(request=request, response=_ok())] * 2))
    events = list(yaml.parse(text, Loader=yaml.CSafeLoader))
    assert not any(isinstance(e, yaml.AliasEvent) for e in events)
    assert all(getattr(e, "anchor", None) is None for e in events)


def test_multi_line_text_uses_literal_blocks_with_the_right_chomping() -> None:
    bodies = {"clip": "a\nb\n", "strip": "a\nb", "keep": "a\nb\n\n\n"}
    text = dumps(
        Cassette(
            interactions=[
                Interaction(request=RecordedRequest(method="GET", url=name), response=_text(body))
                for name, body in bodies.items()
            ]
        )
    )
    assert "    body: |\n      a\n      b\n" in text
    assert "    body: |-\n      a\n      b\n" in text
    assert "    body: |+\n      a\n      b\n\n\n" in text
    assert [i.response.body for i in loads(text).interactions] == list(bodies.values())


def _text(body: str) -> RecordedResponse:
    return RecordedResponse(status=200, body=body)


def test_headers_are_lower_cased_sorted_and_wire_only_ones_dropped() -> None:
    response = RecordedResponse(
        status=200,
        headers={
            "X-B": "2",
            "Content-Length": "10",
            "Content-Encoding": "gzip",
            "Transfer-Encoding": "chunked",
            "x-a": "1",
        },
        json={"ok": True},
    )
    request = RecordedRequest(method="POST", url="u", headers={"Content-Length": "5"})
    text = dumps(Cassette(interactions=[Interaction(request=request, response=response)]))
    assert "    headers:\n      x-a: '1'\n      x-b: '2'\n    json:" in text
    assert "      content-length: '5'\n" in text  # the request keeps its own


def test_content_encoding_is_kept_with_raw_bytes() -> None:
    raw = base64.b64encode(b"\x1f\x8b\x08rest").decode()
    response = RecordedResponse(status=200, headers={"Content-Encoding": "gzip"}, body_b64=raw)
    assert response.headers == {"content-encoding": "gzip"}


def test_mutated_header_names_are_still_normalized_on_dump() -> None:
    cassette = _with_header("v")
    cassette.interactions[0].response.headers["Content-Length"] = "3"
    cassette.interactions[0].request.headers["X-Upper"] = "u"
    text = dumps(cassette)
    assert "content-length" not in text.lower().split("response:")[1]
    assert "      x-upper: u\n" in text


@pytest.mark.parametrize(
    ("body", "field", "problem"),
    [
        ({"text": "\ud800"}, "interactions[0].request.json.text", "lone surrogate"),
        ({"a": {1: 2}}, "interactions[0].request.json.a", "int key"),
        ({"a": object()}, "interactions[0].request.json.a", "not JSON"),
    ],
    ids=["surrogate", "int-key", "object"],
)
def test_unstorable_values_are_refused_naming_the_field(
    body: dict[str, object], field: str, problem: str
) -> None:
    request = RecordedRequest(method="POST", url="u")
    request.json_body = body  # set after construction, so that no check refuses it first
    cassette = Cassette(interactions=[Interaction(request=request, response=_ok())])
    with pytest.raises(CassetteFormatError, match=problem) as info:
        _dump_raw(cassette)
    assert info.value.field == field


def _dump_raw(cassette: Cassette) -> str:
    """dumps() without checking the model again, so that values it refuses reach the writer."""
    from pytest_agentreplay.cassettes.yaml.emit import dump_cassette
    from pytest_agentreplay.cassettes.yaml.errors import UnstorableError

    try:
        return dump_cassette(cassette)
    except UnstorableError as exc:
        raise CassetteFormatError(
            exc.problem, path="c.yaml", field=cassette_io.field_path(exc.where)
        ) from None


def test_nesting_deeper_than_the_limit_is_refused_on_dump() -> None:
    body: dict[str, object] = {}
    inner = body
    for _ in range(MAX_DEPTH + 5):
        inner["a"] = {}
        inner = inner["a"]  # type: ignore[assignment]
    request = RecordedRequest(method="POST", url="u", json=body)
    with pytest.raises(CassetteFormatError, match="deeper than"):
        dumps(Cassette(interactions=[Interaction(request=request, response=_ok())]))


def test_json_nesting_within_the_limit_round_trips() -> None:
    body: list[object] = []
    inner = body
    for _ in range(MAX_DEPTH - 5):
        inner.append([])
        inner = inner[0]  # type: ignore[assignment]
    request = RecordedRequest(method="POST", url="u", json=body)
    _roundtrip(Cassette(interactions=[Interaction(request=request, response=_ok())]))


@given(st.lists(st.sampled_from(TRAPS), min_size=1, max_size=5))
def test_event_lines_stay_one_line_each(datas: list[str]) -> None:
    events = [RecordedEvent(data=d.replace("\r", ""), event="e") for d in datas]
    response = RecordedResponse(status=200, events=events)
    text = dumps(
        Cassette(
            interactions=[
                Interaction(request=RecordedRequest(method="G", url="u"), response=response)
            ]
        )
    )
    body = text.split("    events:\n")[1].split("    end:")[0]
    assert len(body.splitlines()) == len(events)


def test_a_headers_block_is_written_for_its_own_values() -> None:
    """The writer keeps a headers block's lines per set of headers (issue 29); text
    only: ``1``, ``1.0`` and ``True`` are one key to a cache, three lines to YAML."""

    def lines(headers: dict[str, object]) -> list[str]:
        writer = emit._Writer()
        emit._headers(writer, headers)
        return writer.lines

    assert lines({"X-A": "1", "x-b": "two"}) == ["    headers:", "      x-a: '1'", "      x-b: two"]
    assert lines({"X-A": "1", "x-b": "two"}) == lines({"x-b": "two", "X-A": "1"})
    assert lines({"x-a": 1}) == ["    headers:", "      x-a: 1"]
    assert lines({"x-a": True}) == ["    headers:", "      x-a: true"]
    assert lines({"x-a": 1.0}) == ["    headers:", "      x-a: 1.0"]
