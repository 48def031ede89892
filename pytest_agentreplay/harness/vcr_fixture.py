"""pytest-recording's ``vcr`` fixture, answered from the ``agentreplay`` handle.

Tests written for pytest-recording read the cassette through ``vcr``:
``vcr.requests[i].body``, ``vcr.play_count``, ``vcr.record_mode``, ``len(vcr)``,
``vcr.all_played``. 34 of the 245 tests of the suite issue 20 measured did, and a
rename could not carry them over. :class:`VcrCassette` gives the same names over the
handle, with vcrpy's types (a body is bytes, or ``None`` when empty; headers are
looked up in any case), so those assertions keep passing unchanged. The fixture is
registered only when pytest-recording is not (its own ``vcr`` wins then).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import pytest

if TYPE_CHECKING:
    from ..cassettes.handle import AgentReplay
    from ..cassettes.model import Interaction, RecordedRequest

__all__ = ["VcrCassette", "VcrFixture", "VcrRequest"]


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
    ``play_count`` how many were answered from the cassette, ``all_played`` whether
    every loaded one was, ``record_mode`` the mode's name. ``agentreplay`` is the
    handle itself, for everything else.
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
    def requests(self) -> list[VcrRequest]:
        return [VcrRequest.of(i.request) for i in self._interactions()]

    @property
    def responses(self) -> list[dict[str, Any]]:
        """Responses as vcrpy's dicts: ``status``, ``headers`` (lists), ``body.string``."""
        # registered at configure time: cassette modules load when a test reads this
        from ..cassettes.formats.vcrpy import vcr_response  # noqa: PLC0415

        return [vcr_response(i.response) for i in self._interactions()]

    @property
    def data(self) -> list[tuple[VcrRequest, dict[str, Any]]]:
        return list(zip(self.requests, self.responses, strict=True))

    @property
    def play_count(self) -> int:
        return sum(call.source == "cassette" for call in self.agentreplay.calls)

    @property
    def all_played(self) -> bool:
        return not self.agentreplay.unplayed

    @property
    def write_protected(self) -> bool:
        return self.record_mode == "none" or (
            self.record_mode == "once" and bool(self.agentreplay.interactions)
        )

    def __len__(self) -> int:
        return len(self._interactions())

    def __repr__(self) -> str:
        return f"<VcrCassette over {self.agentreplay!r}>"


class VcrFixture:
    """The plugin object holding the ``vcr`` fixture (see the module docs)."""

    @pytest.fixture
    def vcr(self, agentreplay: AgentReplay) -> VcrCassette:
        """pytest-recording's ``vcr`` fixture: the cassette as vcrpy shows it."""
        return VcrCassette(agentreplay)
