"""The ``agentreplay`` fixture's object: one test's view of its cassette."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..transport.router import Router
from .calls import ReplayedCall
from .cassette import Interaction
from .session import CassetteSession

if TYPE_CHECKING:
    from ..neutral import Fault
    from ..redact.scrubber import Scrubber

__all__ = ["AgentReplay"]


class AgentReplay:
    """The per-test cassette handle.

    ``path`` and ``record_mode`` say which cassette and how; ``interactions`` are
    the recorded ones loaded from it (the :class:`~.cassette.Interaction` objects replay
    plays); ``calls`` the
    requests this test made so far (answered from the cassette, or live and
    recorded); ``recorded`` the new interactions; ``unplayed`` the indexes of
    recorded interactions not played yet; ``live_calls`` / ``blocked`` are the egress
    ledger; ``scrubber`` is what this session writes cassettes with. ``inject`` makes
    a replayed call fail with a :class:`~..neutral.Fault` instead of playing as recorded.
    """

    def __init__(self, session: CassetteSession, router: Router) -> None:
        self._session = session
        self._router = router

    @property
    def path(self) -> Path:
        return self._session.path

    @property
    def record_mode(self) -> str:
        return self._session.record_mode

    @property
    def interactions(self) -> list[Interaction]:
        return list(self._session.interactions)

    @property
    def calls(self) -> list[ReplayedCall]:
        """The calls that ended so far, in the order they were made (``index``)."""
        return sorted(self._session.calls, key=lambda c: c.index)

    @property
    def recorded(self) -> list[Interaction]:
        return self._session.new_interactions

    @property
    def unplayed(self) -> list[int]:
        return self._session.unplayed

    @property
    def live_calls(self) -> list[str]:
        return list(self._router.live_calls)

    @property
    def blocked(self) -> list[str]:
        return list(self._router.blocked)

    @property
    def scrubber(self) -> Scrubber:
        """The scrubber every write of this session goes through: the default rules
        plus what ``pytest_agentreplay_configure`` added. A test can check the
        project's rules with it (``scrub_interaction``, ``mask``) without recording."""
        return self._session.scrubber

    def inject(self, fault: Fault, *, at_call: int = 0) -> None:
        """Make the ``at_call``-th call answered from the cassette (0-based) fail with
        ``fault``: ``agentreplay.inject(Fault.cut(after_events=5), at_call=0)``.

        ``Fault.http``, ``cut``, ``error_event``, ``timeout`` and ``empty`` can be
        injected (``stall`` raises ``ValueError``). A retry of the failed call — the
        same request again — is answered by the recording."""
        self._session.inject(fault, at_call)

    def __repr__(self) -> str:
        return (
            f"<AgentReplay {self.path} mode={self.record_mode} "
            f"interactions={len(self._session.interactions)}>"
        )
