"""The vcrpy floor (issue 26): an older vcrpy is refused up front, by name.

The ``vcr`` extra allowed vcrpy 8.2, and every test that switched the bridge on
failed with ``TypeError: VCR.__init__() got an unexpected keyword argument
'skip_patchers'`` (the bridge is on whenever ``requests`` is imported). Run on each
release, the bridge and vcrpy's filter options work from 9.4.2 on
(docs/migrating.md). An older vcrpy now fails the tests that need it with a message
naming vcrpy, the installed version, the floor and what to install; the version
lookup is replaced here, the CI session that pins an old vcrpy checks it for real.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from pytest_agentreplay.cassettes.formats.vcrpy import bridge as vcr_bridge
from tests.cassettes._plugin_runs import run

pytest_plugins = ["pytester"]


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str | None]]:
    """Set ``installed[0]`` to the vcrpy version the bridge sees."""
    seen: list[str | None] = [None]
    monkeypatch.setattr(vcr_bridge, "installed_version", lambda: seen[0])
    vcr_bridge.too_old.cache_clear()
    yield seen
    vcr_bridge.too_old.cache_clear()


@pytest.mark.parametrize("version", ["8.2.1", "8.5.0", "9.2.0", "9.4.1", "9.4.2rc1", "7.0.0"])
def test_a_vcrpy_older_than_the_floor_is_refused_with_what_to_install(
    installed: list[str | None], version: str
) -> None:
    installed[0] = version
    with pytest.raises(vcr_bridge.VcrpyVersionError) as caught:
        vcr_bridge.require_vcrpy()
    message = str(caught.value)
    assert f"vcrpy {version} is installed" in message
    assert "needs vcrpy 9.4.2 or newer" in message
    assert "pip install 'vcrpy>=9.4.2'" in message


@pytest.mark.parametrize("version", ["9.4.2", "9.4.10", "9.10.0", "10.0"])
def test_the_floor_and_newer_are_accepted(installed: list[str | None], version: str) -> None:
    installed[0] = version
    vcr_bridge.require_vcrpy()
    assert vcr_bridge.too_old() is None


@pytest.mark.parametrize(("version", "shown"), [(None, "(version unknown)"), ("dev", "dev")])
def test_a_version_that_cannot_be_read_is_refused_too(
    installed: list[str | None], version: str | None, shown: str
) -> None:
    installed[0] = version
    problem = vcr_bridge.too_old()
    assert problem is not None
    assert f"vcrpy {shown} is installed" in problem


def test_on_python_3_10_it_says_that_vcrpy_9_4_2_cannot_be_installed_there(
    installed: list[str | None], monkeypatch: pytest.MonkeyPatch
) -> None:
    installed[0] = "8.5.0"
    monkeypatch.setattr(sys, "version_info", (3, 10, 13, "final", 0))
    problem = vcr_bridge.too_old()
    assert problem is not None
    assert "vcrpy 9.4.2 needs Python 3.11 or newer" in problem
    assert "agentreplay_vcr = never" in problem


def test_the_floor_is_the_installed_vcrpy_s_own_check() -> None:
    """The vcrpy this suite runs with passes the check it ships, and has what the
    floor stands for: ``skip_patchers``, and ``recursive`` body filtering."""
    import inspect

    import vcr
    from vcr import filters

    assert vcr_bridge.too_old() is None
    assert "skip_patchers" in inspect.signature(vcr.VCR).parameters
    assert "recursive" in inspect.signature(filters.replace_body_parameters).parameters


BRIDGE_TEST = """
import pytest, requests

@pytest.mark.agentreplay
def test_bridge():
    pass

@pytest.mark.agentreplay(filter_headers=["x-token"])
def test_filters():
    pass

def test_untouched():
    pass
"""


def test_a_suite_on_an_old_vcrpy_fails_each_test_that_needs_it_by_name(
    pytester: pytest.Pytester, installed: list[str | None]
) -> None:
    """No ``TypeError`` from inside vcrpy: the tests that switch the bridge on or set a
    filter key error with the message; a test without the plugin passes. (The run is in
    this process, so it sees the version set here.)"""
    installed[0] = "8.2.1"
    pytester.makeini("[pytest]\nagentreplay_vcr = always\n")
    pytester.makepyfile(test_user=BRIDGE_TEST)
    result = run(pytester)
    result.assert_outcomes(errors=2, passed=1)
    output = result.stdout.str()
    assert "TypeError" not in output
    result.stdout.fnmatch_lines(
        [
            "ERROR test_user.py::test_bridge - *",
            "ERROR test_user.py::test_filters - *",
        ]
    )
    needs = (
        "pytest-agentreplay needs vcrpy 9.4.2 or newer to record and replay requests, urllib3 "
        "and aiohttp clients and to run vcrpy's filter options, and vcrpy 8.2.1 is installed: "
        "pip install 'vcrpy>=9.4.2'"
    )
    assert f"VcrpyVersionError: {needs}" in output
    assert f"UsageError: test_user.py::test_filters: filter_headers: {needs}" in output
