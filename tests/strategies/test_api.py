"""The strategies module's public surface, its lazy import, and the CI profile."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap

import pytest
from hypothesis import settings
from hypothesis.strategies import SearchStrategy

import pytest_agentreplay
from pytest_agentreplay import strategies
from pytest_agentreplay.strategies import profile as _hypothesis_profile

pytest_plugins = ["pytester"]

STRATEGIES = ["chunkings", "fault_plans", "faults", "json_objects", "replies", "sse_streams"]


def test_all_lists_the_strategies_and_their_types() -> None:
    assert sorted(strategies.__all__) == sorted(
        [
            *STRATEGIES,
            "CI_PROFILE",
            "DEV_PROFILE",
            "DEFAULT_FAULT_KINDS",
            "DEFAULT_STATUSES",
            "Chunking",
            "FaultPlan",
            "SSEStream",
            "register_profiles",
        ]
    )
    for name in strategies.__all__:
        assert hasattr(strategies, name), name


@pytest.mark.parametrize("name", STRATEGIES)
def test_each_strategy_is_a_documented_function_returning_a_search_strategy(name: str) -> None:
    function = getattr(strategies, name)
    assert name.islower() and inspect.isfunction(function)
    assert isinstance(function(), SearchStrategy)
    doc = inspect.getdoc(function) or ""
    assert "Shrinks" in doc, f"{name} does not say how it shrinks"


def test_from_package_import_strategies_works_and_the_package_stays_light() -> None:
    from pytest_agentreplay import strategies as again

    assert again is strategies
    assert pytest_agentreplay.strategies is strategies
    assert "strategies" in dir(pytest_agentreplay)
    assert "strategies" not in pytest_agentreplay.__all__  # import * stays light
    probe = (
        "import sys, pytest_agentreplay; "
        "print(sorted(m for m in ('hypothesis', 'syrupy', 'pydantic') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_the_ci_profile_is_derandomized_bounded_and_has_no_deadline() -> None:
    ci = settings.get_profile(strategies.CI_PROFILE)
    assert ci.derandomize is True
    assert ci.max_examples == _hypothesis_profile.CI_MAX_EXAMPLES
    assert ci.deadline is None
    assert ci.database is None
    dev = settings.get_profile(strategies.DEV_PROFILE)
    assert (dev.derandomize, dev.deadline) == (False, None)


def test_importing_hypothesis_registers_the_profiles_through_its_entry_point() -> None:
    probe = textwrap.dedent("""
        import sys
        import hypothesis
        print(hypothesis.settings.get_profile("agentreplay-ci").derandomize)
        loaded = [m for m in sys.modules if m.startswith("pytest_agentreplay.strategies.")]
        print(loaded != ["pytest_agentreplay.strategies.profile"])
    """)
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["True", "False"]


def test_pytest_loads_the_ci_profile_from_the_command_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_profile="""
        from hypothesis import given, settings, strategies as st

        def test_profile():
            # public from hypothesis 6.139 on, private before (the extra allows 6.100)
            current = getattr(settings, "get_current_profile_name", None)
            name = current() if current else settings._current_profile
            assert name == "agentreplay-ci"
            assert settings.default.derandomize

        @given(st.integers())
        def test_runs(x):
            pass
        """
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--hypothesis-profile=agentreplay-ci"
    )
    result.assert_outcomes(passed=2)
