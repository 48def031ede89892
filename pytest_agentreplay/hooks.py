"""Extension points: the ``pytest_agentreplay_configure`` hookspec.

Implement the hook in a ``conftest.py`` (or a plugin) to add scrubbing rules and
request matchers for the whole session::

    def pytest_agentreplay_configure(config, settings):
        settings.redact_headers.add("x-internal-token")
        settings.scrubbers.append(drop_trace_ids)
        settings.matchers["tenant"] = lambda request: request.headers.get("x-tenant")

The hook runs once, at configure time, before any test. ``settings`` is the
session's :class:`~pytest_agentreplay.harness.settings.AgentReplaySettings`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .harness.settings import AgentReplaySettings

__all__ = ["pytest_agentreplay_configure"]


@pytest.hookspec
def pytest_agentreplay_configure(config: pytest.Config, settings: AgentReplaySettings) -> None:
    """Customize pytest-agentreplay for the session: scrubbers, matchers, defaults."""
