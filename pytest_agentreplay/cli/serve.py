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
import queue
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import FrameType
from typing import Any
from urllib.parse import urlsplit

from ..cassettes.errors import CassetteMiss, CassetteWriteError, IncompleteRecordingError
from ..cassettes.session import CassetteSession
from ..errors import AgentReplayError
from ..providers import detect
from ..providers.catalog import CATALOG, base_url_env
from ..redact import Scrubber, SecretLeakError, default_scrubber
from ..transport.playback import Playback
from ..transport.router import HTTPRequest, Router, intercepting
from ..transport.server import ModelServer
from .common import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, Output
from .errors import CLIError
from .redact import leak_reason

__all__ = ["PROVIDER_ORIGINS", "run_serve"]

PROVIDER_ORIGINS: dict[str, str] = {name: entry.origin for name, entry in CATALOG.items()}
"""Where a model call goes when neither ``--upstream`` nor the cassette says."""

_NOT_FORWARDED = frozenset(
    {"host", "content-length", "connection", "keep-alive", "transfer-encoding", "te", "upgrade"}
)
_POLL = 0.05  # seconds between two looks at the stop signal while the upstream is awaited


class _StoppingError(Exception):
    """The server is stopping: an exchange with the upstream is abandoned."""


def _until_stop(stop: threading.Event, call: Callable[[], Any]) -> Any:
    """``call()`` (a blocking exchange with the upstream) in a daemon thread: its result,
    or :class:`_StoppingError` as soon as ``stop`` is set. A socket read blocked in
    another thread cannot be interrupted; the thread is left to end with the process."""
    box: queue.Queue[tuple[bool, Any]] = queue.Queue(1)

    def run() -> None:
        try:
            box.put((True, call()))
        except BaseException as exc:  # handed to the caller, whatever it is
            box.put((False, exc))

    threading.Thread(target=run, name="agentreplay-upstream", daemon=True).start()
    while True:
        try:
            ok, value = box.get(timeout=_POLL)
        except queue.Empty:
            if stop.is_set():
                raise _StoppingError from None
            continue
        if ok:
            return value
        raise value


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
    refused: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
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
            except IncompleteRecordingError as refusal:
                return self._refused(str(refusal))
        return self._missed(target, first)

    def _refused(self, reason: str) -> Playback:
        """A recording replay refuses (a stream stopped mid-way, ``end: incomplete``)."""
        reason = self.scrubber.mask(reason)
        with self._lock:
            self.refused.append(reason)
        self.note(f"agentreplay serve: {reason} (agentreplay serve --allow-incomplete serves it)")
        return _error(409, "agentreplay_incomplete_recording", reason)

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
            response = _until_stop(self.stop, lambda: self.forward.send(sent, stream=True))
        except CassetteMiss as miss:
            return self._missed(request, miss)
        except _StoppingError:  # no answer yet, and none will be waited for
            return Playback(status=503, headers=[], events=[], ending="cut", before_headers=True)
        playback = Playback(
            status=response.status_code, headers=list(response.headers.items()), events=[]
        )
        playback.events = _relayed(response, playback, self.stop)
        playback.on_end = lambda outcome, sent: response.close()
        return playback


def _relayed(response: Any, playback: Playback, stop: threading.Event) -> Iterator[bytes]:
    """``response``'s raw bytes as they arrive, read in a thread of their own so that a
    stop never waits for the upstream; a transport failure (or the stop) ends the
    played body the same way (a cut drops the client's connection, a timeout holds it).
    Once the client is done with it (a hang-up, the stop), the reading thread lets go
    of what it reads instead of waiting for a reader forever."""
    chunks: queue.Queue[tuple[str, Any]] = queue.Queue(16)
    done = threading.Event()

    def hand(item: tuple[str, Any]) -> bool:
        while not done.is_set():
            try:
                chunks.put(item, timeout=_POLL)
            except queue.Full:
                continue
            return True
        return False

    def pump() -> None:
        try:
            for chunk in response.iter_raw():
                if not hand(("chunk", chunk)):
                    return
            hand(("end", None))
        except Exception as exc:  # the client module's TransportError, whichever module
            hand(("error", exc))

    threading.Thread(target=pump, name="agentreplay-upstream-body", daemon=True).start()
    try:
        while True:
            try:
                kind, value = chunks.get(timeout=_POLL)
            except queue.Empty:
                if stop.is_set():
                    playback.ending = "cut"
                    return
                continue
            if kind == "chunk":
                yield value
            elif kind == "error":
                playback.ending = "timeout" if "Timeout" in type(value).__name__ else "cut"
                return
            else:
                return
    finally:
        done.set()


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
                allow_incomplete=args.allow_incomplete,
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
            _stopping(handler, sessions)
    return _finish(output, sessions, handler)


def _stopping(handler: _Cassettes, sessions: Sequence[CassetteSession]) -> None:
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
    output: Output, server: ModelServer, sessions: Sequence[CassetteSession], mode: str
) -> None:
    """The URL on its own first line of stdout (what a harness reads), then a note."""
    output.print(server.url)
    output.flush()
    count = sum(len(s.interactions) for s in sessions)
    names = ", ".join(str(s.path) for s in sessions)
    what = "replay only" if mode == "none" else f"record mode {mode}"
    point = " ".join(f"{name}={url}" for name, url in base_url_env(server.url).items())
    output.note(
        f"agentreplay serve: {count} interaction{'' if count == 1 else 's'} from {names} "
        f"on {server.url} ({what}); {point}; Ctrl-C or SIGTERM stops it"
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
    """Write what was recorded; say what was played, missed, refused and left unplayed.
    A write that fails is one line naming the file (exit 1 for a secret or a recording
    that cannot be stored, 2 for the disk), never a traceback."""
    code = EXIT_OK
    for session in sessions:
        played = sum(1 for call in session.calls if call.source == "cassette")
        line = f"agentreplay serve: {session.path}: {played} replayed"
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
