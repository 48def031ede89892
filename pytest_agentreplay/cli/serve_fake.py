"""``agentreplay serve --fake``: a fake model on a port, scripted over the control API.

For a test suite in another language: the suite starts the server, reads its URL
from the first line of stdout, scripts replies and faults with ``POST
/_agentreplay/script`` (and ``inject``, ``block``, ``release``...), points its client
at the URL, and reads what happened with ``GET /_agentreplay/log``
(:mod:`..fakes.control`). The fake is the plugin's :class:`~..fakes.FakeModel`: the
same wire formats, faults, holds and call log as in a Python test.

When it stops (Ctrl-C, SIGTERM) it says how many calls it answered and what went
wrong: a call after the script ran out (its client got a ``500`` saying so) makes the
exit code 1.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ..fakes.control import CONTROL_PREFIX, ControlAPI, Controlled
from ..fakes.fake_model import FakeModel
from ..providers.catalog import base_url_env
from ..redact.scrubber import default_scrubber
from ..transport.server import ModelServer
from .common import EXIT_FINDINGS, EXIT_OK, Output

__all__ = ["serve_fake"]


def serve_fake(
    args: argparse.Namespace,
    output: Output,
    listening: Callable[[argparse.Namespace, Any], ModelServer],
    stop_signal: Callable[[], Any],
) -> int:
    """Serve a fake until Ctrl-C / SIGTERM; exit 1 if a call surprised it."""
    output.mask = default_scrubber().mask
    fake = FakeModel(name="agentreplay serve --fake", check_unused=False)
    fake.past_the_script = f"Script a reply for it first: POST {CONTROL_PREFIX}script."
    api = ControlAPI.over(fake, allow_remote=args.allow_remote_control)
    before_reset: list[int] = []  # calls answered before each reset, for the summary
    surprised: list[str] = []  # ... and what surprised the fake before it

    def reset() -> None:
        before_reset.append(len(fake.log))
        surprised.extend(fake.surprises)
        fake.reset()

    api.reset = reset
    server = listening(args, Controlled(api, fake))
    with stop_signal() as stop, server:
        output.print(server.url)
        output.flush()
        point = " ".join(f"{name}={url}" for name, url in base_url_env(server.url).items())
        output.note(
            f"agentreplay serve: a fake model on {server.url}, scripted through "
            f"{server.url}{CONTROL_PREFIX} (script, inject, block, release, log...); "
            f"{point}; Ctrl-C or SIGTERM stops it"
        )
        stop.wait()
        api.stop.set()  # a wait_blocked in progress answers now
    return _finish(output, fake, server, sum(before_reset), surprised)


def _finish(
    output: Output, fake: FakeModel, server: ModelServer, earlier: int, surprised: list[str]
) -> int:
    """What the fake answered and what surprised it (``earlier`` calls and ``surprised``:
    before the last reset)."""
    fake.close_open_calls()
    calls = len(fake.log) + earlier
    line = f"agentreplay serve: {calls} call{'' if calls == 1 else 's'} to the fake"
    left = len(fake.remaining)
    if left:
        line += f", {left} scripted repl{'y' if left == 1 else 'ies'} never requested"
    output.note(line)
    # A call past the script is both a surprise of the fake and a request the server
    # failed on: said once, in the fake's words.
    problems = surprised + fake.surprises or server.errors
    for problem in problems:
        output.note(f"agentreplay serve: {problem}")
    return EXIT_FINDINGS if problems else EXIT_OK
