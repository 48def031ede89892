"""``agentreplay serve CASSETTE...``: recorded traffic on a real port, for any process.

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
"""

from __future__ import annotations

import argparse
import importlib
import ipaddress
import signal
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import urlsplit

from ..cassettes.miss import CassetteMiss
from ..cassettes.session import CassetteSession
from ..errors import AgentReplayError
from ..providers import detect
from ..redact import Scrubber, default_scrubber
from ..transport.playback import Playback
from ..transport.router import HTTPRequest, Router, intercepting
from ..transport.server import ModelServer
from .common import EXIT_FINDINGS, EXIT_OK, CLIError, Output

__all__ = ["PROVIDER_ORIGINS", "run_serve"]

PROVIDER_ORIGINS = {
    "anthropic": "https://api.anthropic.com",
    "openai_chat": "https://api.openai.com",
    "openai_responses": "https://api.openai.com",
    "gemini": "https://generativelanguage.googleapis.com",
}
"""Where a model call goes when neither ``--upstream`` nor the cassette says."""

_NOT_FORWARDED = frozenset(
    {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "te", "upgrade"}
)


@dataclass
class _Cassettes:
    """The server's handler: each request retargeted to the host it was recorded
    from, then answered by the first cassette that matches it (or recorded)."""

    sessions: list[CassetteSession]
    upstream: str | None
    scrubber: Scrubber
    note: Any = print  # where a miss report is said (stderr, masked)
    forward: Any = None  # an HTTP client (record modes): sends what no cassette answers
    misses: list[str] = field(default_factory=list)
    _origins: dict[str, str] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def claims(self, request: HTTPRequest) -> bool:
        return True

    async def respond_async(self, request: HTTPRequest) -> Playback:
        return self.respond(request)

    def respond(self, request: HTTPRequest) -> Playback:
        target = replace(request, url=self._origin(request) + _path_and_query(request.url))
        if self.forward is not None:
            return self._forwarded(target)
        first: CassetteMiss | None = None
        for session in self.sessions:
            if not session.claims(target):
                continue
            try:
                return session.respond(target)
            except CassetteMiss as miss:
                first = first or miss
        return self._missed(target, first)

    def _origin(self, request: HTTPRequest) -> str:
        """Where ``request`` was recorded from: ``--upstream``; else the recorded host
        of a request to the same path; else the provider's own host."""
        if self.upstream:
            return self.upstream
        if self._origins is None:  # the first recorded origin of each path, once
            origins: dict[str, str] = {}
            for session in self.sessions:
                for interaction in session.interactions:
                    parts = urlsplit(interaction.request.url)
                    origins.setdefault(parts.path, f"{parts.scheme}://{parts.netloc}")
            self._origins = origins
        recorded = self._origins.get(request.path)
        if recorded is not None:
            return recorded
        provider = detect(request.method, request.path)
        return PROVIDER_ORIGINS.get(provider or "", "http://unknown.invalid")

    def _missed(self, request: HTTPRequest, miss: CassetteMiss | None) -> Playback:
        report = str(miss) if miss is not None else f"no cassette answers {request.method}"
        report = self.scrubber.mask(report)
        with self._lock:
            self.misses.append(report)
        self.note(f"agentreplay serve: {report}")
        return _error(404, "agentreplay_cassette_miss", report)

    def _forwarded(self, request: HTTPRequest) -> Playback:
        """Send ``request`` through the intercepted client: the session replays what it
        matches, the rest goes out live and is teed into the recording."""
        headers = [(k, v) for k, v in request.headers if k.lower() not in _NOT_FORWARDED]
        if not any(k.lower() == "accept-encoding" for k, _ in headers):
            headers.append(("accept-encoding", "identity"))  # the client decodes nothing
        try:
            sent = self.forward.build_request(
                request.method, request.url, headers=headers, content=request.content
            )
            response = self.forward.send(sent, stream=True)
        except CassetteMiss as miss:
            return self._missed(request, miss)
        playback = Playback(
            status=response.status_code, headers=list(response.headers.items()), events=[]
        )
        playback.events = _relayed(response, playback)
        playback.on_end = lambda outcome, sent: response.close()
        return playback


def _relayed(response: Any, playback: Playback) -> Iterator[bytes]:
    """``response``'s raw bytes as they arrive; a transport failure ends the played
    body the same way (a cut drops the client's connection, a timeout holds it)."""
    try:
        yield from response.iter_raw()
    except Exception as exc:  # the client module's TransportError, whichever module
        playback.ending = "timeout" if "Timeout" in type(exc).__name__ else "cut"


def _path_and_query(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _error(status: int, kind: str, message: str) -> Playback:
    import json  # noqa: PLC0415 - only on a miss

    body = json.dumps({"error": {"type": kind, "message": message}}).encode()
    headers = [
        ("content-type", "application/json"),
        ("content-length", str(len(body))),
        ("x-should-retry", "false"),  # the SDKs would retry the same miss
    ]
    return Playback(status=status, headers=headers, events=[body])


def _sessions(
    args: argparse.Namespace, router: Router, scrubber: Scrubber
) -> list[CassetteSession]:
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


def run_serve(args: argparse.Namespace, output: Output) -> int:
    """Serve until Ctrl-C / SIGTERM; exit 1 if a request missed every cassette."""
    if args.record_mode != "none" and len(args.cassettes) != 1:
        raise CLIError(None, "recording writes one cassette: name exactly one")
    scrubber = default_scrubber()
    output.mask = scrubber.mask
    router = Router(test="agentreplay serve", mask=scrubber.mask)
    sessions = _sessions(args, router, scrubber)
    upstream = args.upstream.rstrip("/") if args.upstream else None
    handler = _Cassettes(sessions, upstream, scrubber, note=output.note)
    recording = args.record_mode != "none"
    with _recording(router, sessions[0] if recording else None) as forward:
        handler.forward = forward
        if not _is_loopback(args.host):
            output.note(
                f"agentreplay serve: warning: {args.host} is not a loopback address: every "
                "machine that can reach this one can read the cassettes' answers"
                + (" and record through to the upstream" if recording else "")
            )
        try:
            server = ModelServer(handler, host=args.host, port=args.port)
        except OSError as exc:
            raise CLIError(None, f"cannot listen on {args.host}:{args.port}: {exc}") from exc
        with _StopSignal() as stop, server:
            _announce(output, server, sessions, args.record_mode)
            stop.wait()
    return _finish(output, sessions, handler)


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
    output: Output, server: ModelServer, sessions: Sequence[CassetteSession], mode: str
) -> None:
    """The URL on its own first line of stdout (what a harness reads), then a note."""
    output.print(server.url)
    output.out.flush()
    count = sum(len(s.interactions) for s in sessions)
    names = ", ".join(str(s.path) for s in sessions)
    what = "replay only" if mode == "none" else f"record mode {mode}"
    output.note(
        f"agentreplay serve: {count} interaction{'' if count == 1 else 's'} from {names} "
        f"on {server.url} ({what}); ANTHROPIC_BASE_URL={server.url} "
        f"OPENAI_BASE_URL={server.url}/v1 GOOGLE_GEMINI_BASE_URL={server.url}; "
        "Ctrl-C or SIGTERM stops it"
    )


class _StopSignal:
    """SIGTERM (and Ctrl-C) end the serving, installed *before* the URL is announced:
    a harness that reads the URL and stops the server at once must still get the
    cassette written, not a process killed by SIGTERM's default action."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self._previous: Any = None

    def __enter__(self) -> _StopSignal:
        self._previous = signal.signal(signal.SIGTERM, self._stopped)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGTERM, self._previous)

    def _stopped(self, signum: int, frame: FrameType | None) -> None:
        self.stop.set()

    def wait(self) -> None:
        """Until SIGTERM or Ctrl-C."""
        try:
            while not self.stop.wait(0.2):
                pass
        except KeyboardInterrupt:
            pass


def _finish(output: Output, sessions: Sequence[CassetteSession], handler: _Cassettes) -> int:
    """Write what was recorded; say what was played, missed and left unplayed."""
    for session in sessions:
        result = session.finish(failed=False)
        played = sum(1 for call in session.calls if call.source == "cassette")
        line = f"agentreplay serve: {session.path}: {played} replayed"
        if session.recording:
            line += f", {result.recorded} recorded" + (
                " (written)" if result.written else f" (not written: {result.reason})"
            )
        if session.unplayed:
            line += f", {len(session.unplayed)} never played"
        output.note(line)
    if handler.misses:
        output.note(f"agentreplay serve: {len(handler.misses)} request(s) matched no recording")
        return EXIT_FINDINGS
    return EXIT_OK
