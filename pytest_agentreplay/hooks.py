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

__all__ = [
    "UNUSED_RECORDING_HOOK",
    "accept_recording_hook",
    "pytest_agentreplay_configure",
    "unused_recording_hook",
]


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


UNUSED_RECORDING_HOOK = (
    "pytest_recording_configure(config, vcr) is pytest-recording's hook, and pytest-recording "
    "is not active, so nothing calls it: move its matchers and filters to "
    "pytest_agentreplay_configure(config, settings) (see the migration guide)"
)
"""The summary's line about a ``pytest_recording_configure`` nothing calls."""


def accept_recording_hook(config: pytest.Config) -> None:
    """Declare ``pytest_recording_configure`` unless pytest-recording did (declaring it
    twice is an error).

    Runs at configure time, before pytest checks conftests for unknown hooks (after
    collection); pytest-recording, when installed, declared it earlier.
    """
    caller = getattr(config.pluginmanager.hook, "pytest_recording_configure", None)
    if caller is None or not caller.has_spec():
        config.pluginmanager.add_hookspecs(_RecordingHookspec)


def unused_recording_hook(config: pytest.Config) -> str | None:
    """The summary's notice when a conftest implements ``pytest_recording_configure``
    and nothing calls it (pytest-recording is not active); ``None`` otherwise.

    Asked when the summary is printed, so that conftests loaded during collection
    count too. A notice, not a warning: a warning is raised as an exception under
    ``-W error`` or ``filterwarnings = ["error"]`` (pydantic-ai's setting, and a
    common one), and one issued at configure time stopped pytest with an
    INTERNALERROR before any test ran (issue 26).
    """
    caller = getattr(config.pluginmanager.hook, "pytest_recording_configure", None)
    if caller is None or caller.spec is None or caller.spec.namespace is not _RecordingHookspec:
        return None  # pytest-recording's hook: it calls it for its own vcr-marked tests
    return UNUSED_RECORDING_HOOK if caller.get_hookimpls() else None
