"""Extension points: the ``pytest_agentreplay_configure`` hook and what it can change.

Implement the hook in a ``conftest.py`` (or a plugin) to add scrubbing rules and
request matchers for the whole session::

    def pytest_agentreplay_configure(config, settings):
        settings.redact_headers.add("x-internal-token")
        settings.scrubbers.append(drop_trace_ids)
        settings.matchers["tenant"] = lambda request: request.headers.get("x-tenant")

The hook runs once, at configure time, before any test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .cassettes.model import Interaction, RecordedRequest

__all__ = ["AgentReplaySettings", "pytest_agentreplay_configure"]


@dataclass
class AgentReplaySettings:
    """Session-wide settings the configure hook may change.

    ``redact_headers`` / ``redact_query_params`` / ``redact_body_keys`` extend the
    default scrubbing rules; ``scrubbers`` run after them on every interaction
    written; ``matchers`` add named key parts usable in ``match_on``
    (a matcher maps a recorded request to a hashable value); ``match_on`` is the
    default for tests whose marker does not set one; ``pace`` replays streams at
    their recorded timing times ``pace`` (``None``: as fast as read);
    ``chunking`` re-chunks replayed streams; ``max_body_bytes`` caps recording.
    """

    redact_headers: set[str] = field(default_factory=set)
    redact_query_params: set[str] = field(default_factory=set)
    redact_body_keys: set[str] = field(default_factory=set)
    scrubbers: list[Callable[[Interaction], Interaction]] = field(default_factory=list)
    matchers: dict[str, Callable[[RecordedRequest], Any]] = field(default_factory=dict)
    match_on: tuple[str, ...] | None = None
    pace: float | None = None
    chunking: Any = "event"
    max_body_bytes: int = 64 * 1024 * 1024
    save_on_failure: bool = False


@pytest.hookspec
def pytest_agentreplay_configure(config: pytest.Config, settings: AgentReplaySettings) -> None:
    """Customize pytest-agentreplay for the session: scrubbers, matchers, defaults."""
