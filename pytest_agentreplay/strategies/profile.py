"""The hypothesis settings profiles pytest-agentreplay ships, registered lazily.

``agentreplay-ci`` is made for CI: derandomized (the same examples on every run,
so a red build is reproducible and a green one stays green), a bounded number of
examples, no deadline (a model call through an SDK takes milliseconds, and a
loaded CI runner more), no example database, and the reproduction blob printed.
``agentreplay-dev`` explores more, randomly, for a local run. Load one with
``pytest --hypothesis-profile=agentreplay-ci`` (or in ``addopts``), or with
``settings.load_profile("agentreplay-ci")`` in a ``conftest.py``.

Both report one failure, the first found, shrunk (``report_multiple_bugs=False``):
an agent that chains its exceptions (``raise AgentError(...) from exc``) reaches the
property through a different chain for each kind of fault, and hypothesis, which
tells failures apart by their whole chain, reported one bug as "8 distinct
failures" and shrank each of them — 58-74 s instead of 7-15 s (issue 20,
``bench/chained_failures.py``). Fix that bug and run again to see the next one.

Nothing here imports hypothesis at import time: hypothesis calls
:func:`_hypothesis_setup_hook` itself when it is first imported (it is a
``hypothesis`` entry point of this package), before it loads the profile named by
``--hypothesis-profile``. A test suite that never uses hypothesis never imports it.
"""

from __future__ import annotations

__all__ = ["CI_PROFILE", "DEV_PROFILE", "register_profiles"]

CI_PROFILE = "agentreplay-ci"
"""The name of the CI profile: derandomized, bounded, no deadline, no database."""
DEV_PROFILE = "agentreplay-dev"
"""The name of the local-run profile: more examples, drawn at random."""
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
        report_multiple_bugs=False,
        suppress_health_check=[HealthCheck.too_slow],
    )
    settings.register_profile(
        DEV_PROFILE,
        parent=default,
        max_examples=DEV_MAX_EXAMPLES,
        deadline=None,
        report_multiple_bugs=False,
        suppress_health_check=[HealthCheck.too_slow],
    )


def _hypothesis_setup_hook() -> None:
    """The ``hypothesis`` entry point: hypothesis calls it when it is imported."""
    register_profiles()
