"""Other formats converted at load: every real corpus file, checked against the
independent test-side reader (``tests/corpus.py``) and the SSE decoder."""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_agentreplay import sse
from pytest_agentreplay.cassettes.cassette import Cassette, RecordedResponse
from pytest_agentreplay.cassettes.from_wire import request_from_wire, response_from_wire, split_sse
from pytest_agentreplay.cassettes.io import CassetteFormatError, detect_format, dumps, load, loads
from tests import corpus

FILES = corpus.files()
CORPUS_IDS = [f"{p.parent.name}/{p.name}" for p in FILES]
EXPECTED_FORMAT = {
    "pydantic-ai": "vcrpy",
    "crewai": "vcrpy",
    "crewai-55ed91e": "vcrpy",
    "anthropic-sdk": "http-snapshot",
    "openai-python": "raw-sse",
}


def _expected_format(path: Path) -> str:
    if path.name.endswith((".sse.txt", ".sse.bin")):
        return "raw-sse"
    return EXPECTED_FORMAT[path.name.split("__")[0]]


@pytest.fixture(scope="module")
def loaded() -> dict[Path, Cassette]:
    return {path: load(path) for path in FILES}


def test_the_corpus_is_all_there() -> None:
    assert len(FILES) == 55


@pytest.mark.parametrize("path", FILES, ids=CORPUS_IDS)
def test_every_corpus_file_loads_unchanged_on_disk(path: Path) -> None:
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    cassette = load(path)
    assert cassette.interactions
    assert detect_format(path.read_bytes()) == _expected_format(path)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


@pytest.mark.parametrize("path", FILES, ids=CORPUS_IDS)
def test_converted_cassettes_save_and_reload_identically(
    path: Path, loaded: dict[Path, Cassette]
) -> None:
    text = dumps(loaded[path])
    assert loads(text) == loaded[path]
    assert dumps(loads(text)) == text


def _pairs(loaded: dict[Path, Cassette]) -> list[tuple[corpus.CorpusInteraction, RecordedResponse]]:
    out = []
    for path in FILES:
        reference = corpus.load(path)
        assert len(reference) == len(loaded[path].interactions)
        out.extend(
            (ref, ours.response)
            for ref, ours in zip(reference, loaded[path].interactions, strict=True)
        )
    return out


def test_requests_match_the_reference_reader(loaded: dict[Path, Cassette]) -> None:
    for path in FILES:
        for ref, ours in zip(corpus.load(path), loaded[path].interactions, strict=True):
            request = ours.request
            assert request.method == ref.method
            if ref.url is not None:
                assert request.url == ref.url
            if isinstance(ref.request_body, (dict, list)):
                assert request.json_body == ref.request_body, ref.id
            elif ref.request_body is None:
                assert request.content() == b"", ref.id


def test_streams_are_split_exactly_as_the_spec_decoder_splits_them(
    loaded: dict[Path, Cassette],
) -> None:
    streams = 0
    for ref, response in _pairs(loaded):
        assert response.status == ref.status
        if not ref.is_sse:
            assert response.events is None, ref.id
            continue
        streams += 1
        expected = sse.decode(ref.body, keep_comments=True)
        assert response.sse_events() == expected.events, ref.id
        assert (response.truncated is None) == (expected.truncated is None), ref.id
    assert streams >= 50


def test_re_encoding_gives_the_client_the_same_bytes(loaded: dict[Path, Cassette]) -> None:
    """Events + tail re-encoded decode to the same events (data bytes, names, comments);
    line endings normalise to LF, and blank lines that close comment-only blocks
    (OpenRouter's ``: OPENROUTER PROCESSING``, MCP's ``: ping``) are not kept."""
    exact = 0
    for ref, response in _pairs(loaded):
        if response.events is None:
            continue
        replayed = sse.encode(response.sse_events(), comments=True)
        replayed += (response.tail or "").encode()
        original = sse.decode(ref.body, keep_comments=True)
        again = sse.decode(replayed, keep_comments=True)
        assert again.events == original.events, ref.id
        assert (again.truncated is None) == (original.truncated is None), ref.id
        has_comment_blocks = any(e.comments for e in original.events)
        if not has_comment_blocks:
            assert replayed == ref.body.replace(b"\r\n", b"\n"), ref.id
            exact += 1
    assert exact >= 50


def test_other_bodies_match_the_reference_bytes(loaded: dict[Path, Cassette]) -> None:
    for ref, response in _pairs(loaded):
        if response.events is not None:
            continue
        if response.json_body is not None:
            assert response.json_body == json.loads(ref.body), ref.id
        else:
            assert response.content() == ref.body, ref.id


def _one(name: str, index: int = 0) -> RecordedResponse:
    (path,) = [p for p in FILES if p.name == name]
    return load(path).interactions[index].response


def test_gzip_binary_body_is_decompressed_and_its_header_dropped() -> None:
    response = _one("crewai-55ed91e__test_gpt_4_1[gpt-4.1-nano-2025-04-14].yaml")
    assert response.json_body["choices"][0]["message"]["content"] == (
        "The capital of France is Paris."
    )
    assert "content-encoding" not in response.headers


def test_gzip_header_on_a_plain_body_keeps_the_body_drops_the_header() -> None:
    response = _one("crewai__test_csv_search_tool.yaml")
    assert response.json_body is not None
    assert "content-encoding" not in response.headers


def test_an_sse_content_type_with_a_json_body_stays_json() -> None:
    # Gemini's 400 says text/event-stream but sends one JSON object.
    response = _one("crewai__test_google_streaming_returns_usage_metrics.yaml")
    assert response.status == 400
    assert response.headers["content-type"] == "text/event-stream"
    assert response.events is None
    assert response.json_body["error"]["code"] == 400


def test_crlf_stream_splits_into_its_events() -> None:
    response = _one("pydantic-ai__test_google_model_stream.yaml")
    assert response.events is not None
    assert len(response.events) == 3
    assert all("\r" not in e.data for e in response.events)


def test_comments_are_kept_on_the_following_event() -> None:
    response = _one("pydantic-ai__test_openrouter_stream_error.yaml")
    assert response.events is not None
    assert response.events[0].comments == ["OPENROUTER PROCESSING", None] * 17


def test_raw_fixture_without_final_blank_line_keeps_its_tail() -> None:
    response = _one("anthropic-sdk__basic_response.sse.txt")
    assert response.tail == 'event: message_stop\ndata: {"type":"message_stop"}'
    assert response.truncated is not None
    assert "message_stop" in response.truncated
    assert response.end == "complete"
    assert [e.event for e in response.events or []][-1] == "message_delta"


@pytest.mark.parametrize(
    ("name", "url"),
    [
        ("anthropic-sdk__basic_response.sse.txt", "https://api.anthropic.com/v1/messages"),
        (
            "openai-python__test_parse_nothing__e2aad469b71d.sse.bin",
            "https://api.openai.com/v1/chat/completions",
        ),
    ],
)
def test_raw_streams_get_a_request_for_their_provider(name: str, url: str) -> None:
    (path,) = [p for p in FILES if p.name == name]
    request = load(path).interactions[0].request
    assert (request.method, request.url) == ("POST", url)


def test_http_snapshot_keeps_retries_in_order() -> None:
    (path,) = [p for p in FILES if "test_stream_with_raw_schema" in p.name]
    interactions = load(path).interactions
    assert [i.response.status for i in interactions] == [429, 429, 200]
    counts = [i.request.headers["x-stainless-retry-count"] for i in interactions]
    assert counts == ["0", "1", "2"]
    assert interactions[0].request.json_body["stream"] is True


# --- synthetic vcrpy files -------------------------------------------------------------------


def _vcr(response: dict[str, Any], request: dict[str, Any] | None = None) -> str:
    data = {
        "interactions": [
            {
                "request": request
                or {"body": None, "headers": {}, "method": "POST", "uri": "https://x.invalid/"},
                "response": {"status": {"code": 200, "message": "OK"}, **response},
            }
        ],
        "version": 1,
    }
    return yaml.dump(data, Dumper=yaml.SafeDumper)


def test_list_headers_are_joined_and_single_valued_ones_take_the_first() -> None:
    text = _vcr(
        {
            "headers": {"Content-Type": ["application/json", "text/plain"], "Vary": ["A", "B"]},
            "body": {"string": '{"ok": true}'},
        }
    )
    response = loads(text).interactions[0].response
    assert response.headers == {"content-type": "application/json", "vary": "A, B"}


def test_deflate_body_is_inflated() -> None:
    body = zlib.compress(b'{"ok": 1}')
    text = _vcr({"headers": {"Content-Encoding": ["deflate"]}, "body": {"string": body}})
    response = loads(text).interactions[0].response
    assert response.json_body == {"ok": 1}
    assert response.headers == {}


def test_an_encoding_we_cannot_undo_keeps_bytes_and_header() -> None:
    text = _vcr({"headers": {"Content-Encoding": ["br"]}, "body": {"string": b"\x8b\x02\x80"}})
    response = loads(text).interactions[0].response
    assert response.headers == {"content-encoding": "br"}
    assert response.content() == b"\x8b\x02\x80"


def test_a_gzip_bomb_is_refused() -> None:
    bomb = gzip.compress(b"\0" * (65 * 1024 * 1024))
    text = _vcr({"headers": {"Content-Encoding": ["gzip"]}, "body": {"string": bomb}})
    with pytest.raises(CassetteFormatError, match="expands beyond") as info:
        loads(text)
    assert info.value.field == "interactions[0].response.body"


@pytest.mark.parametrize(
    "body",
    ['{"a": 1, "a": 2}', '{"a": NaN}', '{"a": 1e999}', '"just a string"', "[1, 2"],
    ids=["duplicate", "nan", "inf", "scalar", "broken"],
)
def test_json_that_would_change_if_parsed_stays_text(body: str) -> None:
    request = {
        "body": body,
        "headers": {"content-type": ["application/json"]},
        "method": "POST",
        "uri": "https://x.invalid/",
    }
    stored = loads(_vcr({"body": {"string": ""}}, request)).interactions[0].request
    assert (stored.json_body, stored.body) == (None, body)


def test_binary_request_body_is_base64() -> None:
    request = {"body": b"\xff\x00\x01", "headers": {}, "method": "PUT", "uri": "https://x.invalid/"}
    stored = loads(_vcr({"body": {"string": ""}}, request)).interactions[0].request
    assert stored.body_b64 == base64.b64encode(b"\xff\x00\x01").decode()


# --- split_sse and the wire helpers ----------------------------------------------------------


def test_split_sse_crlf_comments_bom() -> None:
    body = b"\xef\xbb\xbf: hello\r\nevent: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n"
    events, note = split_sse(body)
    assert note is None
    assert [(e.event, e.data, e.comments) for e in events] == [
        ("a", "1", ["hello"]),
        (None, "2", None),
    ]


def test_split_sse_reports_an_unterminated_event() -> None:
    events, note = split_sse(b"data: 1\n\ndata: 2\n")
    assert [e.data for e in events] == ["1"]
    assert note is not None
    assert "not followed by a blank line" in note


def test_response_from_wire_splits_streams_and_parses_json() -> None:
    stream = response_from_wire(200, [("Content-Type", "text/event-stream")], b"data: x\n\n")
    assert stream.sse_events() == [sse.SSEEvent(data="x")]
    body = response_from_wire(
        200, {"content-type": "application/json", "content-length": "9"}, b'{"a": [1]}'
    )
    assert (body.json_body, body.headers) == ({"a": [1]}, {"content-type": "application/json"})


def test_request_from_wire_lower_cases_and_parses() -> None:
    request = request_from_wire(
        "POST", "https://x.invalid/", [("X-A", "1"), ("x-a", "2")], b'{"m": "hi"}'
    )
    assert request.headers == {"x-a": "1, 2"}
    assert request.json_body == {"m": "hi"}
