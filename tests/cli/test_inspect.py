"""``agentreplay inspect``: our cassettes, every corpus file, broken files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes import io as cassette
from pytest_agentreplay.neutral import Reply, Thinking, ToolCall, Usage
from tests.cli._helpers import (
    CORPUS,
    CORPUS_FILES,
    CORPUS_IDS,
    FAKE_KEY,
    broken,
    cli,
    good,
    json_interaction,
    save,
    stream_interaction,
    with_secret,
)


@pytest.mark.parametrize("path", CORPUS_FILES, ids=CORPUS_IDS)
def test_every_corpus_file(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loaded = cassette.load(path)
    text = cli(capsys, "inspect", "--events", path)
    assert (text.code, text.err) == (0, "")
    count = len(loaded.interactions)
    assert text.out.splitlines()[0].endswith(f"interaction{'s' * (count != 1)}")
    assert text.out.count("\n#") == count

    data = json.loads(cli(capsys, "inspect", "--json", "--events", path).out)
    assert len(data["interactions"]) == count
    for item, interaction in zip(data["interactions"], loaded.interactions, strict=True):
        assert item["status"] == interaction.response.status
        if interaction.response.events is not None:
            assert item["event_count"] == len(interaction.response.events)
            assert sum(item["events_by_type"].values()) == item["event_count"]
            assert len(item["events"]) == item["event_count"]


def test_streamed_model_calls_in_the_corpus_show_their_final_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = CORPUS / "anthropic" / "pydantic-ai__test_multiple_parallel_tool_calls.yaml"
    out = cli(capsys, "inspect", path).out
    assert "request   anthropic · model claude-haiku-4-5 · no stream" in out
    assert out.count("tool call  retrieve_entity_info {") == 4
    web = CORPUS / "anthropic" / "pydantic-ai__test_anthropic_web_search_tool_stream.yaml"
    out = cli(capsys, "inspect", web).out
    assert "events    message_start 1, content_block_start 22, content_block_delta 72" in out
    assert "ended     complete (message_stop)" in out
    assert "blocks: server_tool_use, web_search_tool_result, text" in out


def test_timeline_of_our_cassette(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = good(tmp_path)
    result = cli(capsys, "inspect", path)
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0] == f"{path}: agentreplay cassette, 3 interactions"
    expected = [
        "#0 POST https://api.anthropic.com/v1/messages",
        "   request   anthropic · model claude-test · stream · 1 message · tools: get_weather",
        '   user      "What is the weather in Leeds?"',
        "   response  200 · text/event-stream; charset=utf-8 · 11 events",
        "   events    message_start 1, content_block_start 1, ping 1, content_block_delta 5, "
        "content_block_stop 1, message_delta 1, message_stop 1",
        "   timing    first event 0.200 s · last event 0.700 s",
        "   ended     complete (message_stop)",
        "   final     stop end_turn · usage: input 1, output 6 · blocks: text",
        '     text       "It is sunny in Leeds."',
    ]
    assert lines[2 : 2 + len(expected)] == expected
    assert '     tool call  get_weather {"city":"Leeds"}  (id call_1)' in lines
    assert "   ended     complete (response.completed)" in lines


def test_thinking_tool_calls_and_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reply = Reply(
        parts=[
            Thinking(text="Check the tool.", signature="sig"),
            ToolCall(name="get_weather", args={"city": "Leeds", "days": 2}, id="toolu_1"),
        ],
        usage=Usage(input_tokens=12, output_tokens=7, cache_read_input_tokens=3),
    )
    path = save(tmp_path / "c.yaml", stream_interaction("anthropic", reply))
    out = cli(capsys, "inspect", path).out
    assert "stop tool_use · usage: input 12, output 7, cache read 3" in out
    assert '     thinking   "Check the tool."' in out
    assert '     tool call  get_weather {"city":"Leeds","days":2}  (id toolu_1)' in out


def test_events_and_interaction_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = good(tmp_path)
    out = cli(capsys, "inspect", "--events", "--interaction", "0", path).out
    assert "#1 " not in out
    assert "     0   +0.200s  message_start" in out
    assert '    10   +0.700s  message_stop         {"type":"message_stop"}' in out

    data = json.loads(cli(capsys, "inspect", "--json", "-i", "1", path).out)
    (item,) = data["interactions"]
    assert item["final"]["tool_calls"] == [
        {"name": "get_weather", "args": {"city": "Leeds"}, "id": "call_1"}
    ]
    assert (item["streaming"], item["first_event_s"]) == (False, None)

    result = cli(capsys, "inspect", "-i", "7", path)
    assert result.code == 2
    assert result.err == f"agentreplay: {path}: has no interaction #7 (it holds #0 to #2)\n"


def test_the_tail_of_a_truncated_stream_is_shown(capsys: pytest.CaptureFixture[str]) -> None:
    path = CORPUS / "anthropic" / "anthropic-sdk__basic_response.sse.txt"
    out = cli(capsys, "inspect", "--events", path).out
    assert "ended     truncated: the last event has no closing blank line" in out
    assert '(tail, never dispatched)  event: message_stop\\ndata: {"type":"message_stop"}' in out


def test_secrets_are_masked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = with_secret(tmp_path / "leaky.yaml")
    for args in (("inspect", path), ("inspect", "--json", "--events", path)):
        result = cli(capsys, *args)
        assert result.code == 0
        assert FAKE_KEY not in result.out
        assert "REDACTED" in result.out


@pytest.mark.parametrize("name", ["empty", "truncated", "bad-utf8"])
def test_broken_files_are_one_line_errors(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = broken(tmp_path)[name]
    result = cli(capsys, "inspect", path)
    assert result.code == 2
    assert result.out == ""
    assert result.err.startswith(f"agentreplay: {path}")
    assert result.err.count("\n") == 1


def test_a_directory_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = cli(capsys, "inspect", tmp_path)
    assert result.code == 2
    assert "is a directory" in result.err


def test_non_model_calls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mcp = CORPUS / "other" / "pydantic-ai__test_temporal__test_mcptoolset_in_temporal_workflow.yaml"
    out = cli(capsys, "inspect", mcp).out
    assert "   request   not a model call · JSON body · JSON-RPC tools/list" in out
    assert "   response  202 · application/json · no body" in out
    errors = (
        CORPUS
        / "anthropic"
        / "anthropic-sdk__TestAsyncParse.test_parse_with_nested_pydantic_model__d743d628.json"
    )
    assert (
        "   error     rate_limit_error: This request would exceed"
        in cli(capsys, "inspect", errors).out
    )
    path = save(tmp_path / "j.yaml", json_interaction("anthropic", Reply.text("Hi.")))
    assert '     text       "Hi."' in cli(capsys, "inspect", path).out
