"""Run a snippet in a fresh Python, as an agent's child process would run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from typing import Any

CHILD_TIMEOUT = 300  # a hung child fails the test instead of the run (not a speed bound)

PYTEST_HEARING_CTRL_C = [
    sys.executable,
    "-c",
    "import signal, sys, pytest; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.exit(pytest.main(sys.argv[1:]))",
]
"""``python -m pytest`` for a test that interrupts it with SIGINT. A process started with
SIGINT ignored (a command a non-interactive shell put in the background with ``&``, as
some CI runners do) passes that on to its children, and Python then installs no
``KeyboardInterrupt`` handler: the child would run to its end. Its handler is set here."""


def run_python(code: str, env: Mapping[str, str]) -> dict[str, Any]:
    """Run ``code`` (dedented) in a fresh Python with ``env`` over this process's
    environment; what it printed last, as JSON. A child that fails fails the test with
    its stderr."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
