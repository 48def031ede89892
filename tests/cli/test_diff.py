"""``agentreplay diff``: two cassettes compared as conversations."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentreplay.neutral import Reply
from tests.cli._helpers import (
    CORPUS,
    FAKE_KEY,
    cli,
    good,
    json_interaction,
    save,
    stream_interaction,
    with_secret,
)


def test_identical_and_equivalent_cassettes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = good(tmp_path)
    result = cli(capsys, "diff", path, path)
    assert (result.code, result.out) == (0, "no differences (3 interactions compared)\n")
    vcr = tmp_path / "vcr.yaml"
    assert cli(capsys, "convert", path, "--to", "vcrpy", "-o", vcr).code == 0
    assert cli(capsys, "diff", path, vcr).code == 0  # timings are ignored by default
    result = cli(capsys, "diff", "--all", path, vcr)
    assert result.code == 1
    assert "timing: first 0.200 s, last 0.700 s → no times" in result.out


def test_a_re_recording(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = save(
        tmp_path / "old.yaml",
        stream_interaction("anthropic", Reply.text("It is sunny in Leeds.")),
        json_interaction("openai_chat"),
    )
    new = save(
        tmp_path / "new.yaml",
        stream_interaction(
            "anthropic",
            Reply.text("It is sunny and warm in Leeds today."),
            user="Weather in Leeds?",
        ),
        json_interaction("openai_chat"),
        json_interaction("anthropic", Reply.text("Done.")),
    )
    result = cli(capsys, "diff", old, new)
    assert result.code == 1
    assert result.out.splitlines() == [
        f"--- {old} (2 interactions)",
        f"+++ {new} (3 interactions)",
        "",
        "#0 POST https://api.anthropic.com/v1/messages",
        "  request:",
        "    body.messages[0].content: 'What is the weather in Leeds?' != 'Weather in Leeds?'",
        "  events:",
        "    11 → 14 events",
        "    - content_block_delta \u00d75",
        "    + content_block_delta \u00d78",
        "  final message:",
        "    content[0].text: 'It is sunny in Leeds.' != 'It is sunny and warm in Leeds today.'",
        "    usage.output_tokens: 6 != 9",
        "",
        "#2 only in B: POST https://api.anthropic.com/v1/messages",
        "",
        "2 interaction(s) differ.",
    ]


def test_volatile_fields_are_ignored_unless_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = save(tmp_path / "a.yaml", json_interaction("openai_chat"))
    text = a.read_text(encoding="utf-8")
    b = tmp_path / "b.yaml"
    b.write_text(text.replace("created: 1767225600", "created: 1767225999"), encoding="utf-8")
    assert b.read_text(encoding="utf-8") != text
    assert cli(capsys, "diff", a, b).code == 0
    result = cli(capsys, "diff", "--all", a, b)
    assert result.code == 1
    assert "    created: 1767225600 != 1767225999" in result.out


def test_corpus_recordings_of_the_same_test(capsys: pytest.CaptureFixture[str]) -> None:
    folder = CORPUS / "anthropic"
    a = folder / "anthropic-sdk__TestSyncRunTools.test_streaming_call_sync__771c64ff.json"
    b = folder / "anthropic-sdk__TestSyncRunTools.test_streaming_call_sync_events__555fb399.json"
    result = cli(capsys, "diff", "--limit", "1", a, b)
    assert result.code == 1
    assert "    13 → 15 events" in result.out
    assert "    … and 1 more difference" in result.out


def test_secrets_are_masked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    leaky = with_secret(tmp_path / "leaky.yaml")
    result = cli(capsys, "diff", good(tmp_path), leaky)
    assert result.code == 1
    assert FAKE_KEY not in result.out
    assert "REDACTED" in result.out


def test_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "missing.yaml"
    result = cli(capsys, "diff", good(tmp_path), missing)
    assert (result.code, result.err) == (2, f"agentreplay: {missing}: no such file or directory\n")


def test_a_port_change_is_no_difference_as_matching_ignores_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An identical re-recording against a local server on a fresh port: matching
    ignores the port, so diff does too (issue 20: it reported the port and exited 1)."""
    text = save(tmp_path / "base.yaml", json_interaction("openai_chat")).read_text("utf-8")
    assert "https://api.openai.com/" in text
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(text.replace("https://api.openai.com/", "http://127.0.0.1:41001/"), "utf-8")
    b.write_text(text.replace("https://api.openai.com/", "http://127.0.0.1:41002/"), "utf-8")
    result = cli(capsys, "diff", a, b)
    assert (result.code, result.out) == (0, "no differences (1 interactions compared)\n")
    result = cli(capsys, "diff", "--all", a, b)
    assert result.code == 1
    assert "41001" in result.out and "41002" in result.out
    c = tmp_path / "c.yaml"  # another host is still a difference
    c.write_text(text.replace("https://api.openai.com/", "http://127.0.0.2:41001/"), "utf-8")
    result = cli(capsys, "diff", a, c)
    assert result.code == 1
    assert (
        "    url: 'http://127.0.0.1/v1/chat/completions' != 'http://127.0.0.2/v1/chat/completions'"
        in (result.out.splitlines())
    )
