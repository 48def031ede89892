"""Items 15-17: concurrency.

15. Four separate pytest processes (no xdist controller to order anything) recording
    into one cassette at the same time: the file parses and holds every interaction
    of every process exactly once, whatever the interleaving; no temp or lock file is
    left. (Four xdist workers giving the serial run's bytes: tests/cassettes/
    test_concurrent_recording.py.)
16. An xdist worker that crashes while recording: the run still ends with its full
    summary and no INTERNALERROR; the crashed test's cassette is untouched, the other
    tests' cassettes are written whole.
17. ``asyncio.gather`` recording: re-recording gives byte-identical files even when
    the answers arrive in the opposite order.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pytest_agentreplay.cassettes.io import load
from tests.cassettes._plugin_runs import PRELUDE, cassette, prompts, run, run_subprocess
from tests.cassettes.test_recording_durability import GATHER
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]


SHARED = (
    PRELUDE
    + """
@pytest.mark.agentreplay(cassette="shared.yaml")
def test_shared(agentreplay):
    for i in range(3):
        ask_raw(f"{os.environ['AR_WHO']}.{i}")
"""
)


def test_four_processes_recording_one_cassette_lose_nothing(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=SHARED)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    command += ["-p", "pytest_agentreplay.plugin", "--agentreplay-record-mode=new_episodes"]
    env = {**os.environ, "AR_SERVER": echo_server.url, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    procs = [
        subprocess.Popen(
            command,
            cwd=pytester.path,
            env={**env, "AR_WHO": f"p{n}"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for n in range(4)
    ]
    outputs = [proc.communicate(timeout=60)[0].decode() for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 4, outputs
    path = cassette(pytester, "shared")
    expected = sorted(f"p{n}.{i}" for n in range(4) for i in range(3))
    assert sorted(prompts(path)) == expected
    assert len(load(path).interactions) == 12
    for n in range(4):  # each process's calls stay together, in the order it made them
        mine = [p for p in prompts(path) if p.startswith(f"p{n}.")]
        assert mine == [f"p{n}.{i}" for i in range(3)]
    assert sorted(p.name for p in path.parent.iterdir()) == ["shared.yaml"]


CRASHING = (
    PRELUDE
    + """
@pytest.mark.parametrize("n", range(4))
@pytest.mark.agentreplay
def test_one(agentreplay, n):
    ask_raw(f"q{n}" + os.environ.get("AR_MORE", ""))

@pytest.mark.agentreplay
def test_crash(agentreplay):
    ask_raw("doomed" + os.environ.get("AR_MORE", ""))
    if os.environ.get("AR_MORE"):
        os._exit(1)
"""
)


def test_a_worker_crashing_mid_record_leaves_a_full_summary_and_intact_cassettes(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=CRASHING)
    run(pytester, "--agentreplay-record-mode=once", AR_SERVER=echo_server.url).assert_outcomes(
        passed=5
    )
    doomed = cassette(pytester, "test_crash")
    before = doomed.read_bytes()

    mode = "--agentreplay-record-mode=new_episodes"
    result = run_subprocess(pytester, "-n", "2", mode, AR_SERVER=echo_server.url, AR_MORE="+")
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["*worker*crashed*", "*- agentreplay -*", "cassettes written: 4*"])
    assert doomed.read_bytes() == before, "the crashed test's cassette changed"
    for n in range(4):
        assert prompts(cassette(pytester, f"test_one[{n}]")) == [f"q{n}", f"q{n}+"]
    leftovers = [p.name for p in doomed.parent.iterdir() if not p.name.endswith(".yaml")]
    assert leftovers == []


def test_gather_rerecords_byte_identically_whatever_order_answers_arrive_in(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=GATHER)
    path = cassette(pytester, "test_gather")
    recordings = []
    for slow_first in (True, False):
        order = range(4) if slow_first else reversed(range(4))
        echo_server.delays = {f"q{i}": 0.05 * rank for rank, i in enumerate(order)}
        rewrite = "--agentreplay-record-mode=rewrite"
        run(pytester, rewrite, AR_SERVER=echo_server.url).assert_outcomes(passed=1)
        recordings.append(path.read_bytes())
    assert recordings[0] == recordings[1]
    assert prompts(path) == ["q0", "q1", "q2", "q3"]
