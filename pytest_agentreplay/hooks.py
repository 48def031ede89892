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

__all__ = ["accept_recording_hook", "pytest_agentreplay_configure"]


@pytest.hookspec
def pytest_agentreplay_configure(config: pytest.Config, settings: AgentReplaySettings) -> None:
    """Customize pytest-agentreplay for the session: scrubbers, matchers, defaults."""


class _RecordingHookspec:
    """pytest-recording's hook, declared when pytest-recording is not installed: a
    ``pytest_recording_configure`` left in a conftest stopped pytest with "unknown
    hook" after the migration (issue 20)."""

    @pytest.hookspec
    def pytest_recording_configure(self, config: pytest.Config, vcr: object) -> None:
        """pytest-recording's configure hook (not called by pytest-agentreplay)."""


def accept_recording_hook(config: pytest.Config) -> None:
    """Declare ``pytest_recording_configure`` unless pytest-recording did (declaring it
    twice is an error), and warn once it is left in a conftest: nothing calls it.

    Runs at configure time, before pytest checks conftests for unknown hooks (after
    collection); pytest-recording, when installed, declared it earlier.
    """
    caller = getattr(config.pluginmanager.hook, "pytest_recording_configure", None)
    if caller is not None and caller.has_spec():
        return
    config.pluginmanager.add_hookspecs(_RecordingHookspec)
    caller = config.pluginmanager.hook.pytest_recording_configure
    if caller.get_hookimpls():
        _warn_unused(config)


def _warn_unused(config: pytest.Config) -> None:
    message = (
        "pytest_recording_configure(config, vcr) is pytest-recording's hook and is not "
        "called: move its settings to pytest_agentreplay_configure(config, settings) "
        "(see the migration guide)"
    )
    config.issue_config_time_warning(pytest.PytestConfigWarning(message), stacklevel=2)
