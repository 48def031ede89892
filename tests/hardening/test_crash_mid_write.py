"""Item 12: a recording process that crashes while it writes the cassette — an
exception (disk full), ``os._exit``, ``SIGKILL`` — leaves the old cassette
byte-identical and never a partial file under its name. The temporary file is unique
to the process (its pid and a random part in the name); an exception removes it at
once, and the next write sweeps one left by a process that died (nobody holds
its ``flock`` any more), together with the lock file.
"""

from __future__ import annotations

import re
import signal

import pytest

from tests.cassettes._plugin_runs import PRELUDE, cassette, prompts, run, run_subprocess
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

USER_TEST = (
    PRELUDE
    + """
@pytest.mark.agentreplay
def test_chat(agentreplay):
    ask_raw(os.environ["AR_PROMPTS"])
"""
)

# Loaded by the recording process only: the first fsync — of the cassette's temporary
# file, before it is renamed over the old one — writes junk into it and then crashes.
CRASHING_WRITE = """
import os, signal
from pathlib import Path

HOW = os.environ.get("AR_CRASH")


def _crash(fd):
    os.write(fd, b"partial garbage")
    Path(os.environ["AR_PID"]).write_text(str(os.getpid()))
    if HOW == "exception":
        raise OSError(28, "No space left on device")
    if HOW == "exit":
        os._exit(7)
    os.kill(os.getpid(), signal.SIGKILL)


if HOW:
    os.fsync = _crash
"""

EXITS = {"exception": 1, "exit": 7, "sigkill": -signal.SIGKILL}


@pytest.mark.parametrize("how", sorted(EXITS))
def test_crash_mid_write_keeps_the_old_cassette_and_cleans_up(
    pytester: pytest.Pytester, echo_server: ProviderServer, how: str
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    pytester.makeconftest(CRASHING_WRITE)
    path = cassette(pytester, "test_chat")
    mode = "--agentreplay-record-mode=new_episodes"
    run(pytester, mode, AR_SERVER=echo_server.url, AR_PROMPTS="A").assert_outcomes(passed=1)
    before = path.read_bytes()

    pid_file = pytester.path / "pid"
    crashed = run_subprocess(
        pytester,
        mode,
        AR_SERVER=echo_server.url,
        AR_PROMPTS="B",
        AR_CRASH=how,
        AR_PID=str(pid_file),
    )
    assert crashed.ret == EXITS[how], crashed.stdout.str()
    assert path.read_bytes() == before, "the old cassette changed"
    assert len(echo_server.requests) == 2, "the crashed run did record a call"
    others = sorted(p.name for p in path.parent.iterdir() if p != path)
    if how == "exception":
        assert others == [], "the temporary file was not removed"
        crashed.stdout.fnmatch_lines(["*OSError: [[]Errno 28[]] No space left on device*"])
        return
    pid = pid_file.read_text()
    # Never under the final name: one temp file unique to the dead process, and the
    # empty lock file (the kernel released its flock when the process died).
    [leftover] = [name for name in others if name.endswith(".tmp")]
    assert re.fullmatch(rf"\.test_chat\.yaml\.{pid}\.agentreplay-\w{{8}}\.tmp", leftover)
    assert others == sorted([leftover, "test_chat.yaml.lock"])
    assert (path.parent / leftover).read_bytes().endswith(b"partial garbage")

    run(pytester, AR_SERVER=echo_server.url, AR_PROMPTS="A").assert_outcomes(passed=1)  # replay
    # The next write sweeps both at once: nobody holds the temp file, its process is gone.
    run(pytester, mode, AR_SERVER=echo_server.url, AR_PROMPTS="C").assert_outcomes(passed=1)
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    assert prompts(path) == ["A", "C"]
