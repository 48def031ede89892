"""The plugin's run state: one object for the session, one for each test that uses us."""

from __future__ import annotations

import pytest

# Imported into a test module on purpose: a class named Test* that is not a test class
# must say so, or collecting this module warns (an error under filterwarnings=error).
from pytest_agentreplay.harness.settings import AgentReplaySettings, TestSettings

pytest_plugins = ["pytester"]


def test_the_two_settings_types_and_their_defaults() -> None:
    assert TestSettings.__test__ is False
    assert TestSettings().record_mode == "none"
    session = AgentReplaySettings()
    assert session.match_on is None
    assert session.chunking == "event"


def test_one_run_state_and_one_state_per_test_that_uses_us(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_user="""
import pytest
from pytest_agentreplay.harness.state import RUN_STATE, TEST_STATE, RunState

def test_plain(request):
    assert isinstance(request.config.stash[RUN_STATE], RunState)
    assert TEST_STATE not in request.node.stash  # a test that does not use us costs nothing

@pytest.mark.agentreplay
def test_marked(request):
    state = request.node.stash[TEST_STATE]
    assert state.marked and state.settings.record_mode == "none"
    assert state.router is not None and state.handle is not None
    assert len(state.sessions) == 1

def test_fake(scripted_model, request):
    state = request.node.stash[TEST_STATE]
    assert state.fakes == [scripted_model] and not state.sessions and not state.marked
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
