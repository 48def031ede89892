"""``agentreplay lint``: each check on a file made to fail it, the real corpus, formats."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes import io as cassette
from pytest_agentreplay.cassettes.cassette import Cassette, RecordedEvent
from pytest_agentreplay.neutral import Reply
from tests.cli._helpers import (
    CORPUS,
    FAKE_KEY,
    broken,
    cli,
    good,
    save,
    stream_interaction,
    with_secret,
)

# What lint reports on the 55 real recordings: (file, check, field). Every one is a
# real property of the file (see tests/corpus/real/FORMATS.md, "Replay pitfalls").
CORPUS_FINDINGS = {
    *(
        (f"anthropic/anthropic-sdk__{name}.json", "content-length", f"interactions[{i}]")
        for name, indexes in (
            ("TestAsyncParse.test_parse_with_nested_pydantic_model__d743d628", (0, 1)),
            ("TestAsyncStream.test_stream_with_raw_schema__a8b7dbb8", (0, 1)),
            ("TestSyncRunTools.test_custom_message_handling__f59a9391", (1,)),
        )
        for i in indexes
    ),
    *(
        (f"anthropic/anthropic-sdk__{name}.sse.txt", "sse-tail", "interactions[0]")
        for name in ("basic_response", "incomplete_partial_json_response", "tool_use_response")
    ),
    (
        "anthropic/pydantic-ai__test_anthropic_count_tokens_error.yaml",
        "content-length",
        "interactions[0]",
    ),
    (
        "anthropic/pydantic-ai__test_multiple_parallel_tool_calls.yaml",
        "content-length",
        "interactions[0]",
    ),
    (
        "anthropic/pydantic-ai__test_multiple_parallel_tool_calls.yaml",
        "content-length",
        "interactions[1]",
    ),
    (
        "openai_chat/pydantic-ai__test_openai_o1_mini_system_role[developer].yaml",
        "content-length",
        "interactions[0]",
    ),
    (
        "openai_responses/pydantic-ai__test_openai_responses_model_http_error.yaml",
        "content-length",
        "interactions[0]",
    ),
    (
        "openai_responses/pydantic-ai__test_openai_responses_model_web_search_tool_stream.yaml",
        "content-length",
        "interactions[1]",
    ),
    ("other/crewai__test_csv_search_tool.yaml", "content-encoding", "interactions[0]"),
    ("other/crewai__test_csv_search_tool.yaml", "content-encoding", "interactions[2]"),
    (
        "other/pydantic-ai__test_openai_responses_raw_cot_stream_openrouter.yaml",
        "sse-event-name",
        "interactions[0]",
    ),
}


def _findings(out: str) -> list[dict[str, object]]:
    found: list[dict[str, object]] = json.loads(out)
    return found


def test_the_real_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    result = cli(capsys, "lint", "--format", "json", CORPUS)
    assert result.code == 1
    found = {
        (
            Path(str(f["path"])).relative_to(CORPUS).as_posix(),
            f["check"],
            str(f["field"]).split(".")[0],
        )
        for f in _findings(result.out)
    }
    assert found == CORPUS_FINDINGS
    text = cli(capsys, "lint", CORPUS).out
    assert text.splitlines()[-1] == "55 files checked: 17 problems in 13 files."


def test_the_real_corpus_findings_read_well(capsys: pytest.CaptureFixture[str]) -> None:
    out = cli(capsys, "lint", "--select", "sse-tail,content-encoding", CORPUS).out
    basic = CORPUS / "anthropic" / "anthropic-sdk__basic_response.sse.txt"
    assert (
        f"{basic}:25:1: sse-tail: interactions[0].response.tail: the stream ends with a "
        "'message_stop' event that no blank line closes: both SDKs drop it (append an empty "
        "line)"
    ) in out.splitlines()
    csv = CORPUS / "other" / "crewai__test_csv_search_tool.yaml"
    assert (
        f"{csv}:51:7: content-encoding: interactions[0].response.headers.content-encoding: "
        "content-encoding 'gzip' but the stored body is not encoded (httpx fails to decode "
        "it; drop the header)"
    ) in out.splitlines()


EXPECTED = {
    "empty": ("schema", "the file is empty"),
    "truncated": ("schema", "found unexpected end of stream"),
    "bad-utf8": ("schema", "invalid UTF-8 at byte offset"),
    "secret": ("secret", "anthropic-key (value not shown)"),
    "no-tail": ("sse-tail", "'message_stop' event that no blank line closes"),
    "no-event-names": ("sse-event-name", "6 of 6 events have no 'event:' name"),
    "stale-length": ("content-length", "content-length 99 but the body a replay sends is"),
    "stale-encoding": ("content-encoding", "content-encoding 'gzip' but the stored body"),
    "wrong-type": ("content-type", "content-type is 'text/plain'"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_broken_file_gets_its_finding(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = broken(tmp_path)[name]
    result = cli(capsys, "lint", "--format", "json", path)
    assert result.code == 1
    found = _findings(result.out)
    check, words = EXPECTED[name]
    assert [f["check"] for f in found] == [check]
    assert words in str(found[0]["message"])


def test_a_clean_cassette(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = cli(capsys, "lint", good(tmp_path))
    assert (result.code, result.out) == (0, "1 file checked: no problems found.\n")


def test_lines_columns_and_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = broken(tmp_path)
    out = cli(capsys, "lint", files["secret"], files["truncated"], files["stale-length"]).out
    lines = out.splitlines()
    assert lines[0] == (
        f"{files['secret']}:13:9: secret: interactions[0].request.json.messages[0].content: "
        "anthropic-key (value not shown): scrub it, or re-record"
    )
    assert re.match(
        rf"{re.escape(str(files['truncated']))}:24:\d+: schema: while scanning", lines[1]
    )
    assert lines[2].startswith(
        f"{files['stale-length']}:15:7: content-length: "
        "interactions[0].response.headers.content-length: content-length 99"
    )
    assert lines[3] == "3 files checked: 3 problems in 3 files."


def test_secrets_never_appear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = with_secret(tmp_path / "leaky.yaml")
    for form in ("text", "github", "json"):
        result = cli(capsys, "lint", "--format", form, path)
        assert result.code == 1
        assert FAKE_KEY not in result.out + result.err
        assert "anthropic-key" in result.out


def test_github_annotations_escape_their_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = broken(tmp_path / "a,b:c")["no-tail"]
    out = cli(capsys, "lint", "--format", "github", path).out
    escaped = str(path).replace(":", "%3A").replace(",", "%2C")
    assert out == (
        f"::error file={escaped},line=16,col=1,title=agentreplay sse-tail::"
        "interactions[0].response.tail: the stream ends with a 'message_stop' event that no "
        "blank line closes: both SDKs drop it (append an empty line)\n"
    )


def test_ignore_and_select(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "broken"
    broken(folder)
    every = {f["check"] for f in _findings(cli(capsys, "lint", "--format", "json", folder).out)}
    assert every == {v[0] for v in EXPECTED.values()}
    result = cli(capsys, "lint", "--format", "json", "--ignore", "schema,secret", folder)
    assert {f["check"] for f in _findings(result.out)} == every - {"schema", "secret"}
    result = cli(capsys, "lint", "--select", "sse-tail", "--select", "secret", folder)
    assert "3 files" not in result.out
    assert result.out.count(": sse-tail: ") == result.out.count(": secret: ") == 1
    result = cli(capsys, "lint", "--select", "nonsense", folder)
    assert result.code == 2
    assert "unknown check 'nonsense'" in result.err


def _edit(path: Path, old: str, new: str) -> Path:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def test_unscrubbed_fields_in_our_cassettes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _edit(
        good(tmp_path),
        "      content-type: application/json\n",
        "      content-type: application/json\n      x-api-key: test-key-from-docs\n",
    )
    path = _edit(
        path,
        "url: https://api.anthropic.com/v1/messages",
        "url: https://api.anthropic.com/v1/messages?key=abc",
    )
    result = cli(capsys, "lint", path)
    assert result.code == 1
    assert "test-key-from-docs" not in result.out
    lines = result.out.splitlines()
    assert lines[0].startswith(
        f"{path}:4:5: unscrubbed: interactions[0].request.url: the current "
        "scrubbing rules would redact this (query key)"
    )
    assert lines[1].startswith(f"{path}:7:7: unscrubbed: interactions[0].request.headers.x-api-key")
    assert cli(capsys, "redact", path).code == 0
    assert cli(capsys, "lint", path).code == 0


def _stream_cassette(tmp_path: Path, provider: str = "anthropic", **changes: object) -> Cassette:
    interaction = stream_interaction(provider)  # type: ignore[arg-type]
    return Cassette(
        interactions=[interaction.replace(response=interaction.response.replace(**changes))]
    )


def test_stream_checks_on_our_cassettes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = stream_interaction("openai_chat").response.events or []
    assert events[-1].data == "[DONE]"
    cases = {
        "no-done.yaml": _stream_cassette(tmp_path, "openai_chat", events=events[:-1]),
        "incomplete.yaml": _stream_cassette(tmp_path, end="incomplete"),
        "no-stop.yaml": _stream_cassette(
            tmp_path, events=(stream_interaction().response.events or [])[:-1]
        ),
        "bad-json.yaml": _stream_cassette(
            tmp_path, events=[RecordedEvent(event="message_start", data="{not json")]
        ),
        "text-plain.yaml": _stream_cassette(tmp_path, headers={"content-type": "text/plain"}),
    }
    for name, value in cases.items():
        cassette.save(tmp_path / name, value)
    found = {
        (Path(str(f["path"])).name, f["check"])
        for f in _findings(cli(capsys, "lint", "--format", "json", tmp_path).out)
    }
    assert found == {
        ("no-done.yaml", "sse-done"),
        ("incomplete.yaml", "incomplete"),
        ("no-stop.yaml", "fold"),
        ("bad-json.yaml", "fold"),
        ("text-plain.yaml", "content-type"),
    }


def test_a_cut_stream_is_not_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = (stream_interaction().response.events or [])[:4]
    cassette.save(tmp_path / "cut.yaml", _stream_cassette(tmp_path, events=events, end="cut"))
    assert cli(capsys, "lint", tmp_path / "cut.yaml").code == 0


def test_folders_are_walked_for_cassettes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good(tmp_path / "a")
    save(tmp_path / "a" / "b" / "deep.yml", stream_interaction("openai_chat", Reply.text("x")))
    (tmp_path / "a" / "notes.txt").write_text("not a cassette")
    (tmp_path / "a" / "config.yaml").write_text("addopts: -ra\n")
    (tmp_path / "a" / "package.json").write_text('{"name": "x"}')
    (tmp_path / "a" / "fixture.json").write_text('[{"id": 1}]')
    (tmp_path / "a" / "good.yaml.lock").write_text("")
    broken(tmp_path / ".hidden")
    result = cli(capsys, "lint", tmp_path)
    assert result.out == "2 files checked: no problems found.\n"
    # Named on the command line, any file is linted.
    result = cli(capsys, "lint", tmp_path / "a" / "config.yaml")
    assert "config.yaml:2:1: schema: no 'version' key" in result.out
    missing = tmp_path / "missing"
    result = cli(capsys, "lint", tmp_path, missing)
    assert (result.code, result.err) == (2, f"agentreplay: {missing}: no such file or directory\n")
