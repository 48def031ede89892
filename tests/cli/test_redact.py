"""``agentreplay redact``: re-scrub in place, atomically, reporting paths and never values."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from pytest_agentreplay.cassettes import io as cassette
from tests.cli._helpers import (
    CORPUS,
    FAKE_KEY,
    broken,
    cli,
    good,
    vcr_text,
    with_secret,
)

SECRET_VALUE = "test-key-from-docs"


def _unscrubbed(tmp_path: Path) -> Path:
    """Our cassette hand-edited the way people do: a credential, a signed URL, a date."""
    path = good(tmp_path)
    text = path.read_text(encoding="utf-8")
    text = text.replace(
        "      content-type: application/json\n",
        f"      content-type: application/json\n      x-api-key: {SECRET_VALUE}\n"
        "      date: Tue, 01 Sep 2026 10:00:00 GMT\n",
        1,
    )
    text = text.replace(
        "url: https://api.anthropic.com/v1/messages",
        "url: https://api.anthropic.com/v1/messages?beta=true&key=abc",
        1,
    )
    text = text.replace(
        "      tools:\n", f"      metadata:\n        api_key: {SECRET_VALUE}\n      tools:\n", 1
    )
    text = text.replace(
        "    headers:\n      content-type: text/event-stream",
        "    headers:\n      request-id: req_123\n      content-type: text/event-stream",
        1,
    )
    path.write_text(text, encoding="utf-8")
    cassette.load(path)  # still a valid cassette
    return path


def test_rewrites_and_reports_field_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _unscrubbed(tmp_path)
    result = cli(capsys, "redact", path)
    assert result.code == 0, result.err
    assert SECRET_VALUE not in result.out + result.err
    assert result.out.splitlines() == [
        f"{path}: rewritten: 3 redacted, 1 dropped, 1 normalized",
        "  redacted   interactions[0].request.url (query key)",
        "  redacted   interactions[0].request.headers.x-api-key",
        "  dropped    interactions[0].request.headers.date",
        "  redacted   interactions[0].request.json.metadata.api_key",
        "  normalized interactions[0].response.headers.request-id",
        "1 file(s): 1 rewritten",
    ]
    text = path.read_text(encoding="utf-8")
    assert SECRET_VALUE not in text
    assert "key=REDACTED" in text
    assert "beta=true" in text
    assert cli(capsys, "lint", path).code == 0


def test_a_clean_file_is_not_touched(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = good(tmp_path)
    os.utime(path, (1_000_000_000, 1_000_000_000))
    before = path.read_bytes()
    result = cli(capsys, "redact", path)
    assert (result.code, result.out) == (0, f"{path}: clean\n1 file(s): 1 clean\n")
    assert path.read_bytes() == before
    assert path.stat().st_mtime == 1_000_000_000


def test_check_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _unscrubbed(tmp_path)
    before = path.read_bytes()
    result = cli(capsys, "redact", "--check", path)
    assert result.code == 1
    assert result.out.startswith(f"{path}: would rewrite: 3 redacted, 1 dropped, 1 normalized\n")
    assert path.read_bytes() == before
    assert cli(capsys, "redact", path).code == 0
    assert cli(capsys, "redact", "--check", path).code == 0


def test_a_secret_no_rule_removes_stops_the_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = with_secret(tmp_path / "leaky.yaml")
    before = path.read_bytes()
    result = cli(capsys, "redact", path)
    assert result.code == 1
    assert FAKE_KEY not in result.out + result.err
    assert result.err == (
        f"agentreplay: {path}: 1 secret(s) survived scrubbing: "
        "interactions[0].request.json.messages[0].content (anthropic-key); nothing was "
        "written. Remove them, add a rule (--extra-header / --extra-query-param / "
        "--extra-body-key), or --allow a known-fake value\n"
    )
    assert path.read_bytes() == before
    assert not list(tmp_path.glob(".*tmp"))
    assert cli(capsys, "redact", "--allow", FAKE_KEY, path).code == 0


def test_extra_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = good(tmp_path)
    result = cli(
        capsys, "redact", "--extra-body-key", "model", "--extra-header", "content-type", path
    )
    assert result.code == 0
    assert "  redacted   interactions[0].request.json.model" in result.out
    assert "  redacted   interactions[0].request.headers.content-type" in result.out
    assert "model: REDACTED" in path.read_text(encoding="utf-8")


def test_other_formats_are_refused_by_name_and_skipped_in_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vcr = tmp_path / "vcr.yaml"
    vcr.write_text(vcr_text("data: {}\n\n"), encoding="utf-8")
    before = vcr.read_bytes()
    result = cli(capsys, "redact", vcr)
    assert result.code == 2
    assert result.err.startswith(
        f"agentreplay: {vcr}: is a vcrpy cassette; redact rewrites agentreplay cassettes "
        f"only. Scrub it and keep its format with 'agentreplay convert {vcr} --to vcrpy -o {vcr}'"
    )
    assert result.err.count("\n") == 1
    good(tmp_path)
    shutil.copy(CORPUS / "anthropic" / "anthropic-sdk__basic_response.sse.txt", tmp_path)
    result = cli(capsys, "redact", tmp_path)
    assert result.code == 0
    assert f"{vcr}: skipped (vcrpy format; see 'agentreplay convert')" in result.err
    assert "raw-sse format" in result.err
    assert result.out.endswith("3 file(s): 1 clean, 2 skipped\n")
    assert vcr.read_bytes() == before


def test_a_vcrpy_json_cassette_is_refused_like_a_yaml_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """vcrpy's ``serializer="json"`` files: rewriting one as our YAML would leave a
    file pytest-recording can no longer read. A JSON-encoded request body holding
    a ``"url"`` key must not make it look like ours."""
    vcr = tmp_path / "vcr.json"
    data = yaml.safe_load(vcr_text("data: {}\n\n"))
    request = data["interactions"][0]["request"]
    request["body"] = json.dumps({"url": "https://elsewhere.example", "model": "m"})
    request["headers"]["X-Api-Key"] = ["sk-ant-api03-" + "k" * 40]
    vcr.write_text(json.dumps(data), encoding="utf-8")
    before = vcr.read_bytes()
    assert cassette.detect_format(before) == "vcrpy"
    result = cli(capsys, "redact", vcr)
    assert result.code == 2
    assert f"{vcr}: is a vcrpy cassette" in result.err
    assert vcr.read_bytes() == before
    assert "vcrpy" in cli(capsys, "inspect", vcr).out


def test_broken_files_are_errors_but_the_others_are_done(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = broken(tmp_path / "b")
    path = _unscrubbed(tmp_path)
    result = cli(capsys, "redact", files["empty"], path)
    assert result.code == 2
    assert result.err.startswith(f"agentreplay: {files['empty']}: the file is empty.")
    assert SECRET_VALUE not in path.read_text(encoding="utf-8")


def test_yaml_comments_lost_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _unscrubbed(tmp_path)
    text = path.read_text(encoding="utf-8")
    path.write_text("# recorded by hand\n" + text.replace("version: 1", "version: 1  # v1"))
    result = cli(capsys, "redact", path)
    assert result.code == 0
    assert result.err == f"warning: {path}: 2 YAML comment line(s) were not kept\n"
