"""Item 11: in replay mode a missing cassette is an error naming the path it expected —
also for parametrize ids holding ``:``, ``/`` and ``[`` — and that named path is
exactly where recording then writes it (so the message can be trusted), one distinct
filesystem-safe file per id.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cassettes._plugin_runs import PRELUDE, run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

IDS = ["a:b", "c/d", "e[f]", "g::h[/]"]
USER_TEST = (
    PRELUDE
    + f"""
@pytest.mark.agentreplay
@pytest.mark.parametrize("name", {IDS!r}, ids={IDS!r})
def test_odd(agentreplay, name):
    ask_raw(name)
"""
)


def test_a_missing_cassette_names_the_path_recording_then_writes(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    replay = run(pytester, AR_SERVER=echo_server.url)
    replay.assert_outcomes(failed=len(IDS))
    assert echo_server.requests == [], "replay went live"
    paths = sorted(set(re.findall(r"no cassette at (\S+?\.yaml)", replay.stdout.str())))
    assert len(paths) == len(IDS), f"expected one distinct path per id: {paths}"
    for path in map(Path, paths):
        assert path.parent == pytester.path / "cassettes" / "test_user"
        assert not set(path.name) & set(':/\\*?"<>|'), f"not filesystem-safe: {path.name}"
        assert not path.exists()

    run(pytester, "--agentreplay-record-mode=once", AR_SERVER=echo_server.url).assert_outcomes(
        passed=len(IDS)
    )
    written = sorted(str(p) for p in (pytester.path / "cassettes" / "test_user").iterdir())
    assert written == paths, "recording wrote elsewhere than the error said"
    run(pytester).assert_outcomes(passed=len(IDS))
