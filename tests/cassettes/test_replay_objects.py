"""What user code sees during replay: the cassette model, the very objects replay uses.

Replay reads a file the plugin wrote through the one reader's fast path; the
``agentreplay.interactions`` a test reads, the requests a custom matcher is given
and the interactions a custom scrubber is given are :mod:`~pytest_agentreplay.cassettes.cassette`
objects all the same.
"""

from __future__ import annotations

import pytest

from pytest_agentreplay.cassettes import io as cassette
from pytest_agentreplay.cassettes.cassette import Cassette
from tests.cli._helpers import json_interaction, stream_interaction

pytest_plugins = ["pytester"]

CHECKS = """
import httpx, pytest
from pytest_agentreplay.cassettes.cassette import Interaction, RecordedRequest

ANTHROPIC = "https://api.anthropic.com/v1/messages"
CHAT = "https://api.openai.com/v1/chat/completions"
SEEN = []

def kinds(request):
    SEEN.append(type(request).__name__)
    return request.method

def ask():
    with httpx.Client() as client:
        body = {"model": "gpt-test", "stream": False,
                "messages": [{"role": "user", "content": "Weather?"}]}
        return client.post(CHAT, json=body).json()
"""


def _cassette(pytester: pytest.Pytester, name: str) -> None:
    cassette.save(
        pytester.path / "cassettes" / "test_user" / f"{name}.yaml",
        Cassette(interactions=[stream_interaction(), json_interaction()]),
    )


def test_a_test_reads_the_interactions_replay_plays(pytester: pytest.Pytester) -> None:
    _cassette(pytester, "test_interactions")
    pytester.makepyfile(
        test_user=CHECKS
        + """
@pytest.mark.agentreplay
def test_interactions(agentreplay):
    assert ask()["choices"][0]["finish_reason"] == "tool_calls"
    interactions = agentreplay.interactions
    assert [type(i) for i in interactions] == [Interaction, Interaction]
    assert interactions[1] is agentreplay._session.interactions[1]
    assert interactions[0].response.events[2].event == "ping"
    assert interactions[1].request.json_body["model"] == "gpt-test"
    assert agentreplay.unplayed == [0]
"""
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_custom_matcher_is_given_the_model(pytester: pytest.Pytester) -> None:
    _cassette(pytester, "test_custom_matcher")
    pytester.makepyfile(
        test_user=CHECKS
        + """
@pytest.mark.agentreplay(match_on=["path", kinds])
def test_custom_matcher(agentreplay):
    assert ask()["id"].startswith("chatcmpl-")
    assert set(SEEN) == {"RecordedRequest"} and len(SEEN) == 3  # two recorded, one live
"""
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_a_custom_scrubber_is_given_the_model(pytester: pytest.Pytester) -> None:
    _cassette(pytester, "test_custom_scrubber")
    pytester.makeconftest(
        """
from pytest_agentreplay.cassettes.cassette import Interaction

SCRUBBED = []

def mark(interaction):
    SCRUBBED.append(type(interaction) is Interaction)
    return interaction

def pytest_agentreplay_configure(config, settings):
    settings.scrubbers.append(mark)
"""
    )
    pytester.makepyfile(
        test_user=CHECKS
        + """
from conftest import SCRUBBED

@pytest.mark.agentreplay
def test_custom_scrubber(agentreplay):
    assert ask()["model"] == "gpt-test"
    assert SCRUBBED == [True]  # the live request, scrubbed as the recordings were
"""
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
