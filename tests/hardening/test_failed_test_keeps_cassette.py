"""Item 14: a test that fails after recording does not overwrite its existing cassette
— in any mode that would write it (``new_episodes``, ``all``, ``rewrite``) — and the
summary says why. ``--agentreplay-save-on-failure`` writes anyway, and every write
keeps the file's permission bits.
"""

from __future__ import annotations

import stat

import pytest

from tests.cassettes._plugin_runs import PRELUDE, cassette, prompts, run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

USER_TEST = (
    PRELUDE
    + """
@pytest.mark.agentreplay
def test_chat(agentreplay):
    for prompt in os.environ["AR_PROMPTS"].split(","):
        ask_raw(prompt)
    assert not os.environ.get("AR_FAIL"), "the test failed after recording"
"""
)


@pytest.mark.parametrize("mode", ["new_episodes", "all", "rewrite"])
def test_a_failed_test_keeps_the_cassette_and_its_mode_bits(
    pytester: pytest.Pytester, echo_server: ProviderServer, mode: str
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    path = cassette(pytester, "test_chat")
    run(pytester, "--agentreplay-record-mode=once", AR_SERVER=echo_server.url, AR_PROMPTS="A")
    path.chmod(0o604)
    before = path.read_bytes()
    option = f"--agentreplay-record-mode={mode}"

    failed = run(pytester, option, AR_SERVER=echo_server.url, AR_PROMPTS="B", AR_FAIL="1")
    failed.assert_outcomes(failed=1)
    assert path.read_bytes() == before
    failed.stdout.fnmatch_lines([f"  not written: {path} (the test failed*"])

    forced = "--agentreplay-save-on-failure"
    run(pytester, option, forced, AR_SERVER=echo_server.url, AR_PROMPTS="B", AR_FAIL="1")
    assert prompts(path) == (["A", "B"] if mode != "rewrite" else ["B"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o604
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
