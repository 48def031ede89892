"""Issue 18, item 13: pytest-xdist the way users run it.

The plugin is loaded from its installed ``pytest11`` entry point (no ``-p``), next to
every other installed plugin, and the run is ``-n 2``. Three things depend on the
plugin's hooks on the xdist controller, and each is checked here:

* the session summary, with its "live calls" line;
* the interactions no test played, left in pytest's cache for ``agentreplay lint``;
* a cassette shared by several tests, written in test order whatever order the
  workers finish in (the file a serial run writes).

The controller's hooks used to be registered at configure time only if xdist's
``dsession`` was already there: with both plugins loaded from entry points, xdist
registers it later, so none of the three happened.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cassettes._plugin_runs import PRELUDE, environ, prompts, run
from tests.cassettes.test_strict_and_summary import summary
from tests.cli._helpers import cli
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

# Tests 0-1 and 2-3 run on different workers (``--dist loadgroup``, the groups are
# given in the conftest); under xdist,
# test 0 waits until the other worker has written the shared cassette, so the
# workers write in an order unlike the collection order every time.
SHARED = (
    PRELUDE
    + """
import pathlib, threading

ASKS = 1 if os.environ.get("AR_REPLAY_ONE") else 2
SHARED = pathlib.Path(__file__).parent / "cassettes" / "test_user" / "shared.yaml"


def _wait_for_the_other_worker():
    for _ in range(6000):  # a hang guard, not a time bound: the other worker is quick
        if SHARED.exists() and "q3.0" in SHARED.read_text():
            return
        threading.Event().wait(0.02)
    raise AssertionError("the other worker never wrote the shared cassette")


@pytest.mark.parametrize("n", range(4))
@pytest.mark.agentreplay(cassette="shared.yaml")
def test_shared(agentreplay, n):
    if n == 0 and os.environ.get("PYTEST_XDIST_WORKER") and not os.environ.get("AR_REPLAY_ONE"):
        _wait_for_the_other_worker()
    report(agentreplay, answers=[ask_raw(f"q{n}.{i}") for i in range(ASKS)])
"""
)
EXPECTED = [f"q{n}.{i}" for n in range(4) for i in range(2)]
XDIST_ENV = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A user project; its runs see the environment a user's would (this suite may run
    under xdist, or with plugin autoloading switched off)."""
    for name in (*XDIST_ENV, "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_PLUGINS", "PYTEST_ADDOPTS"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(
        "import pytest\n\n"
        "def pytest_collection_modifyitems(items):\n"
        "    for item in items:\n"
        "        n = int(item.callspec.params['n'])\n"
        "        item.add_marker(pytest.mark.xdist_group('first' if n < 2 else 'second'))\n"
    )
    pytester.makepyfile(test_user=SHARED)
    return pytester


def _installed_run(pytester: pytest.Pytester, *args: str, **env: str) -> pytest.RunResult:
    """pytest as installed: every plugin from its entry point, none named with ``-p``."""
    env.setdefault("AR_OUT", str(pytester.path / "out.jsonl"))
    with environ(**env):
        return pytester.runpytest_subprocess(*args, timeout=300)


def _shared(pytester: pytest.Pytester) -> Path:
    return pytester.path / "cassettes" / "test_user" / "shared.yaml"


def test_a_shared_cassette_recorded_on_two_workers_is_the_serial_runs_file(
    project: pytest.Pytester, echo_server: ProviderServer
) -> None:
    record = ("--agentreplay-record-mode=new_episodes", "-p", "no:randomly")
    run(project, *record, AR_SERVER=echo_server.url).assert_outcomes(passed=4)  # serial
    serial = _shared(project).read_bytes()
    assert prompts(_shared(project)) == EXPECTED
    _shared(project).unlink()

    result = _installed_run(
        project, *record, "-n", "2", "--dist", "loadgroup", AR_SERVER=echo_server.url
    )
    result.assert_outcomes(passed=4)
    assert prompts(_shared(project)) == EXPECTED, "the workers' blocks put in test order"
    assert _shared(project).read_bytes() == serial
    assert summary(result.stdout.str()) == {
        "cassettes used": "1",
        "interactions replayed": "0",
        "cassettes written": "1",
        "interactions recorded": "8",
        "live calls": "8",
    }


def test_the_summary_and_the_unplayed_cache_cover_both_workers(
    project: pytest.Pytester, echo_server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded = run(project, "--agentreplay-record-mode=new_episodes", AR_SERVER=echo_server.url)
    recorded.assert_outcomes(passed=4)

    # Each test plays the first of its two interactions: #1, #3, #5, #7 are left.
    replayed = _installed_run(project, "-n", "2", AR_REPLAY_ONE="1")
    replayed.assert_outcomes(passed=4)
    assert summary(replayed.stdout.str()) == {
        "cassettes used": "1",
        "interactions replayed": "4",
        "cassettes written": "0",
        "interactions recorded": "0",
        "unplayed interactions": "4",
        "live calls": "0",
    }
    cache = project.path / ".pytest_cache" / "v" / "agentreplay" / "unplayed"
    path = _shared(project)
    assert json.loads(cache.read_text()) == {str(path.resolve()): [1, 3, 5, 7]}
    linted = cli(capsys, "lint", "--select", "unplayed", str(path))
    assert linted.code == 1
    assert "interactions[3]" in linted.out
    assert "interactions[0]" not in linted.out
