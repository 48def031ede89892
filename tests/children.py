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
