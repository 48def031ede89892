"""Item 13: a real Ctrl-C (SIGINT to the pytest process) while a stream is being
recorded. Either nothing is written, or the interaction is kept marked ``incomplete``
— and then replay refuses it unless the test asks for it (``allow_incomplete=True``),
when it replays as the cut it was.

(The same with the interrupt raised at an exact event, no signal timing involved:
tests/cassettes/test_write_safety.py.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
import yaml

from pytest_agentreplay import Reply
from tests.cassettes._plugin_runs import PRELUDE, cassette, results, run
from tests.children import PYTEST_HEARING_CTRL_C
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

USER_TEST = (
    PRELUDE
    + """
@pytest.mark.agentreplay(allow_incomplete=bool(os.environ.get("AR_ALLOW")))
def test_stream(agentreplay):
    body = {"model": "m", "max_tokens": 64, "stream": True,
            "messages": [{"role": "user", "content": "count"}]}
    try:  # plain httpx2: no SDK to import in the subprocess
        with httpx2.stream("POST", URL + "/v1/messages", json=body) as response:
            for _ in response.iter_bytes():
                pass
    except Exception as error:  # the replayed cut, when allowed
        report(agentreplay, error=type(error).__name__)
"""
)


def _interrupt_mid_stream(pytester: pytest.Pytester, server: ProviderServer) -> str:
    """Record in a subprocess; SIGINT it once three events have gone out."""
    command = [*PYTEST_HEARING_CTRL_C, "-p", "no:cacheprovider", "-p"]
    command += ["pytest_agentreplay.plugin", "--agentreplay-record-mode=once"]
    env = {**os.environ, "AR_SERVER": server.url, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    child = subprocess.Popen(
        command, cwd=pytester.path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 30
    while not (server.sent_at and len(server.sent_at[0]) >= 3):
        assert time.monotonic() < deadline and child.poll() is None, "the stream never started"
        time.sleep(0.01)
    child.send_signal(signal.SIGINT)
    output = child.communicate(timeout=30)[0].decode()
    assert child.returncode == pytest.ExitCode.INTERRUPTED, output
    return output


def test_ctrl_c_mid_stream_writes_nothing_or_an_incomplete_interaction_replay_refuses(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    server.add(Reply.text(" ".join(f"w{i}" for i in range(30))), delay=0.1)
    output = _interrupt_mid_stream(pytester, server)
    assert "KeyboardInterrupt" in output
    path = cassette(pytester, "test_stream")
    assert sorted(p.name for p in path.parent.iterdir()) in ([], [path.name]), "temp files"
    if not path.exists():
        return  # nothing written: allowed
    [interaction] = yaml.safe_load(path.read_text())["interactions"]
    response = interaction["response"]
    assert response["end"] == "incomplete"
    # The signal goes once the server has sent three events; the client may have read
    # fewer by then (a loaded machine): what is kept is what it read, never more.
    assert len(response["events"]) <= len(server.sent_at[0])

    refused = run(pytester)
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines(["*IncompleteRecordingError:*allow_incomplete=True*"])
    allowed = run(pytester, AR_ALLOW="1")
    allowed.assert_outcomes(passed=1)
    [replayed] = results(pytester)
    assert replayed["error"] == "RemoteProtocolError", "not replayed as the cut it was"
    assert len(server.requests) == 1, "replay went live"
