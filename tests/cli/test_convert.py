"""``agentreplay convert``: lossless where the target can hold it, scrubbed, warned."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from vcr.serialize import deserialize
from vcr.serializers import yamlserializer

from pytest_agentreplay.cassettes import io as cassette
from pytest_agentreplay.cassettes.cassette import Cassette
from pytest_agentreplay.cassettes.formats.vcrpy import response_bytes
from pytest_agentreplay.redact import default_scrubber
from tests.cli._helpers import (
    CORPUS,
    CORPUS_FILES,
    CORPUS_IDS,
    FAKE_KEY,
    cli,
    good,
    save,
    stream_interaction,
    with_secret,
)


def _same(a: Cassette, b: Cassette) -> bool:
    dump = [json.dumps(c.to_data(), sort_keys=True) for c in (a, b)]
    return dump[0] == dump[1]


def _untimed(value: Cassette) -> Cassette:
    untimed = copy.deepcopy(value)
    for interaction in untimed.interactions:
        for event in interaction.response.events or ():
            event.t = None
    return untimed


@pytest.mark.parametrize("path", CORPUS_FILES, ids=CORPUS_IDS)
def test_every_corpus_file_both_ways(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = default_scrubber().scrub(cassette.load(path))
    ours, vcr = tmp_path / "ours.yaml", tmp_path / "vcr.yaml"
    assert cli(capsys, "convert", path, "--to", "agentreplay", "-o", ours).code == 0
    assert _same(cassette.load(ours), expected)
    assert cli(capsys, "convert", path, "--to", "vcrpy", "-o", vcr).code == 0
    assert cassette.detect_format(vcr.read_bytes()) == "vcrpy"
    assert _same(cassette.load(vcr), expected)
    # vcrpy's own loader reads it, and would replay the same body bytes.
    requests, responses = deserialize(vcr.read_text(encoding="utf-8"), yamlserializer)
    assert len(requests) == len(expected.interactions)
    for response, interaction in zip(responses, expected.interactions, strict=True):
        body = response["body"]["string"]
        sent = body.encode("utf-8") if isinstance(body, str) else body
        assert sent == response_bytes(interaction.response)


def test_our_timings_and_endings_are_listed_when_lost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cut = stream_interaction()
    cut.response.events = (cut.response.events or [])[:3]
    cut.response.end = "cut"
    path = save(tmp_path / "ours.yaml", stream_interaction(), cut)
    result = cli(capsys, "convert", path, "--to", "vcrpy", "-o", tmp_path / "vcr.yaml")
    assert result.code == 0
    assert result.err.splitlines() == [
        "warning: the vcrpy format cannot hold: event arrival times of 14 events in 2 streams "
        "(vcrpy replays a body in one piece); how 1 stream ended (cut): vcrpy replays the "
        "recorded part as a complete body",
        f"wrote {tmp_path / 'vcr.yaml'}: vcrpy, 2 interactions",
    ]
    back = cassette.load(tmp_path / "vcr.yaml")
    original = _untimed(cassette.load(path))
    assert back.interactions[0] == original.interactions[0]
    assert back.interactions[1].response.events == original.interactions[1].response.events
    assert back.interactions[1].response.end == "complete"


def test_what_our_format_does_not_keep_is_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = CORPUS / "other" / "pydantic-ai__test_google_model_stream.yaml"
    result = cli(capsys, "convert", source, "--to", "agentreplay", "-o", tmp_path / "g.yaml")
    assert result.err.splitlines()[0] == (
        "warning: the agentreplay format cannot hold: content-length / transfer-encoding "
        "headers of 1 response (replay computes its own); CR / CRLF line endings of 1 "
        "stream (replayed with LF); 1 repeated header (values joined with ', ')"
    )
    raw = CORPUS / "anthropic" / "anthropic-sdk__basic_response.sse.txt"
    result = cli(capsys, "convert", raw, "--to", "agentreplay")
    assert "a request (a bare SSE body has none" in result.err
    assert cassette.loads(result.out).interactions[0].response.tail is not None


def test_standard_output_and_same_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = good(tmp_path)
    result = cli(capsys, "convert", path, "--to", "vcrpy")
    assert result.code == 0
    assert result.out.startswith("interactions:\n- request:\n    method: POST\n")
    assert result.err.startswith("warning: the vcrpy format cannot hold: event arrival times")
    # In place, and back again: the same cassette but for the timings.
    assert cli(capsys, "convert", path, "--to", "vcrpy", "-o", path).code == 0
    assert cassette.detect_format(path.read_bytes()) == "vcrpy"
    assert cli(capsys, "convert", path, "--to", "agentreplay", "-o", path).code == 0
    assert _same(cassette.load(path), _untimed(cassette.load(good(tmp_path, "again.yaml"))))


def test_vcrpy_output_is_not_wrapped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = CORPUS / "openai_responses" / "pydantic-ai__test_openai_responses_stream.yaml"
    out = cli(capsys, "convert", source, "--to", "vcrpy").out
    longest = max(
        (e.data for i in cassette.load(source).interactions for e in i.response.events or ()),
        key=len,
    )
    assert len(longest) > 1000
    assert f"        data: {longest}\n" in out


def test_a_secret_stops_the_conversion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = with_secret(tmp_path / "leaky.yaml")
    for target in ("vcrpy", "agentreplay"):
        out = tmp_path / f"out-{target}.yaml"
        result = cli(capsys, "convert", path, "--to", target, "-o", out)
        assert result.code == 1
        assert FAKE_KEY not in result.out + result.err
        assert "survived scrubbing" in result.err
        assert not out.exists()
    result = cli(capsys, "convert", path, "--to", "vcrpy", "--allow", FAKE_KEY)
    assert result.code == 0


def test_scrubbing_on_the_way(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = CORPUS / "openai_chat" / "crewai__test_usage_info_streaming_with_call.yaml"
    result = cli(capsys, "convert", source, "--to", "vcrpy", "-o", tmp_path / "v.yaml")
    assert "scrubbed: " in result.err
    text = (tmp_path / "v.yaml").read_text(encoding="utf-8")
    assert "AUTHORIZATION-XXX" not in text
    assert "Bearer REDACTED" in text or "REDACTED" in text


def test_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = good(tmp_path)
    result = cli(capsys, "convert", path, "--to", "vcrpy", "-o", path / "under-a-file.yaml")
    assert result.code == 2
    assert result.err.startswith(f"agentreplay: {path / 'under-a-file.yaml'}: cannot write it: ")
    assert result.err.count("\n") == 1
    assert cli(capsys, "convert", path).code == 2  # --to is required
