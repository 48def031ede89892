"""Strict mode and the terminal summary."""

from __future__ import annotations

import re

import pytest

from tests.cassettes._plugin_runs import PRELUDE, cassette, results, run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

TESTS = (
    PRELUDE
    + """
PROMPTS = os.environ["AR_PROMPTS"].split(",")

@pytest.mark.agentreplay
def test_default(agentreplay):
    report(agentreplay, answers=[ask_raw(p) for p in PROMPTS])

@pytest.mark.agentreplay(strict=True)
def test_marker_strict(agentreplay):
    report(agentreplay, answers=[ask_raw(p) for p in PROMPTS])
"""
)


def _record(pytester: pytest.Pytester, echo_server: ProviderServer, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_user=TESTS)
    result = run(
        pytester,
        "--agentreplay-record-mode=once",
        *args,
        AR_SERVER=echo_server.url,
        AR_PROMPTS="A,B",
    )
    result.assert_outcomes(passed=2)
    results(pytester)
    return result


def test_strict_fails_tests_that_leave_interactions_unplayed(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    _record(pytester, echo_server)
    everything = run(pytester, AR_PROMPTS="A,B")
    everything.assert_outcomes(passed=2)
    partial = run(pytester, AR_PROMPTS="A")
    partial.assert_outcomes(passed=1, failed=1)
    path = cassette(pytester, "test_marker_strict")
    partial.stdout.fnmatch_lines(
        [
            "*FAILED test_user.py::test_marker_strict*",
        ]
    )
    assert (
        f"strict mode: 1 recorded interaction(s) of {path} were not played: #1"
        in partial.stdout.str()
    )
    strict = run(pytester, "--agentreplay-strict", AR_PROMPTS="A")
    strict.assert_outcomes(failed=2)
    assert [r["unplayed"] for r in results(pytester)] == [[], [], [1], [1], [1], [1]]


def summary(output: str) -> dict[str, str]:
    """The agentreplay section of the terminal summary, as ``{label: count}``."""
    section = output.split("- agentreplay -", 1)[1].replace(", ", "\n")
    labels = (
        "cassettes used|interactions replayed|cassettes written|interactions recorded|"
        "unplayed interactions|live calls"
    )
    return {m[1]: m[2] for m in re.finditer(rf"^({labels}): (\d+)", section, re.MULTILINE)}


def test_summary_lists_cassettes_unplayed_and_live_calls(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    """(The same summary under xdist, merged from the workers, is checked in
    test_concurrent_recording.py.)"""
    pytester.makepyfile(test_user=TESTS)
    recorded = run(
        pytester, "--agentreplay-record-mode=once", AR_SERVER=echo_server.url, AR_PROMPTS="A,B"
    )
    recorded.assert_outcomes(passed=2)
    assert summary(recorded.stdout.str()) == {
        "cassettes used": "2",
        "interactions replayed": "0",
        "cassettes written": "2",
        "interactions recorded": "4",
        "live calls": "4",
    }
    for name in ("test_default", "test_marker_strict"):
        recorded.stdout.fnmatch_lines([f"  written: {cassette(pytester, name)}"])

    replayed = run(pytester, AR_PROMPTS="A")
    replayed.assert_outcomes(passed=1, failed=1)
    assert summary(replayed.stdout.str()) == {
        "cassettes used": "2",
        "interactions replayed": "2",
        "cassettes written": "0",
        "interactions recorded": "0",
        "unplayed interactions": "2",
        "live calls": "0",
    }
    for name in ("test_default", "test_marker_strict"):
        replayed.stdout.fnmatch_lines([f"  {cassette(pytester, name)}: #1 (test_user.py::{name})"])
    assert len(echo_server.requests) == 4
