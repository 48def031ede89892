"""Items 20 and 21: what replay tells the user.

20. A request no interaction matches fails at once with a diagnosis: the differences
    at JSON paths, an "already played" note when the match was consumed (the code
    asks one more time than when it was recorded), and the command that re-records.
21. Interactions a test leaves unplayed are listed in the summary; strict mode
    (``--agentreplay-strict``) fails the test for them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.cassettes._plugin_runs import PRELUDE, cassette, run
from tests.servers import ProviderServer, provider_server

pytest_plugins = ["pytester"]

USER_TEST = (
    PRELUDE
    + """
@pytest.mark.agentreplay
def test_chat(agentreplay):
    for prompt in os.environ["AR_PROMPTS"].split(","):
        ask_raw(prompt)
"""
)
RERECORD = "*to re-record: pytest 'test_user.py::test_chat' --agentreplay-record-mode=new_episodes*"


@pytest.fixture
def recorded(pytester: pytest.Pytester) -> Iterator[ProviderServer]:
    """``test_chat`` recorded asking "Leeds" then "York"."""
    pytester.makepyfile(test_user=USER_TEST)
    with provider_server() as server:
        server.echo = True
        run(
            pytester,
            "--agentreplay-record-mode=once",
            AR_SERVER=server.url,
            AR_PROMPTS="Leeds,York",
        ).assert_outcomes(passed=1)
        yield server


def test_a_miss_shows_json_path_diffs_a_consumed_note_and_the_rerecord_command(
    pytester: pytest.Pytester, recorded: ProviderServer
) -> None:
    changed = run(pytester, AR_PROMPTS="Leeds,Yorkshire")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(
        [
            "*CassetteMiss: no recorded interaction matches POST *",
            "*interactions[[]1[]]: POST */v1/messages (not played yet)*",
            "*messages[[]0[]].content: recorded 'York', now 'Yorkshire'*",
            RERECORD,
        ]
    )
    again = run(pytester, AR_PROMPTS="Leeds,Leeds")
    again.assert_outcomes(failed=1)
    again.stdout.fnmatch_lines(
        [
            "*interactions[[]0[]]: POST */v1/messages (already played in this test)*",
            "*one more time than when the cassette was recorded*",
            RERECORD,
        ]
    )
    assert len(recorded.requests) == 2, "a miss went live"


def test_unplayed_interactions_are_reported_and_strict_mode_fails_for_them(
    pytester: pytest.Pytester, recorded: ProviderServer
) -> None:
    path = cassette(pytester, "test_chat")
    lenient = run(pytester, AR_PROMPTS="Leeds")
    lenient.assert_outcomes(passed=1)
    lenient.stdout.fnmatch_lines(
        ["unplayed interactions: 1", f"  {path}: #1 (test_user.py::test_chat)"]
    )
    strict = run(pytester, "--agentreplay-strict", AR_PROMPTS="Leeds")
    strict.assert_outcomes(failed=1)
    strict.stdout.fnmatch_lines(
        [f"*strict mode: 1 recorded interaction(s) of {path} were not played: #1*"]
    )
    run(pytester, "--agentreplay-strict", AR_PROMPTS="Leeds,York").assert_outcomes(passed=1)
    assert len(recorded.requests) == 2
