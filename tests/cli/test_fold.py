"""``agentreplay fold``: the final JSON of a streamed interaction."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from pytest_agentreplay.cassettes import io as cassette
from pytest_agentreplay.cassettes.cassette import RecordedEvent
from pytest_agentreplay.neutral import Reply
from pytest_agentreplay.providers import codec_for, detect
from tests.cli._helpers import (
    CORPUS,
    CORPUS_FILES,
    CORPUS_IDS,
    cli,
    good,
    json_interaction,
    save,
    stream_interaction,
)


def _streams(path: Path) -> list[tuple[int, dict[str, object]]]:
    """(index, folded body) of every streamed model call, folded by the codec directly."""
    out = []
    for index, interaction in enumerate(cassette.load(path).interactions):
        provider = detect(interaction.request.method, urlsplit(interaction.request.url).path)
        if provider and interaction.response.events is not None:
            body = codec_for(provider).fold(interaction.response.sse_events())
            out.append((index, body))
    return out


@pytest.mark.parametrize("path", CORPUS_FILES, ids=CORPUS_IDS)
def test_every_corpus_stream(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    streams = _streams(path)
    for index, body in streams:
        result = cli(capsys, "fold", "--interaction", str(index), path)
        assert result.code == 0, result.err
        assert json.loads(result.out) == body
    if len(streams) == 1:
        assert json.loads(cli(capsys, "fold", path).out) == streams[0][1]


def test_choosing_the_interaction(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = good(tmp_path)
    result = cli(capsys, "fold", path)
    assert result.code == 2
    assert result.err == (
        f"agentreplay: {path}: holds 2 streamed model calls (#0, #2): pick one with "
        "--interaction N\n"
    )
    folded = json.loads(cli(capsys, "fold", "-i", "2", path).out)
    assert folded["object"] == "response"
    assert folded["output"][0]["content"][0]["text"] == "Hi."
    # A model call that did not stream: its body is already the final JSON.
    body = json.loads(cli(capsys, "fold", "-i", "1", path).out)
    assert body["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather"


def test_what_cannot_be_folded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mcp = CORPUS / "other" / "pydantic-ai__test_temporal__test_mcptoolset_in_temporal_workflow.yaml"
    result = cli(capsys, "fold", "-i", "0", mcp)
    assert result.code == 2
    assert "interaction #0 (POST https://mcp.deepwiki.com/mcp) is not a model call" in result.err
    only_json = save(tmp_path / "json.yaml", json_interaction())
    result = cli(capsys, "fold", only_json)
    assert (result.code, result.err) == (
        2,
        f"agentreplay: {only_json}: holds no streamed model call to fold\n",
    )


def test_a_trimmed_stream_folds_with_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    result = cli(capsys, "fold", CORPUS / "anthropic" / "anthropic-sdk__basic_response.sse.txt")
    assert result.code == 0
    assert json.loads(result.out)["content"] == [{"type": "text", "text": "Hello there!"}]
    assert result.err.startswith("warning: interaction #0: truncated: the last event")


def test_strict_refuses_unknown_events(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    interaction = stream_interaction("anthropic", Reply.text("Hi"))
    events = interaction.response.events or []
    odd = RecordedEvent(event="surprise", data='{"type":"surprise"}')
    interaction.response.events = [*events[:2], odd, *events[2:]]
    path = save(tmp_path / "odd.yaml", interaction)
    assert json.loads(cli(capsys, "fold", path).out)["content"][0]["text"] == "Hi"
    result = cli(capsys, "fold", "--strict", path)
    assert result.code == 2
    assert result.err.startswith(f"agentreplay: {path}: interaction #0: anthropic, event #2")


def test_a_stream_without_its_end_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    interaction = stream_interaction("anthropic", Reply.text("Hi"))
    interaction.response.events = (interaction.response.events or [])[:-2]
    path = save(tmp_path / "short.yaml", interaction)
    result = cli(capsys, "fold", path)
    assert result.code == 0
    assert result.err == "warning: interaction #0: no terminal event; body is partial\n"
