"""``agentreplay lint`` reports what the last test run left unplayed (from pytest's cache)."""

from __future__ import annotations

import json

import pytest

from tests.cli._helpers import cli, json_interaction, save

pytest_plugins = ["pytester"]

USER_TEST = """
import httpx2, pytest

@pytest.mark.agentreplay(cassette="shared.yaml")
def test_plays_one(agentreplay):
    body = {"model": "gpt-test", "stream": False,
            "messages": [{"role": "user", "content": "Weather?"}]}
    response = httpx2.post("https://api.openai.com/v1/chat/completions", json=body)
    assert response.status_code == 200
    assert agentreplay.unplayed == [1]
"""


def test_lint_reports_interactions_the_last_run_did_not_play(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = save(
        pytester.path / "cassettes" / "test_user" / "shared.yaml",
        json_interaction("openai_chat"),
        json_interaction("anthropic"),
    )
    before = cli(capsys, "lint", "--select", "unplayed", str(cassette))
    assert before.code == 0, "no run yet: nothing is known about unplayed interactions"

    pytester.makepyfile(test_user=USER_TEST)
    pytester.runpytest_inprocess().assert_outcomes(passed=1)
    cache = pytester.path / ".pytest_cache" / "v" / "agentreplay" / "unplayed"
    assert json.loads(cache.read_text()) == {str(cassette.resolve()): [1]}

    after = cli(capsys, "lint", "--select", "unplayed", str(cassette))
    assert after.code == 1
    assert "interactions[1]" in after.out
    assert "no test played this interaction in the last run" in after.out
    assert "interactions[0]" not in after.out
