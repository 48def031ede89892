"""Record and replay clients that are not httpx-family (requests, urllib3, aiohttp)
through vcrpy, into the same cassette, under the same marker.

This is the bridge only (vcrpy's persister and patching); converting between
vcrpy's objects and ours is :mod:`.formats.vcrpy`'s.

httpx and httpx2 are teed by the plugin itself (streams stay streams); vcrpy is
asked to skip them (``skip_patchers``) and to handle everything else. Its cassette
I/O goes through :class:`SessionPersister`, which hands vcrpy the interactions of
our cassette and takes back the ones it recorded, so one file holds both and
every write still goes through the scrubbing and atomic save of the session.

vcrpy is optional: without it, such clients are blocked in replay (by the socket
guard) and go out unrecorded in record modes, with a warning.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

# The format conversions are imported when vcrpy is really used: the plugin asks this
# module on every test whether vcrpy is wanted.
if TYPE_CHECKING:
    from .session import CassetteSession

__all__ = [
    "CLIENT_MODULES",
    "SKIPPED_HINT",
    "SessionPersister",
    "available",
    "clients_imported",
    "vcr_cassette",
]

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
    return any(name in sys.modules for name in CLIENT_MODULES)


class SessionPersister:
    """vcrpy's persister for one test: reads from and writes to the session."""

    def __init__(self, session: CassetteSession) -> None:
        self._session: CassetteSession | None = session
        self.loaded = 0

    @property
    def session(self) -> CassetteSession:
        if self._session is None:
            raise RuntimeError("pytest-agentreplay: vcrpy used the cassette of a finished test")
        return self._session

    def release(self) -> None:
        """Let go of the session once the test's vcrpy cassette is closed (see
        :func:`vcr_cassette`)."""
        self._session = None

    def load_cassette(self, cassette_path: str, serializer: Any) -> tuple[list[Any], list[Any]]:
        from vcr.persisters.filesystem import CassetteNotFoundError

        from .formats.vcrpy import to_vcr

        if not self.session.existed or self.session.record_mode == "rewrite":
            raise CassetteNotFoundError()
        pairs = [to_vcr(i) for i in self.session.interactions]
        self.loaded = len(pairs)
        return [p[0] for p in pairs], [p[1] for p in pairs]

    def save_cassette(
        self, cassette_path: str, cassette_dict: dict[str, Any], serializer: Any
    ) -> None:
        from .formats.vcrpy import from_vcr

        new = zip(
            cassette_dict["requests"][self.loaded :],
            cassette_dict["responses"][self.loaded :],
            strict=True,
        )
        for request, response in new:
            self.session.add_recorded(from_vcr(request, response))


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
def vcr_cassette(session: CassetteSession) -> Iterator[None]:
    """vcrpy active for the test's non-httpx clients, on the session's cassette."""
    import vcr

    recorder = vcr.VCR(
        record_mode=_MODES[session.record_mode],
        match_on=("method", "scheme", "host", "path", "query", "body"),  # as ours: no port
        skip_patchers=("httpx", "httpx2", *_not_installed()),
        decode_compressed_response=True,
    )
    persister = SessionPersister(session)
    recorder.register_persister(persister)
    cassette: Any = None
    try:
        with recorder.use_cassette(str(session.path)) as cassette:
            _miss_like_httpx(cassette, session)
            yield
    finally:
        _let_go(cassette, persister)


def _let_go(cassette: Any, persister: SessionPersister) -> None:
    """Cut what links vcrpy's cassette to ours once the test is done with it.

    vcrpy builds connection classes for every cassette, which refer to it: classes
    are always in reference cycles, so its cassette lives until the cyclic collector
    runs (a gen-2 pass, rare in a long run). It held our session (through the
    persister and the miss hook) and a copy of every interaction: a suite replaying
    big cassettes kept them all (issue 18, item 20: found because langsmith's pytest
    plugin imports requests, which switches vcrpy on in ``auto``)."""
    persister.release()
    if cassette is not None:
        vars(cassette).pop("filter_request", None)  # our hook: back to vcrpy's method
        data = getattr(cassette, "data", None)
        if isinstance(data, list):
            data.clear()  # vcrpy's copy of the interactions, already saved


def _miss_like_httpx(cassette: Any, session: CassetteSession) -> None:
    """Make a request vcrpy cannot play back in replay fail as an httpx one does.

    vcrpy raises its ``CannotOverwriteExistingCassetteException``, an ``Exception``
    that agent code's ``except Exception`` (or a retry loop) swallows, and that names
    neither the test nor the closest recorded request. vcrpy asks
    ``cassette.filter_request`` exactly there — write-protected, nothing to play — so
    answering it with the session's :class:`~.session.CassetteMiss` (a
    ``BaseException`` naming the test, with the usual diagnosis) fails the test at once.
    """
    from .formats.vcrpy import vcr_request

    original = cassette.filter_request

    def filter_or_refuse(request: Any) -> Any:
        if cassette.write_protected:
            raise session.refuse(vcr_request(request))
        return original(request)

    cassette.filter_request = filter_or_refuse
