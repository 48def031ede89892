"""The hint of an egress refusal says what can serve the call in this test.

A fake-model test has no cassette: "record it with --agentreplay-record-mode=..."
there looped back to the same refusal (issue 19). Such a test is told about
``serve()``, ``allow_hosts`` and ``model_server``; a test with a cassette is still
told how to record.
"""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

SUITE = """
import httpx2, pytest
from pytest_agentreplay import EgressBlocked

def test_fake_only(scripted_model):
    with pytest.raises(EgressBlocked) as info:
        httpx2.post("https://llm.example.com/v1/chat/completions", json={})
    print("HINT:", str(info.value).replace(chr(10), " "))

@pytest.mark.agentreplay
def test_with_cassette(scripted_model):
    with pytest.raises(EgressBlocked) as info:
        httpx2.get("https://telemetry.example.com/ping")
    print("HINT:", str(info.value).replace(chr(10), " "))
"""


def _hints(pytester: pytest.Pytester) -> dict[str, str]:
    pytester.makepyfile(test_hint=SUITE)
    result = pytester.runpytest("-s", "-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    lines = [line for line in result.outlines if "HINT:" in line]
    assert len(lines) == 2, result.outlines
    return {"fake": lines[0], "cassette": lines[1]}


def test_a_fake_model_test_is_told_to_serve_or_allow_not_to_record(
    pytester: pytest.Pytester,
) -> None:
    hint = _hints(pytester)["fake"]
    assert "scripted_model.serve(base_url=...)" in hint
    assert "allow_hosts=[...]" in hint
    assert "model_server" in hint
    assert "new_episodes" not in hint
    assert "no cassette" in hint


def test_a_test_with_a_cassette_is_told_how_to_record(pytester: pytest.Pytester) -> None:
    hint = _hints(pytester)["cassette"]
    assert "test_hint.py::test_with_cassette' --agentreplay-record-mode=new_episodes" in hint
