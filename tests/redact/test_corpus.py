"""Every real recording in ``tests/corpus/real`` scans clean, before and after scrubbing, and
scrubbing changes nothing in it but the headers it is documented to change.

The corpus is read by the independent test-side reader (``tests/corpus.py``) and
turned into Interactions by a small adapter (``tests.redact._helpers.to_interaction``).
The expected header changes below are written out from the brief, not imported
from the code under test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentreplay.cassettes.cassette import Interaction
from pytest_agentreplay.redact import Scrubber
from tests import corpus
from tests.redact._helpers import corpus_cassette, dump

FILES = corpus.files()

REDACTED = {
    "authorization",
    "x-api-key",
    "api-key",
    "cookie",
    "set-cookie",
    "openai-organization",
    "openai-project",
    "anthropic-organization-id",
    "x-goog-api-key",
}
DROPPED = {
    "content-length",
    "user-agent",
    "x-goog-api-client",
    "x-ms-client-request-id",
    "date",
    "cf-ray",
    "server-timing",
    "openai-processing-ms",
    "traceresponse",
    "apim-request-id",
    "mistral-correlation-id",
    "x-envoy-upstream-service-time",
    "anthropic-ratelimit-input-tokens-reset",
    "anthropic-ratelimit-output-tokens-reset",
    "anthropic-ratelimit-requests-reset",
    "anthropic-ratelimit-tokens-reset",
    "x-ratelimit-reset-requests",
    "x-ratelimit-reset-tokens",
}
NORMALIZED = {"request-id": "req_agentreplay", "x-request-id": "req_agentreplay"}


def _expected_headers(headers: dict[str, str]) -> dict[str, str]:
    out = {}
    for name, value in headers.items():
        if name in DROPPED or name.startswith("x-stainless-"):
            continue
        out[name] = "REDACTED" if name in REDACTED else NORMALIZED.get(name, value)
    return out


def _ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.name}" for p in paths]


def test_the_corpus_has_all_55_recordings() -> None:
    assert len(FILES) == 55


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_corpus_file_as_stored_scans_clean(path: Path) -> None:
    assert Scrubber(env={}).scan(path.read_bytes().decode("utf-8", "replace")) == []


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_corpus_file_scans_clean_after_scrubbing(path: Path) -> None:
    scrubber = Scrubber(env={})
    text = dump(scrubber.scrub(corpus_cassette(path)))
    assert scrubber.scan(text) == []
    scrubber.check(text, path)


def _same_except_headers(a: Interaction, b: Interaction) -> None:
    for side in ("request", "response"):
        before = {k: v for k, v in getattr(a, side).to_data().items() if k != "headers"}
        after = {k: v for k, v in getattr(b, side).to_data().items() if k != "headers"}
        assert after == before, f"{side} changed outside its headers"


@pytest.mark.parametrize("path", FILES, ids=_ids(FILES))
def test_scrubbing_a_corpus_file_changes_only_the_documented_headers(path: Path) -> None:
    original = corpus_cassette(path)
    scrubbed = Scrubber(env={}).scrub(original)
    assert len(scrubbed.interactions) == len(original.interactions)
    for a, b in zip(original.interactions, scrubbed.interactions, strict=True):
        _same_except_headers(a, b)
        assert b.request.headers == _expected_headers(a.request.headers)
        assert b.response.headers == _expected_headers(a.response.headers)


def test_untouched_corpus_events_are_the_same_objects() -> None:
    """No event in the corpus holds a secret, so none is re-serialised (exact bytes kept)."""
    path = (
        corpus.CORPUS
        / "openai_responses/pydantic-ai__test_openai_responses_thinking_part_iter.yaml"
    )
    original = corpus_cassette(path)
    scrubbed = Scrubber(env={}).scrub(original)
    before = original.interactions[0].response.events or []
    after = scrubbed.interactions[0].response.events or []
    assert len(after) == len(before) > 600
    assert all(x is y for x, y in zip(before, after, strict=True))


def test_corpus_identifiers_are_gone_after_scrubbing() -> None:
    path = corpus.CORPUS / "openai_chat/pydantic-ai__test_temporal__test_complex_agent_run.yaml"
    raw = path.read_text("utf-8")
    assert "pydantic-28gund" in raw  # the openai-organization slug is in the recording ...
    text = dump(Scrubber(env={}).scrub(corpus_cassette(path)))
    assert "pydantic-28gund" not in text  # ... and not in what we would write
    assert "openai-organization: REDACTED" in text


def test_scrubbing_the_whole_corpus_is_idempotent() -> None:
    scrubber = Scrubber(env={})
    for path in FILES:
        once = scrubber.scrub(corpus_cassette(path))
        assert scrubber.scrub(once) == once, path.name
