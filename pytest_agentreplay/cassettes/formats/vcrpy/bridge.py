"""Record and replay clients the plugin does not hook itself (requests, urllib3,
aiohttp before 3.12) through vcrpy, into the same cassette, under the same marker.

This is the bridge only (vcrpy's persister and patching); converting between
vcrpy's objects and ours is :mod:`.objects`'s. It drives the test's cassette session
through the few methods of :class:`BridgedSession` (the session plays, refuses and
stores; the bridge knows no more of it).

httpx, httpx2 and aiohttp (3.12+) are teed by the plugin itself (streams stay
streams); vcrpy is asked to skip them (``skip_patchers``) and to handle everything
else. Its cassette I/O goes through :class:`SessionPersister`, which hands vcrpy the
interactions of our cassette and takes back the ones it recorded, so one file holds
both and every write still goes through the scrubbing and atomic save of the session.

vcrpy is optional: without it, such clients are blocked in replay (by the socket
guard) and go out unrecorded in record modes, with a warning. An installed vcrpy older
than :data:`VCRPY_FLOOR` is refused up front with what to install
(:func:`require_vcrpy`): the first release with ``skip_patchers`` is 9.4.2, and older
ones failed every test with a ``TypeError`` from ``VCR()`` (issue 26).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .errors import UnrecordableRequestError, VcrpyVersionError
from .objects import from_vcr, to_vcr, vcr_request

if TYPE_CHECKING:
    from ...cassette import Interaction, RecordedRequest

__all__ = [
    "CLIENT_MODULES",
    "SKIPPED_HINT",
    "VCRPY_FLOOR",
    "BridgedSession",
    "SessionPersister",
    "available",
    "clients_imported",
    "require_vcrpy",
    "too_old",
    "vcr_cassette",
]

VCRPY_FLOOR = "9.4.2"
"""The oldest vcrpy the bridge and vcrpy's filter options work with, found by running
the vcrpy-facing tests on each release from 8.2.0 (docs/migrating.md, issue 26):
``skip_patchers`` (which keeps vcrpy off the clients the plugin hooks itself) and
``replace_body_parameters(recursive=)`` (``filter_nested_post_data_parameters``)
first came in 9.4.2; 8.2.x also lacks urllib3 2's ``response.json()`` on replay."""


class BridgedSession(Protocol):
    """What the bridge asks of a test's cassette session
    (:class:`~...session.CassetteSession` is one)."""

    path: Path
    record_mode: str
    existed: bool
    errors: list[str]

    def play_whole(self, request: RecordedRequest) -> Interaction | None:
        """The recorded interaction that answers ``request`` (marked played)."""
        ...

    def refuse(self, request: RecordedRequest) -> BaseException | None:
        """The failure for ``request`` that nothing may answer (``None``: let it go)."""
        ...

    def add_recorded(self, interaction: Interaction) -> None:
        """Keep an interaction vcrpy recorded, to be written with the others."""
        ...


# Our record modes in vcrpy's words; "rewrite" loads nothing, so "all" records afresh.
_MODES = {
    "none": "none",
    "once": "once",
    "new_episodes": "new_episodes",
    "all": "all",
    "rewrite": "all",
}


@functools.cache
def available() -> bool:
    """Whether vcrpy is installed (asked once: a search of ``sys.path`` each test is
    measurable)."""
    return importlib.util.find_spec("vcr") is not None


def installed_version() -> str | None:
    """The installed vcrpy's version (``None``: its metadata is missing)."""
    import importlib.metadata  # about 12 ms: only once vcrpy is used (io imports this module)

    try:
        return importlib.metadata.version("vcrpy")
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.cache
def too_old() -> str | None:
    """Why the installed vcrpy cannot be used, or ``None`` when it can (asked once)."""
    from packaging.version import InvalidVersion, Version  # pytest's own dependency

    installed = installed_version()
    try:
        if installed is not None and Version(installed) >= Version(VCRPY_FLOOR):
            return None
    except InvalidVersion:
        pass
    python = (
        f" (vcrpy {VCRPY_FLOOR} needs Python 3.11 or newer: on this Python, set "
        f"agentreplay_vcr = never in the ini file and drop vcrpy's filter keys)"
        if sys.version_info < (3, 11)
        else ""
    )
    return (
        f"pytest-agentreplay needs vcrpy {VCRPY_FLOOR} or newer to record and replay "
        f"requests, urllib3 and aiohttp clients and to run vcrpy's filter options, and "
        f"vcrpy {installed or '(version unknown)'} is installed: "
        f"pip install 'vcrpy>={VCRPY_FLOOR}'{python}"
    )


def require_vcrpy() -> None:
    """Raise :class:`VcrpyVersionError` when the installed vcrpy is too old."""
    problem = too_old()
    if problem is not None:
        raise VcrpyVersionError(problem)


CLIENT_MODULES = ("requests", "urllib3", "aiohttp", "httplib2", "tornado", "botocore", "boto3")
"""The client libraries vcrpy patches for us (besides ``http.client``)."""

SKIPPED_HINT = (
    "(vcrpy was not switched on for this test: none of requests, urllib3, aiohttp... "
    "was imported when it started. If the call comes from one of them, imported inside "
    "the test, set agentreplay_vcr = always in the ini file.)"
)


def clients_imported() -> bool:
    """Whether a client library vcrpy serves is imported: replay needs vcrpy's
    patches only then (``agentreplay_vcr = auto``)."""
    skipped = _served_natively()
    return any(name in sys.modules for name in CLIENT_MODULES if name not in skipped)


@functools.cache
def _served_natively() -> tuple[str, ...]:
    """Client libraries the plugin hooks itself (streams stay streams), which vcrpy
    must leave alone: aiohttp 3.12+ (issue 19; one request must be seen once)."""
    from ....transport import aio_version

    return ("aiohttp",) if aio_version.supported() else ()


class SessionPersister:
    """vcrpy's persister for one test: reads from and writes to the session.

    vcrpy is told the cassette exists (so ``once`` is write-protected, as ours) but is
    handed none of its interactions: the session plays them (:func:`_play_from_session`),
    matched exactly as httpx requests are. What vcrpy records is all new.
    """

    def __init__(self, session: BridgedSession) -> None:
        self._session: BridgedSession | None = session

    @property
    def session(self) -> BridgedSession:
        if self._session is None:
            raise RuntimeError("pytest-agentreplay: vcrpy used the cassette of a finished test")
        return self._session

    def release(self) -> None:
        """Let go of the session once the test's vcrpy cassette is closed (see
        :func:`vcr_cassette`)."""
        self._session = None

    def load_cassette(self, cassette_path: str, serializer: Any) -> tuple[list[Any], list[Any]]:
        from vcr.persisters.filesystem import CassetteNotFoundError

        if not self.session.existed or self.session.record_mode == "rewrite":
            raise CassetteNotFoundError()
        return [], []

    def save_cassette(
        self, cassette_path: str, cassette_dict: dict[str, Any], serializer: Any
    ) -> None:
        pairs = zip(cassette_dict["requests"], cassette_dict["responses"], strict=True)
        for request, response in pairs:
            try:
                self.session.add_recorded(from_vcr(request, response))
            except UnrecordableRequestError as exc:  # fails the write, naming the request
                self.session.errors.append(f"{request.method} {request.uri}: {exc}")


# vcrpy's patcher groups and the module each one imports; a group whose module is not
# installed patches nothing, but vcrpy retries (and fails) its import for every cassette.
_PATCHED_MODULES = {
    "requests": "requests",
    "boto3": "botocore",
    "urllib3": "urllib3",
    "httplib2": "httplib2",
    "tornado": "tornado",
    "aiohttp": "aiohttp",
}


@functools.cache
def _not_installed() -> tuple[str, ...]:
    """vcrpy patcher groups with nothing to patch here (their library is not installed)."""
    return tuple(g for g, m in _PATCHED_MODULES.items() if importlib.util.find_spec(m) is None)


@contextlib.contextmanager
def vcr_cassette(session: BridgedSession) -> Iterator[None]:
    """vcrpy active for the test's non-httpx clients, on the session's cassette.

    :class:`VcrpyVersionError` when the installed vcrpy is older than
    :data:`VCRPY_FLOOR`, before vcrpy is asked anything."""
    require_vcrpy()
    import vcr

    recorder = vcr.VCR(
        record_mode=_MODES[session.record_mode],
        skip_patchers=("httpx", "httpx2", *_served_natively(), *_not_installed()),
        decode_compressed_response=True,
    )
    persister = SessionPersister(session)
    recorder.register_persister(persister)
    cassette: Any = None
    try:
        with recorder.use_cassette(str(session.path)) as cassette:
            _play_from_session(cassette, session)
            _miss_like_httpx(cassette, session)
            yield
    finally:
        _let_go(cassette, persister)


def _let_go(cassette: Any, persister: SessionPersister) -> None:
    """Cut what links vcrpy's cassette to ours once the test is done with it.

    vcrpy builds connection classes for every cassette, which refer to it: classes
    are always in reference cycles, so its cassette lives until the cyclic collector
    runs (a gen-2 pass, rare in a long run). It held our session (through the
    persister and our hooks) and a copy of every interaction: a suite replaying
    big cassettes kept them all (issue 18, item 20: found because langsmith's pytest
    plugin imports requests, which switches vcrpy on in ``auto``)."""
    persister.release()
    if cassette is not None:
        for hook in ("filter_request", "can_play_response_for", "play_response"):
            vars(cassette).pop(hook, None)  # ours: back to vcrpy's methods
        data = getattr(cassette, "data", None)
        if isinstance(data, list):
            data.clear()  # vcrpy's copy of the interactions, already saved


def _play_from_session(cassette: Any, session: BridgedSession) -> None:
    """Let the session decide what vcrpy plays: the same index, matched on the same
    ``match_on``, with the live request scrubbed exactly as the recorded ones were.

    vcrpy matched the raw request against the scrubbed recording, so a request with a
    secret in its query or JSON body never matched its own recording (the miss said it
    "was consumed ... recorded 0 times"), nor did a request vcrpy answered count as
    played (issue 18). vcrpy asks ``can_play_response_for`` and then ``play_response``
    with the same request object; the interaction taken for it is kept in between.
    """
    from vcr.errors import UnhandledHTTPRequestError

    taken: dict[int, tuple[Any, dict[str, Any]]] = {}

    def take(request: Any) -> dict[str, Any] | None:
        interaction = session.play_whole(vcr_request(request))
        return None if interaction is None else to_vcr(interaction)[1]

    def can_play_response_for(request: Any) -> bool:
        response = take(request)
        if response is not None:
            taken[id(request)] = (request, response)  # the request kept: its id stays its own
        return response is not None

    def play_response(request: Any) -> dict[str, Any]:
        kept = taken.pop(id(request), None)
        response = kept[1] if kept is not None else take(request)  # aiohttp's redirects
        if response is None:
            raise UnhandledHTTPRequestError(f"the cassette has no response for {request!r}")
        return response

    cassette.can_play_response_for = can_play_response_for
    cassette.play_response = play_response


def _miss_like_httpx(cassette: Any, session: BridgedSession) -> None:
    """Make a request vcrpy cannot play back in replay fail as an httpx one does.

    vcrpy raises its ``CannotOverwriteExistingCassetteException``, an ``Exception``
    that agent code's ``except Exception`` (or a retry loop) swallows, and that names
    neither the test nor the closest recorded request. vcrpy asks
    ``cassette.filter_request`` exactly there — write-protected, nothing to play — so
    answering it with the session's :class:`~...miss.CassetteMiss` (a
    ``BaseException`` naming the test, with the usual diagnosis) fails the test at once.
    """
    original = cassette.filter_request

    def filter_or_refuse(request: Any) -> Any:
        if cassette.write_protected:
            miss = session.refuse(vcr_request(request))
            if miss is None:
                return None  # skipped by vcrpy's filters: vcrpy lets it go, to our egress rules
            raise miss
        return original(request)

    cassette.filter_request = filter_or_refuse
