"""The handler behind ``agentreplay serve``: each request answered from the cassettes,
or sent on to the upstream and recorded.

:class:`CassetteHandler` retargets a request to the host it was recorded from and asks
each cassette's :class:`~..cassettes.session.CassetteSession` in turn; a miss becomes a
``404`` whose body is the cassette-miss report, a refused recording a ``409``. In a
record mode the request goes out through the intercepted HTTP client instead, and its
body is relayed from a thread of its own, so that a stop never waits for the upstream
(issue 27).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..cassettes.errors import CassetteMiss, IncompleteRecordingError
from ..cassettes.session import CassetteSession
from ..fakes.errors import ControlRequestError
from ..providers import detect, target
from ..providers.catalog import CATALOG
from ..redact.scrubber import Scrubber
from ..transport.playback import Playback
from ..transport.router import HTTPRequest

__all__ = ["PROVIDER_ORIGINS", "CassetteHandler"]

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
class CassetteHandler:
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
    rebuild: Callable[[], list[CassetteSession]] | None = None
    """Fresh sessions over the same files, for a reset (``None``: recording, which a
    reset would lose)."""
    replayed_before_reset: dict[Path, int] = field(default_factory=dict)
    _misses_shown: int = 0  # misses before the last reset, left out of the log
    _origins: dict[str, str] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # --- the control API (--control) -------------------------------------------------

    def reset(self) -> None:
        """Replay every cassette from its start again: what was played is playable
        again, and the log starts over (the summary at the stop still counts it)."""
        if self.rebuild is None:
            raise ControlRequestError(
                "reset would lose what is being recorded: stop the server (Ctrl-C, "
                "SIGTERM) to write it, then serve the cassette again",
                status=409,
            )
        fresh = self.rebuild()
        with self._lock:
            for session in self.sessions:
                played = session.replayed
                path = session.path
                self.replayed_before_reset[path] = self.replayed_before_reset.get(path, 0) + played
            self.sessions[:] = fresh
            self._misses_shown = len(self.misses)

    def log_json(self) -> dict[str, Any]:
        """The calls since the last reset, as the control API's ``log`` shows them."""
        with self._lock:
            sessions, misses = list(self.sessions), self.misses[self._misses_shown :]
        calls = [
            {
                "cassette": str(session.path),
                "index": call.index,
                "method": call.method,
                "url": self.scrubber.mask(call.url),
                "client": call.client,
                "source": call.source,
                "interaction": call.interaction,
                "status": call.status,
                "outcome": call.outcome,
                "events_sent": call.events_sent,
            }
            for session in sessions
            for call in list(session.calls)
        ]
        unplayed = {str(s.path): s.unplayed for s in sessions}
        return {"calls": calls, "misses": misses, "unplayed": unplayed}

    def claims(self, request: HTTPRequest) -> bool:
        return True

    async def respond_async(self, request: HTTPRequest) -> Playback:
        return self.respond(request)

    def respond(self, request: HTTPRequest) -> Playback:
        retargeted = replace(request, url=self._origin(request) + target(request.url))
        if self.forward is not None:
            return self._forwarded(retargeted)
        first: CassetteMiss | None = None
        with self._lock:  # a reset may swap the sessions meanwhile
            sessions = list(self.sessions)
        for session in sessions:
            if not session.claims(retargeted):
                continue
            try:
                return session.respond(retargeted)
            except CassetteMiss as miss:
                first = first or miss
            except IncompleteRecordingError as refusal:
                return self._refused(str(refusal))
        return self._missed(retargeted, first)

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
            status=response.status_code,
            headers=list(response.headers.items()),
            events=[],
            arriving=True,
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


def _error(status: int, kind: str, message: str) -> Playback:
    import json  # noqa: PLC0415 - only on a miss

    body = json.dumps({"error": {"type": kind, "message": message}}).encode()
    headers = [
        ("content-type", "application/json"),
        ("content-length", str(len(body))),
        ("x-should-retry", "false"),  # the SDKs would retry the same miss
    ]
    return Playback(status=status, headers=headers, events=[body])
