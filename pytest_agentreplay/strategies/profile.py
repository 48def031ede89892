"""The hypothesis settings profiles pytest-agentreplay ships, registered lazily.

``agentreplay-ci`` is made for CI: derandomized (the same examples on every run,
so a red build is reproducible and a green one stays green), a bounded number of
examples, no deadline (a model call through an SDK takes milliseconds, and a
loaded CI runner more), no example database, and the reproduction blob printed.
``agentreplay-dev`` explores more, randomly, for a local run. Load one with
``pytest --hypothesis-profile=agentreplay-ci`` (or in ``addopts``), or with
``settings.load_profile("agentreplay-ci")`` in a ``conftest.py``.

Nothing here imports hypothesis at import time: hypothesis calls
:func:`_hypothesis_setup_hook` itself when it is first imported (it is a
``hypothesis`` entry point of this package), and the pytest plugin calls
:func:`register_if_loaded`, which registers only when hypothesis is already
imported or a hypothesis profile was asked for on the command line. A test
suite that never uses hypothesis never imports it.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["CI_PROFILE", "DEV_PROFILE", "PROFILES", "register_if_loaded", "register_profiles"]

CI_PROFILE = "agentreplay-ci"
DEV_PROFILE = "agentreplay-dev"
PROFILES = (CI_PROFILE, DEV_PROFILE)
CI_MAX_EXAMPLES = 50
DEV_MAX_EXAMPLES = 300


def register_profiles() -> None:
    """Register ``agentreplay-ci`` and ``agentreplay-dev`` with hypothesis (idempotent)."""
    from hypothesis import HealthCheck, settings  # noqa: PLC0415 - hypothesis is optional

    # From hypothesis' defaults, not from whatever profile is loaded at the time.
    default = settings.get_profile("default")
    settings.register_profile(
        CI_PROFILE,
        parent=default,
        max_examples=CI_MAX_EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile(
        DEV_PROFILE,
        parent=default,
        max_examples=DEV_MAX_EXAMPLES,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


def register_if_loaded(config: Any) -> None:
    """For the plugin's ``pytest_configure``: register the profiles when hypothesis is
    imported already, or when ``--hypothesis-profile`` names one of them (hypothesis
    is about to be imported then anyway). Otherwise do nothing, and import nothing."""
    asked = config.getoption("hypothesis_profile", None) in PROFILES
    if asked or "hypothesis" in sys.modules:
        register_profiles()


def _hypothesis_setup_hook() -> None:
    """The ``hypothesis`` entry point: hypothesis calls it when it is imported."""
    register_profiles()
