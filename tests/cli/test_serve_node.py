"""The docs' Node example drives ``agentreplay serve --fake`` with Node's own fetch
(issue 30): it scripts a reply, has a typo refused, cuts a stream, injects a 429,
holds and releases a call, reads the log and resets. The file the docs show
(docs/examples/serve_fake.mjs) is the file run here, with the machine's ``node``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import httpx2
import pytest

from tests.cli.test_serve import TIMEOUT, serve

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "serve_fake.mjs"
NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not installed: the Node example needs it")
def test_the_docs_node_example_scripts_cuts_holds_and_reads_the_log() -> None:
    assert NODE is not None
    with serve("--fake") as served:
        ran = subprocess.run(
            [NODE, str(EXAMPLE)],
            env={**os.environ, "AGENTREPLAY_URL": served.url},
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        served.stop()

    assert (ran.returncode, ran.stderr) == (0, "")
    assert ran.stdout == "ok: 5 calls\n"
    # The server counts the calls the example made, across its reset, and found no
    # surprise: exit 0.
    assert served.returncode == 0, served.stderr
    assert "agentreplay serve: 5 calls to the fake\n" in served.stderr


@pytest.mark.skipif(NODE is None, reason="node is not installed: the Node example needs it")
def test_the_node_example_fails_when_the_fake_misbehaves() -> None:
    """The example asserts what it shows: scripted ahead with a different reply, it
    fails (so a broken control API cannot pass it)."""
    assert NODE is not None
    with serve("--fake") as served:
        httpx2.post(
            f"{served.url}/_agentreplay/script", json={"replies": ["Not the weather."]}
        ).raise_for_status()
        ran = subprocess.run(
            [NODE, str(EXAMPLE)],
            env={**os.environ, "AGENTREPLAY_URL": served.url},
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    assert ran.returncode != 0
    assert "Not the weather." in ran.stderr
