"""pytest-recording's ``vcr`` fixture, answered from the ``agentreplay`` handle.

Tests written for pytest-recording read the cassette through ``vcr``:
``vcr.requests[i].body``, ``vcr.play_count``, ``vcr.record_mode``, ``len(vcr)``,
``vcr.all_played``. 34 of the 245 tests of the suite issue 20 measured did, and a
rename could not carry them over. :class:`VcrCassette` gives the same names over the
handle, with vcrpy's types (a body is bytes, or ``None`` when empty; headers are
looked up in any case), so those assertions keep passing unchanged.

pytest-recording's ``vcr`` is vcrpy's ``Cassette`` in a test with its marker and
``None`` in any other, and suites rely on both: pydantic-ai's autouse fixtures take
``vcr`` in every test, return early on ``None``, and read ``vcr._path``,
``vcr.play_counts`` and ``vcr.all_played`` (issue 26). So here too ``vcr`` is
``None`` unless the test has the ``agentreplay`` marker (the renamed ``vcr`` marker):
asking for ``vcr`` puts no test under a cassette, nor opens a test's cassette early
(a test taking the ``agentreplay`` fixture after a fixture that writes its cassette
would miss it, opened by an autouse fixture taking ``vcr``). With pytest-recording
active too (a suite migrated test by test), ``vcr`` is pytest-recording's in its tests
and ours in ours (:class:`VcrBesidePytestRecording`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import pytest

if TYPE_CHECKING:
    from ...cassettes.cassette import Interaction, RecordedRequest
    from ...cassettes.handle import AgentReplay

__all__ = ["VcrBesidePytestRecording", "VcrCassette", "VcrFixture", "VcrRequest"]


class _Headers(dict[str, str]):
    """Header values looked up by name in any case, as vcrpy's ``HeadersDict``."""

    def __getitem__(self, name: str) -> str:
        for key, value in self.items():
            if key.lower() == name.lower():
                return value
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and any(k.lower() == name.lower() for k in self)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default


@dataclass(frozen=True)
class VcrRequest:
    """A recorded request as vcrpy's ``Request`` shows it."""

    method: str
    uri: str
    body: bytes | None
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, request: RecordedRequest) -> VcrRequest:
        body = request.content() or None
        return cls(request.method, request.url, body, _Headers(request.headers))

    @property
    def url(self) -> str:
        return self.uri

    @property
    def scheme(self) -> str:
        return urlsplit(self.uri).scheme

    @property
    def host(self) -> str:
        return urlsplit(self.uri).hostname or ""

    @property
    def port(self) -> int | None:
        parts = urlsplit(self.uri)
        return parts.port or {"http": 80, "https": 443}.get(parts.scheme)

    @property
    def path(self) -> str:
        return urlsplit(self.uri).path

    @property
    def query(self) -> list[tuple[str, str]]:
        """The query parameters, sorted (vcrpy's form)."""
        return sorted(parse_qsl(urlsplit(self.uri).query))


class VcrCassette:
    """What a pytest-recording test reads from ``vcr``, over the ``agentreplay`` handle.

    ``requests`` / ``responses`` are the cassette's interactions (those loaded, then
    those recorded by this test; ``rewrite`` starts empty as vcrpy's ``new`` cassette),
    ``play_counts`` how many times each was answered from the cassette (by index),
    ``play_count`` their sum, ``all_played`` whether each one was (vcrpy's rule: an
    interaction recorded by this test is not played), ``record_mode`` the mode's
    name, ``path`` (and vcrpy's private ``_path``) the cassette's path as a string.
    ``agentreplay`` is the handle itself, for everything else.
    """

    def __init__(self, handle: AgentReplay) -> None:
        self.agentreplay = handle

    def _interactions(self) -> list[Interaction]:
        loaded = [] if self.record_mode == "rewrite" else self.agentreplay.interactions
        return [*loaded, *self.agentreplay.recorded]

    @property
    def record_mode(self) -> str:
        return self.agentreplay.record_mode

    @property
    def path(self) -> str:
        """The cassette's path, a string as vcrpy's (``Path(vcr.path)`` for a path)."""
        return str(self.agentreplay.path)

    @property
    def _path(self) -> str:
        """vcrpy's private name for :attr:`path`, which suites read (pydantic-ai does)."""
        return self.path

    @property
    def requests(self) -> list[VcrRequest]:
        return [VcrRequest.of(i.request) for i in self._interactions()]

    @property
    def responses(self) -> list[dict[str, Any]]:
        """Responses as vcrpy's dicts: ``status``, ``headers`` (lists), ``body.string``."""
        # registered at configure time: cassette modules load when a test reads this
        from ...cassettes.formats.vcrpy import vcr_response  # noqa: PLC0415

        return [vcr_response(i.response) for i in self._interactions()]

    @property
    def data(self) -> list[tuple[VcrRequest, dict[str, Any]]]:
        return list(zip(self.requests, self.responses, strict=True))

    @property
    def play_counts(self) -> Counter[int]:
        """How many times each interaction was played, by its index in ``data``
        (vcrpy's ``Counter``: an interaction never played is absent)."""
        return Counter(
            call.interaction
            for call in self.agentreplay.calls
            if call.source == "cassette" and call.interaction is not None
        )

    @property
    def play_count(self) -> int:
        return sum(self.play_counts.values())

    @property
    def all_played(self) -> bool:
        """vcrpy's rule: every interaction of ``data`` was played at least once."""
        return len(self.play_counts) == len(self)

    @property
    def write_protected(self) -> bool:
        return self.record_mode == "none" or (
            self.record_mode == "once" and bool(self.agentreplay.interactions)
        )

    def __len__(self) -> int:
        return len(self._interactions())

    def __repr__(self) -> str:
        return f"<VcrCassette over {self.agentreplay!r}>"


def _cassette(request: pytest.FixtureRequest) -> VcrCassette | None:
    """The test's cassette as vcrpy shows it, when the test has the ``agentreplay``
    marker (whose fixture opens the cassette anyway); ``None`` otherwise."""
    if request.node.get_closest_marker("agentreplay") is None:
        return None
    return VcrCassette(request.getfixturevalue("agentreplay"))


class VcrFixture:
    """The plugin object holding the ``vcr`` fixture (see the module docs), registered
    when pytest-recording is not active."""

    @pytest.fixture
    def vcr(self, request: pytest.FixtureRequest) -> VcrCassette | None:
        """pytest-recording's ``vcr`` fixture: the cassette as vcrpy shows it, in a test
        with the ``agentreplay`` marker; ``None`` in any other, as pytest-recording's
        is in a test without its marker."""
        return _cassette(request)


class VcrBesidePytestRecording:
    """The ``vcr`` fixture when pytest-recording is active too, as in a suite migrated
    test by test: pytest-recording's own in a test with its ``vcr`` marker (or without
    either marker), ours in a test with the ``agentreplay`` marker.

    Registered after pytest-recording, so it overrides pytest-recording's ``vcr`` (an
    autouse fixture) and receives it by asking for its own name: pytest-recording
    still installs its cassette in each of its tests. Without this, a migrated test
    reading ``vcr.requests`` got pytest-recording's ``None`` (issue 26)."""

    @pytest.fixture
    def vcr(self, request: pytest.FixtureRequest, vcr: Any) -> Any:
        """pytest-recording's ``vcr``, or ours in a test of this plugin's."""
        if request.node.get_closest_marker("vcr") is not None:
            return vcr
        ours = _cassette(request)
        return vcr if ours is None else ours
