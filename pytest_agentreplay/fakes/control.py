"""The control API of ``agentreplay serve``: script a fake, and read its log, over HTTP.

A test in Python scripts its fake with method calls; a test in TypeScript, Go or
Rust has only the port. ``agentreplay serve --fake`` (and ``--control`` for
cassettes) answers requests under :data:`CONTROL_PREFIX` on the same port as the
model calls, with the fake's own vocabulary (JSON bodies, :mod:`.control_json`):

==========================  ======  =====================================================
path                        method  what it does
==========================  ======  =====================================================
``/_agentreplay/script``    POST    ``{"replies": [...]}``: append to the script
``/_agentreplay/inject``    POST    ``{"fault": {...}}``: fail the next call with it
``/_agentreplay/interrupt`` POST    ``{"after_events": k, "times": n}``: cut streams
``/_agentreplay/fail_with`` POST    ``{"fault": {...}}``: fail every call
``/_agentreplay/block``     POST    ``{"after_events": k}``: hold the next call
``/_agentreplay/release``   POST    let every held call go
``/_agentreplay/wait_blocked`` POST ``{"timeout": s}``: ``{"blocked": true}`` once held
``/_agentreplay/reset``     POST    start over (a fake's script and log; cassettes replay
                                    from the start)
``/_agentreplay/log``       GET     the calls, scrubbed (:mod:`.control_log`)
==========================  ======  =====================================================

The prefix cannot clash with a provider: no provider path starts with ``/_``. Whoever
reaches the port can script what an agent is told, so the API is guarded (issue 30):

- it is off unless asked for (``--fake``, ``--control``), and ``agentreplay serve``
  refuses it on an address beyond loopback unless ``--allow-remote-control``;
- a request whose ``Host`` is not a loopback name is refused (a DNS-rebinding page
  reaches ``127.0.0.1`` under its own name), and so is one a browser marks as sent
  from another site (``Origin``, ``Sec-Fetch-Site``);
- a ``POST`` must say ``content-type: application/json``, which a page cannot send
  to another origin without the CORS preflight this server never grants.
"""

from __future__ import annotations

import ipaddress
import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..transport.playback import Playback
from ..transport.router import Deferred, Handler, HTTPRequest
from .control_json import fault_of, parse_body, reply_of, take_options
from .control_log import LogScrubber, fake_log
from .errors import ControlRequestError

if TYPE_CHECKING:
    from .fake_model import FakeModel

__all__ = ["CONTROL_PREFIX", "ControlAPI", "Controlled", "is_control"]

CONTROL_PREFIX = "/_agentreplay/"
"""Where the control API answers (no provider path starts with ``/_``)."""
MAX_WAIT = 60.0
"""Seconds ``wait_blocked`` may wait at most (a longer wait is refused)."""
_WAIT_SLICE = 0.1  # seconds between two looks at the stop signal while waiting
_FAKE_ONLY = ("script", "inject", "interrupt", "fail_with", "block", "release", "wait_blocked")
_METHODS = {"log": "GET", "reset": "POST", **dict.fromkeys(_FAKE_ONLY, "POST")}


def is_control(path: str) -> bool:
    """Whether ``path`` is the control API's."""
    return path == CONTROL_PREFIX.rstrip("/") or path.startswith(CONTROL_PREFIX)


@dataclass
class ControlAPI:
    """The control API over a fake (``fake``) or over cassettes (``reset`` and ``log``
    only). ``enabled=False`` answers every control path with a 404 saying how to
    turn it on; ``allow_remote`` lifts the loopback ``Host`` check (the server was
    started on another address on purpose)."""

    reset: Callable[[], object]
    log: Callable[[], dict[str, Any]]
    fake: FakeModel | None = None
    enabled: bool = True
    allow_remote: bool = False
    off_hint: str = "start agentreplay serve with --control (or --fake)"
    stop: threading.Event = field(default_factory=threading.Event)
    """Set when the server stops: a ``wait_blocked`` in progress answers at once."""

    @classmethod
    def over(cls, fake: FakeModel, *, allow_remote: bool = False) -> ControlAPI:
        """The control API of ``fake``."""
        scrub = LogScrubber()
        return cls(
            reset=fake.reset,
            log=lambda: fake_log(fake, scrub),
            fake=fake,
            allow_remote=allow_remote,
        )

    def respond(self, request: HTTPRequest) -> Playback:
        """The answer to a request under :data:`CONTROL_PREFIX`."""
        name = request.path[len(CONTROL_PREFIX) :].strip("/")
        if not self.enabled:
            return _error(404, f"the control API is off: {self.off_hint}")
        refusal = self._refusal(request)
        if refusal is not None:
            return _error(*refusal)
        if not name:
            return _json(200, {"endpoints": self._endpoints()})
        method = _METHODS.get(name)
        if method is None:
            return _error(
                404, f"no control endpoint {name!r}; there are {', '.join(self._endpoints())}"
            )
        if request.method != method:
            return _error(405, f"{name} takes {method}, not {request.method}", allow=method)
        if name in _FAKE_ONLY and self.fake is None:
            return _error(
                409,
                f"{name} scripts a fake model, and this server replays cassettes: "
                "start agentreplay serve --fake to script one",
            )
        try:
            return _json(200, self._do(name, request))
        except ControlRequestError as exc:
            return _error(exc.status, str(exc), field_name=exc.field)

    def _endpoints(self) -> list[str]:
        names = list(_METHODS) if self.fake is not None else ["log", "reset"]
        return [f"{_METHODS[n]} {CONTROL_PREFIX}{n}" for n in names]

    def _refusal(self, request: HTTPRequest) -> tuple[int, str] | None:
        """The status and reason a request may not control this server with (``None``:
        it may)."""
        host = urlsplit(f"//{request.header('host') or ''}").hostname or ""
        if not self.allow_remote and not _loopback(host):
            return 403, (
                f"the control API answers requests addressed to a loopback host only "
                f"(127.0.0.1, ::1, localhost), not {host or 'no host'!r}; "
                "use http://127.0.0.1:PORT"
            )
        origin = request.header("origin")
        if origin and not _loopback(urlsplit(origin).hostname or ""):
            return 403, "the control API refuses requests a browser sends from a web page (Origin)"
        if (request.header("sec-fetch-site") or "").lower() in ("cross-site", "same-site"):
            return 403, "the control API refuses requests a browser sends from another site"
        if request.method == "POST":
            kind = (request.header("content-type") or "").split(";")[0].strip().lower()
            if kind != "application/json":
                return 415, (
                    "a control request's body is JSON: send it with content-type: application/json"
                )
        return None

    def _do(self, name: str, request: HTTPRequest) -> dict[str, Any]:
        """Do what ``name`` says with the request's JSON body; what to answer."""
        body = parse_body(request.content) if request.method == "POST" else {}
        if name == "log":
            return self.log()
        if name == "reset":
            take_options(body, {})
            self.reset()
            return {"ok": True}
        fake = self.fake
        assert fake is not None
        if name == "wait_blocked":
            return {"blocked": self._wait_blocked(fake, body)}
        return _FAKE_ACTIONS[name](fake, body)

    def _wait_blocked(self, fake: FakeModel, body: Mapping[str, Any]) -> bool:
        """Whether a call is held within the timeout, or before the server stops."""
        timeout = take_options(body, {"timeout": (int, float)}).get("timeout")
        timeout = 5.0 if timeout is None else float(timeout)
        if not 0 <= timeout <= MAX_WAIT:
            raise ControlRequestError(
                f"timeout: seconds from 0 to {MAX_WAIT:g}, got {timeout:g}", field="timeout"
            )
        deadline = time.monotonic() + timeout
        while not self.stop.is_set():
            left = deadline - time.monotonic()
            if fake.wait_blocked(max(0.0, min(left, _WAIT_SLICE))) or left <= 0:
                return fake.wait_blocked(0)
        return False


def _script(fake: FakeModel, body: Mapping[str, Any]) -> dict[str, Any]:
    replies = take_options(body, {"replies": list}).get("replies")
    if replies is None:
        raise ControlRequestError(
            'replies: required, the replies to append, such as ["Hello", '
            '{"text": "Hi", "fault": {"kind": "cut", "after_events": 2}}]',
            field="replies",
        )
    fake.script(*[reply_of(item, f"replies[{n}]") for n, item in enumerate(replies)])
    return {"ok": True, "remaining": len(fake.remaining)}


def _fault(body: Mapping[str, Any]) -> Any:
    value = take_options(body, {"fault": dict}).get("fault")
    if value is None:
        raise ControlRequestError(
            'fault: required, such as {"kind": "http", "status": 429, "retry_after": 1}',
            field="fault",
        )
    return fault_of(value, "fault")


def _inject(fake: FakeModel, body: Mapping[str, Any]) -> dict[str, Any]:
    fake.inject(_fault(body))
    return {"ok": True}


def _fail_with(fake: FakeModel, body: Mapping[str, Any]) -> dict[str, Any]:
    fake.fail_with(_fault(body))
    return {"ok": True}


def _count(options: Mapping[str, Any], name: str, least: int) -> int | None:
    value = options.get(name)
    if value is not None and value < least:
        raise ControlRequestError(f"{name}: must be >= {least}, got {value}", field=name)
    return value if value is None else int(value)


def _interrupt(fake: FakeModel, body: Mapping[str, Any]) -> dict[str, Any]:
    options = take_options(body, {"after_events": int, "times": int})
    times = _count(options, "times", 1)
    fake.interrupt(after_events=_count(options, "after_events", 0), times=times or 1)
    return {"ok": True}


def _block(fake: FakeModel, body: Mapping[str, Any]) -> dict[str, Any]:
    options = take_options(body, {"after_events": int})
    fake.block(after_events=_count(options, "after_events", 0))
    return {"ok": True}


def _release(fake: FakeModel, body: Mapping[str, Any]) -> dict[str, Any]:
    take_options(body, {})
    fake.release()
    return {"ok": True}


_FAKE_ACTIONS: dict[str, Callable[[FakeModel, Mapping[str, Any]], dict[str, Any]]] = {
    "script": _script,
    "inject": _inject,
    "interrupt": _interrupt,
    "fail_with": _fail_with,
    "block": _block,
    "release": _release,
}


@dataclass
class Controlled:
    """A server's handler with the control API in front: requests under
    :data:`CONTROL_PREFIX` go to ``api``, every other one to ``inner``."""

    api: ControlAPI
    inner: Handler

    def claims(self, request: HTTPRequest) -> bool:
        return is_control(request.path) or self.inner.claims(request)

    def respond(self, request: HTTPRequest) -> Playback | Deferred:
        if is_control(request.path):
            return self.api.respond(request)
        return self.inner.respond(request)

    async def respond_async(self, request: HTTPRequest) -> Playback | Deferred:
        if is_control(request.path):
            return self.api.respond(request)
        return await self.inner.respond_async(request)


def _loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _json(status: int, body: Any) -> Playback:
    data = json.dumps(body, ensure_ascii=False).encode()
    headers = [
        ("content-type", "application/json"),
        ("content-length", str(len(data))),
        ("cache-control", "no-store"),
    ]
    return Playback(status=status, headers=headers, events=[data])


def _error(
    status: int, message: str, *, field_name: str | None = None, allow: str | None = None
) -> Playback:
    error: dict[str, Any] = {"type": "agentreplay_control_error", "message": message}
    if field_name is not None:
        error["field"] = field_name
    playback = _json(status, {"error": error})
    if allow is not None:
        playback.headers.append(("allow", allow))
    return playback
