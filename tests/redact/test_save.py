"""The scrubber on the real write path: ``cassette.save(..., scrubber=...)`` and ``dumps``.

These prove the guarantees end to end: what reaches the disk is scrubbed, a
surviving secret aborts the write and leaves the old file byte-identical, and
the canonical YAML of every corpus recording scans clean after scrubbing.
"""

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes import io as cassette
from pytest_agentreplay.cassettes.cassette import Cassette
from pytest_agentreplay.redact import Finding, Scrubber, SecretLeakError
from tests import corpus
from tests.redact._helpers import interaction, request, response

FILES = corpus.files()


def _canary() -> str:
    rng = random.Random()
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(40))


def _cassette(
    url: str = "https://api.example/v1/messages",
    headers: dict[str, str] | None = None,
    json_body: object = None,
) -> Cassette:
    req = request(url, headers=headers, json_body=json_body)
    return Cassette(version=1, interactions=[interaction(req, response(json_body={"ok": True}))])


def test_saved_file_holds_no_header_query_or_body_secret(tmp_path: Path) -> None:
    canary = _canary()
    target = tmp_path / "c.yaml"
    original = _cassette(
        url=f"https://api.example/v1/messages?key={canary}",
        headers={"X-Api-Key": canary, "Authorization": f"Bearer {canary}", "User-Agent": "ua/1"},
        json_body={"messages": [], "api_key": canary},
    )
    cassette.save(target, original, scrubber=Scrubber(env={}))
    text = target.read_text("utf-8")
    assert canary not in text
    assert "user-agent" not in text
    loaded = cassette.load(target)
    assert loaded.interactions[0].request.headers["authorization"] == "Bearer REDACTED"


def test_surviving_secret_aborts_the_write_and_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = _canary()
    monkeypatch.setenv("ACME_API_KEY", canary)
    target = tmp_path / "c.yaml"
    cassette.save(target, _cassette(), scrubber=Scrubber())
    old = target.read_bytes()
    leaking = _cassette(headers={"x-upstream-hint": canary})
    with pytest.raises(SecretLeakError) as info:
        cassette.save(target, leaking, scrubber=Scrubber())
    assert target.read_bytes() == old
    assert info.value.path == target
    assert info.value.findings == [
        Finding("interactions[0].request.headers.x-upstream-hint", "env:ACME_API_KEY")
    ]
    assert canary not in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == ["c.yaml"]


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_corpus_file_loaded_by_the_cassette_module_dumps_clean_after_scrubbing(
    path: Path,
) -> None:
    scrubber = Scrubber(env={})
    scrubbed = scrubber.scrub(cassette.load(path))
    text = cassette.dumps(scrubbed)
    assert scrubber.scan(text) == []
    assert cassette.dumps(scrubber.scrub(scrubbed)) == text  # idempotent on the real format
