"""Issue 20, item 16: pytest-recording's ``vcr`` fixture works after the renames.

Tests that read ``vcr.requests[i].body``, ``vcr.play_count``, ``vcr.record_mode`` or
``len(vcr)`` errored with "fixture 'vcr' not found" once pytest-recording was gone.
"""

from __future__ import annotations

import pytest

from tests.migration.test_vcrpy_defaults import VCR_CASSETTE

pytest_plugins = ["pytester"]

TEST = """
import json, httpx, pytest

@pytest.mark.agentreplay
def test_items(vcr):
    with httpx.Client() as client:
        first = client.post("http://api.example.test/items?page=1", content=b"one")
    assert first.json() == {"id": "first"}
    assert vcr.play_count == 1
    assert not vcr.all_played
    assert vcr.record_mode == "none"
    assert vcr.write_protected
    assert len(vcr) == 2
    assert json.loads(vcr.requests[0].body) == {"n": 1, "at": "2024-01-01T00:00:00"}
    assert vcr.requests[1].method == "POST"
    assert vcr.requests[0].uri == "http://api.example.test/items?page=1"
    assert vcr.requests[0].host == "api.example.test"
    assert vcr.requests[0].path == "/items"
    assert vcr.requests[0].query == [("page", "1")]
    assert vcr.requests[0].headers["CONTENT-TYPE"] == "application/json"
    assert json.loads(vcr.responses[1]["body"]["string"]) == {"id": "second"}
    assert vcr.responses[1]["status"] == {"code": 200, "message": "OK"}
    with httpx.Client() as client:
        client.post("http://api.example.test/items?page=1", content=b"two")
    assert vcr.play_count == 2
    assert vcr.all_played
    assert vcr.agentreplay.path.name == "test_items.yaml"
"""


def test_the_vcr_fixture_reads_the_cassette_as_pytest_recording_did(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_user=TEST)
    path = pytester.path / "cassettes" / "test_user" / "test_items.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(VCR_CASSETTE + "version: 1\n")
    result = pytester.runpytest_subprocess("-p", "no:recording", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
