"""Issue 18, item 18: Ctrl-C while re-recording never destroys the good cassette.

pytest re-raises ``KeyboardInterrupt`` (and ``pytest.exit``) without a call-phase
report, so the plugin never learned the test failed: the fixture was torn down at
session end and, in ``rewrite`` mode over a 20-event cassette, a real SIGINT
mid-stream left a few-event cassette marked ``incomplete`` in its place (in ``all``
mode the partial interaction was appended). And a ``KeyboardInterrupt`` raised in
the test's own read loop (or any ``BaseException`` that ends the test) closed the
stream while it propagated, which was stored as ``end: cancelled`` (the client hung
up): replay did not refuse it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from pytest_agentreplay import Reply
from tests.cassettes._plugin_runs import PRELUDE, cassette, interactions, run, run_subprocess
from tests.children import PYTEST_HEARING_CTRL_C
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

USER_TEST = (
    PRELUDE
    + """
class Stop(BaseException):
    pass


RAISE = {"interrupt": KeyboardInterrupt, "base": Stop, "exit": None}


@pytest.mark.agentreplay
def test_stream(agentreplay):
    body = {"model": "m", "max_tokens": 64, "stream": True,
            "messages": [{"role": "user", "content": "count"}]}
    how = os.environ.get("AR_RAISE")
    with httpx2.stream("POST", URL + "/v1/messages", json=body) as response:
        for n, _ in enumerate(response.iter_lines()):
            if how and n == 6:
                if how == "exit":
                    pytest.exit("stopped by the test")
                raise RAISE[how]()
"""
)
WORDS = " ".join(f"w{i}" for i in range(20))


def _recorded(pytester: pytest.Pytester, server: ProviderServer) -> str:
    """A good 20-word cassette, recorded for real; its text."""
    server.add(Reply.text(WORDS))
    run(pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url).assert_outcomes(passed=1)
    return cassette(pytester, "test_stream").read_text()


def _sigint_mid_stream(pytester: pytest.Pytester, server: ProviderServer, mode: str) -> str:
    """Re-record in a subprocess; SIGINT it once three events have gone out."""
    command = [*PYTEST_HEARING_CTRL_C, "-p", "no:cacheprovider", "-p"]
    command += ["pytest_agentreplay.plugin", f"--agentreplay-record-mode={mode}"]
    env = {**os.environ, "AR_SERVER": server.url, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    server.add(Reply.text(" ".join(f"new{i}" for i in range(40))), delay=0.1)
    sent_before = len(server.sent_at)
    child = subprocess.Popen(
        command, cwd=pytester.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 60
    while not (len(server.sent_at) > sent_before and len(server.sent_at[-1]) >= 3):
        assert time.monotonic() < deadline and child.poll() is None, "the stream never started"
        time.sleep(0.01)
    child.send_signal(signal.SIGINT)
    output = child.communicate(timeout=60)[0].decode()
    if child.returncode == 1 and _PYTEST_REPR_CRASH in output:
        # The interrupt was seen as one (pytest's KeyboardInterrupt hook ran), but pytest
        # itself crashed drawing its traceback: Python 3.11 gives the frame a SIGINT
        # lands in no line number when it lands in code that has none (a ``with``
        # block's exit, a ``for`` loop's cleanup). What this test checks, the cassette,
        # does not depend on the exit code; the signal's timing is the machine's.
        assert "pytest_keyboard_interrupt" in output, output
    else:
        assert child.returncode == pytest.ExitCode.INTERRUPTED, output
    return output


_PYTEST_REPR_CRASH = "TypeError: unsupported operand type(s) for -: 'NoneType' and 'int'"
"""pytest's traceback drawing on a frame whose ``tb_lineno`` is ``None``
(``_pytest/_code/code.py``, ``TracebackEntry.lineno``)."""


@pytest.mark.parametrize("mode", ["rewrite", "all"])
def test_a_real_ctrl_c_while_re_recording_keeps_the_cassette_untouched(
    pytester: pytest.Pytester, server: ProviderServer, mode: str
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    good = _recorded(pytester, server)
    output = _sigint_mid_stream(pytester, server, mode)
    assert "KeyboardInterrupt" in output
    path = cassette(pytester, "test_stream")
    assert path.read_text() == good, "the interrupted run changed the good cassette"
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name], "temp files left"
    output_tail = output[output.find("agentreplay") :]
    assert "interrupted" in output_tail, output_tail


@pytest.mark.parametrize("how", ["interrupt", "exit", "base"])
@pytest.mark.parametrize("mode", ["rewrite", "all"])
def test_a_base_exception_in_the_read_loop_keeps_the_cassette_untouched(
    pytester: pytest.Pytester, server: ProviderServer, mode: str, how: str
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    good = _recorded(pytester, server)
    server.add(Reply.text("new " * 30))
    result = run_subprocess(
        pytester, f"--agentreplay-record-mode={mode}", AR_SERVER=server.url, AR_RAISE=how
    )
    assert result.ret != pytest.ExitCode.OK
    assert cassette(pytester, "test_stream").read_text() == good


@pytest.mark.parametrize("how", ["interrupt", "base"])
def test_a_base_exception_in_the_read_loop_is_stored_incomplete_not_cancelled(
    pytester: pytest.Pytester, server: ProviderServer, how: str
) -> None:
    """A first recording of a test that was stopped is written as the docs say: only
    as clearly incomplete, which replay refuses."""
    pytester.makepyfile(test_user=USER_TEST)
    server.add(Reply.text(WORDS))
    run_subprocess(pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url, AR_RAISE=how)
    path = cassette(pytester, "test_stream")
    if not path.exists():
        return  # nothing written: allowed
    [interaction] = interactions(path)
    assert interaction["response"]["end"] == "incomplete"
    refused = run(pytester)
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines(["*IncompleteRecordingError:*allow_incomplete=True*"])
