"""``agentreplay serve CASSETTE...``: recorded traffic on a real port, for any process
(and ``agentreplay serve --fake``: a scripted fake, :mod:`.serve_fake`).

A cassette replays to the HTTP clients of a test's own process; an agent written in
another language, or one that starts worker processes, has sockets of its own. This
command serves cassettes on a loopback HTTP/1.1 port
(:class:`~..transport.server.ModelServer`), through the very
:class:`~..cassettes.session.CassetteSession` a test uses: the same matching (by
method, host, path and body; the request is matched as if sent to the recorded
host), the same event-by-event playback, the same recorded endings (a recorded cut
drops the connection). A request no recording matches gets a ``404`` whose body is
the cassette-miss report (also printed on stderr).

With ``--record-mode`` other than ``none`` it records too: what the cassette does
not answer is sent on to the upstream (``--upstream``, or the provider's own host)
through the plugin's intercepted HTTP client, teed into the cassette as it streams
back, and written (scrubbed, atomically) when the server stops (Ctrl-C, SIGTERM).

Stopping never waits for the upstream (issue 27: a call in flight kept serve
running after SIGTERM, and what was recorded before it was never written): a call
still waiting for its answer is dropped, a stream still arriving is kept as far as
it came, marked ``incomplete`` (replay refuses it, as it refuses a stream a Ctrl-C
stopped in a test), and the cassette is written. A write the secret scan refuses is
one line and exit 1, like every other command's.
"""

from __future__ import annotations

import argparse
import importlib
import ipaddress
import math
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from ..cassettes.errors import CassetteWriteError
from ..cassettes.modes import RECORD_MODES
from ..cassettes.session import CassetteSession
from ..errors import AgentReplayError
from ..fakes.control import CONTROL_PREFIX, ControlAPI, Controlled
from ..providers.catalog import base_url_env
from ..redact.errors import SecretLeakError
from ..redact.scrubber import Scrubber, default_scrubber
from ..transport.router import Router, intercepting
from ..transport.server import ModelServer
from .common import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, Output
from .errors import CLIError
from .options import FORMATS, exit_codes
from .redact import leak_reason
from .serve_fake import serve_fake
from .serve_handler import CassetteHandler

__all__ = ["configure", "run"]

_POLL = 0.2
"""Seconds between two looks at the stop flag (how long SIGTERM may wait to be seen)."""


def configure(parser: argparse.ArgumentParser) -> None:
    """The description and options of ``agentreplay serve``."""
    parser.description = (
        "Serve the recorded interactions of cassettes on a real HTTP/1.1 port, so that "
        "a process the plugin cannot patch (an agent in another language, a worker, a "
        "CLI) replays them: streams event by event, recorded cuts as dropped "
        "connections. Each request is matched as if it was sent to the host it was "
        "recorded from (--upstream, else the recorded host of the same path, else the "
        "provider's). A request no recording matches gets a 404 whose body is the "
        "cassette-miss report, also printed on stderr. The first line on stdout is the "
        "server's URL; point ANTHROPIC_BASE_URL or GOOGLE_GEMINI_BASE_URL at it "
        "(OPENAI_BASE_URL at URL/v1). "
        "With a record mode other than none, what the cassette does not answer is sent "
        "on to the upstream and recorded into the cassette, written when the server "
        "stops (Ctrl-C or SIGTERM). With --fake it serves a fake model instead, scripted "
        f"over a control API on the same port ({CONTROL_PREFIX}script, inject, block, "
        "release, wait_blocked, reset, log), for a test suite in any language. " + FORMATS
    )
    parser.epilog = exit_codes(
        "stopped; every request was answered", "a request matched no recording"
    )
    parser.add_argument(
        "cassettes", nargs="*", metavar="CASSETTE", help="cassette files (none with --fake)"
    )
    parser.add_argument(
        "--fake",
        action="store_true",
        help="serve a fake model instead of cassettes, scripted over the control API "
        f"({CONTROL_PREFIX}script...; see docs/serving.md): for a test suite in another "
        "language",
    )
    parser.add_argument(
        "--control",
        action="store_true",
        help=f"with cassettes: turn the control API on ({CONTROL_PREFIX}reset, "
        f"{CONTROL_PREFIX}log); --fake turns it on by itself",
    )
    parser.add_argument(
        "--allow-remote-control",
        action="store_true",
        help="let the control API answer on an address beyond loopback (--host 0.0.0.0): "
        "anyone who reaches the port can then script what the agent is told",
    )
    parser.add_argument(
        "--repeat",
        action="store_true",
        help="a request plays its first matching recording every time, played or not "
        "(by default each recording plays once, and a repeat is a 404)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default: 127.0.0.1)"
    )
    parser.add_argument(
        "--port", type=int, default=0, help="the port to listen on (default: a free one)"
    )
    parser.add_argument(
        "--record-mode",
        choices=RECORD_MODES,
        default="none",
        help="none: replay only (default); once, new_episodes, all, rewrite: as in the "
        "plugin, recording what is sent on to the upstream (one cassette only)",
    )
    parser.add_argument(
        "--upstream",
        metavar="URL",
        help="the origin requests were recorded from, and are recorded from "
        "(https://api.anthropic.com...; default: the provider's own host)",
    )
    parser.add_argument(
        "--pace",
        type=_pace,
        metavar="X",
        help="replay events at their recorded arrival times, scaled by X (1.0: as recorded)",
    )
    parser.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="also serve streams recorded while the recording was stopped (end: incomplete), "
        "which are refused (409) by default",
    )


def _pace(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"a finite number >= 0 is needed, got {text!r}")
    return value


def _sessions(
    args: argparse.Namespace, router: Router, scrubber: Scrubber
) -> list[CassetteSession]:
    """One session per cassette named (a :class:`CLIError` naming a file that is not
    there or does not load)."""
    sessions = []
    for name in args.cassettes:
        path = Path(name)
        if args.record_mode == "none" and not path.exists():
            raise CLIError(
                path,
                "no such cassette (record one with --record-mode once, or check the path)",
            )
        try:
            session = CassetteSession(
                path=path,
                record_mode=args.record_mode,
                router=router,
                scrubber=scrubber,
                test="agentreplay serve",
                pace=args.pace,
                allow_incomplete=args.allow_incomplete,
                repeats=args.repeat,
                rerecord=f"agentreplay serve {name} --record-mode new_episodes"
                + (f" --upstream {args.upstream}" if args.upstream else ""),
            )
        except (AgentReplayError, OSError) as exc:
            raise CLIError(None if isinstance(exc, AgentReplayError) else path, str(exc)) from exc
        sessions.append(session)
    return sessions


def _client() -> Any:
    """An HTTP client of the first installed module family (recording needs one)."""
    for name in ("httpx2", "httpx"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        return module.Client(timeout=module.Timeout(600.0, connect=30.0), trust_env=True)
    raise CLIError(None, "recording needs httpx or httpx2 installed (to reach the upstream)")


def _check_args(args: argparse.Namespace) -> None:
    """Options that do not go together, refused before anything is served."""
    if args.fake:
        if args.cassettes:
            raise CLIError(None, "--fake serves a fake model, not cassettes: drop one of them")
        if args.record_mode != "none" or args.repeat or args.upstream:
            raise CLIError(
                None,
                "--fake is scripted over the control API: --record-mode, --repeat and "
                "--upstream are for cassettes (to record a fake, see docs/serving.md)",
            )
    elif not args.cassettes:
        raise CLIError(None, "name a cassette to serve, or serve a scripted fake with --fake")
    if args.record_mode != "none" and len(args.cassettes) != 1:
        raise CLIError(None, "recording writes one cassette: name exactly one")
    controlled = args.fake or args.control
    if controlled and not _is_loopback(args.host) and not args.allow_remote_control:
        raise CLIError(
            None,
            f"the control API would answer every machine that reaches {args.host}: listen "
            "on a loopback address (the default 127.0.0.1), or add --allow-remote-control "
            "to let them script this server",
        )


def _listening(args: argparse.Namespace, handler: Any) -> ModelServer:
    try:
        return ModelServer(handler, host=args.host, port=args.port)
    except OSError as exc:
        raise CLIError(None, f"cannot listen on {args.host}:{args.port}: {exc}") from exc


def run(args: argparse.Namespace, output: Output) -> int:
    """Serve until Ctrl-C / SIGTERM; exit 1 if a request missed every cassette."""
    _check_args(args)
    if args.fake:
        return serve_fake(args, output, _listening, _StopSignal)
    scrubber = default_scrubber()
    output.mask = scrubber.mask
    router = Router(test="agentreplay serve", mask=scrubber.mask)
    sessions = _sessions(args, router, scrubber)
    upstream = args.upstream.rstrip("/") if args.upstream else None
    handler = CassetteHandler(sessions, upstream, scrubber, note=output.note)
    recording = args.record_mode != "none"
    handler.rebuild = None if recording else lambda: _sessions(args, router, scrubber)
    api = ControlAPI(
        reset=handler.reset,
        log=handler.log_json,
        enabled=args.control,
        allow_remote=args.allow_remote_control,
    )
    with _recording(router, sessions[0] if recording else None) as forward:
        handler.forward = forward
        if not _is_loopback(args.host):
            output.note(
                f"agentreplay serve: warning: {args.host} is not a loopback address: every "
                "machine that can reach this one can read the cassettes' answers"
                + (" and record through to the upstream" if recording else "")
            )
        server = _listening(args, Controlled(api, handler))
        with _StopSignal() as stop, server:
            _announce(output, server, sessions, args.record_mode, control=args.control)
            stop.wait()
            _stopping(handler, sessions)
    return _finish(output, handler.sessions, handler)


def _stopping(handler: CassetteHandler, sessions: Sequence[CassetteSession]) -> None:
    """Before the server closes: calls waiting for the upstream are dropped, and streams
    still being recorded are kept as far as they came, as ``incomplete`` (issue 27)."""
    for session in sessions:
        session.end_open_streams()
    handler.stop.set()


def _is_loopback(host: str) -> bool:
    """Whether ``host`` only listens to this machine (``--host 0.0.0.0`` does not)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _recording:  # noqa: N801 - a context manager used like a function
    """In a record mode: the router active with the session as its handler and
    recorder, and an HTTP client whose requests it routes; otherwise nothing."""

    def __init__(self, router: Router, session: CassetteSession | None) -> None:
        self.router, self.session = router, session
        self.scope: Any = None
        self.client: Any = None

    def __enter__(self) -> Any:
        if self.session is None:
            return None
        self.router.block = not self.session.recording
        self.router.recorder = self.session.recorder()
        self.router.add(self.session)
        self.scope = intercepting(self.router)
        self.scope.__enter__()
        self.client = _client()
        return self.client

    def __exit__(self, *exc: object) -> None:
        if self.client is not None:
            self.client.close()
        if self.scope is not None:
            self.scope.__exit__(None, None, None)


def _announce(
    output: Output,
    server: ModelServer,
    sessions: Sequence[CassetteSession],
    mode: str,
    *,
    control: bool,
) -> None:
    """The URL on its own first line of stdout (what a harness reads), then a note."""
    output.print(server.url)
    output.flush()
    count = sum(len(s.interactions) for s in sessions)
    names = ", ".join(str(s.path) for s in sessions)
    what = "replay only" if mode == "none" else f"record mode {mode}"
    if sessions and sessions[0].repeats:
        what += ", repeating"
    if control:
        what += f", control API on {server.url}{CONTROL_PREFIX}"
    point = " ".join(f"{name}={url}" for name, url in base_url_env(server.url).items())
    output.note(
        f"agentreplay serve: {count} interaction{'' if count == 1 else 's'} from {names} "
        f"on {server.url} ({what}); {point}; Ctrl-C or SIGTERM stops it"
    )


class _StopSignal:
    """SIGTERM (and Ctrl-C) end the serving, installed *before* the URL is announced:
    a harness that reads the URL and stops the server at once must still get the
    cassette written, not a process killed by SIGTERM's default action.

    The handler only sets a flag, which the main thread polls between sleeps. It must
    take no lock: Python runs a signal handler in the main thread between two bytecodes,
    and a ``threading.Event.set()`` there deadlocks when the signal lands while that
    thread is inside the same event's ``wait()``, holding its lock (seen under load:
    serve never stopped)."""

    def __init__(self) -> None:
        self.stopped = False
        self._previous: Any = None

    def __enter__(self) -> _StopSignal:
        self._previous = signal.signal(signal.SIGTERM, self._stopped)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGTERM, self._previous)

    def _stopped(self, signum: int, frame: FrameType | None) -> None:
        self.stopped = True

    def wait(self) -> None:
        """Until SIGTERM or Ctrl-C."""
        try:
            while not self.stopped:
                time.sleep(_POLL)
        except KeyboardInterrupt:
            pass


def _finish(output: Output, sessions: Sequence[CassetteSession], handler: CassetteHandler) -> int:
    """Write what was recorded; say what was played, missed, refused and left unplayed.
    A write that fails is one line naming the file (exit 1 for a secret or a recording
    that cannot be stored, 2 for the disk), never a traceback."""
    code = EXIT_OK
    for session in sessions:
        played = session.replayed
        line = f"agentreplay serve: {session.path}: {played} replayed"
        earlier = handler.replayed_before_reset.get(session.path, 0)
        if earlier:
            line += f" (and {earlier} before a reset)"
        try:
            result = session.finish(failed=False)
        except SecretLeakError as exc:
            output.error(CLIError(session.path, leak_reason(exc)))
            code = max(code, EXIT_FINDINGS)
        except CassetteWriteError as exc:
            output.error(CLIError(None, f"{exc}; nothing was written"))
            code = max(code, EXIT_FINDINGS)
        except OSError as exc:
            reason = f"cannot write it: {exc.strerror or exc}; the file was left as it was"
            output.error(CLIError(session.path, reason))
            code = EXIT_ERROR
        else:
            if session.recording:
                line += f", {result.recorded} recorded" + (
                    " (written)" if result.written else f" (not written: {result.reason})"
                )
        if session.unplayed:
            line += f", {len(session.unplayed)} never played"
        output.note(line)
    if handler.refused:
        output.note(f"agentreplay serve: {len(handler.refused)} request(s) refused")
        code = max(code, EXIT_FINDINGS)
    if handler.misses:
        output.note(f"agentreplay serve: {len(handler.misses)} request(s) matched no recording")
        code = max(code, EXIT_FINDINGS)
    return code
