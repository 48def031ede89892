"""Issue 18, item 4: with ``junit_logging=all`` (or ``system-out``, ``system-err``,
``log``), the captured output of *passing* tests under the plugin reaches the JUnit
XML masked, as a failure's does — with and without xdist; so do the ``-rA`` summary's
passes section and the properties a test records.

Every report section a reporter can write is covered: stdout, stderr and log
captured in setup, call and teardown, and ``record_property`` values.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from tests.cassettes._plugin_runs import run, run_subprocess

pytest_plugins = ["pytester"]

USER_TESTS = """
import logging, os, sys
import pytest

CANARY, PLAIN = os.environ["AR_CANARY_API_KEY"], os.environ["AR_PLAIN"]
URL = f"https://api.example.com/v1/models?key={PLAIN}"


@pytest.fixture
def noisy():
    print("setup out", CANARY)
    yield
    print("teardown out", URL, file=sys.stderr)


@pytest.mark.agentreplay
def test_passes(agentreplay, noisy, record_property):
    print("calling", URL)
    print("with", CANARY, file=sys.stderr)
    logging.getLogger("app").warning("token %s", CANARY)
    record_property("endpoint", URL)


@pytest.mark.agentreplay
@pytest.mark.skip(reason="skipped for " + CANARY)
def test_skipped(agentreplay):
    pass
"""

LOGGING = ["all", "system-out", "system-err", "out-err", "log"]


# Every setting alone; under xdist (a report crosses from worker to controller), the two
# the issue names.
CASES = [pytest.param(mode, [], id=f"{mode}-serial") for mode in LOGGING] + [
    pytest.param(mode, ["-n", "2"], id=f"{mode}-xdist") for mode in ("all", "system-out")
]


@pytest.mark.parametrize(("logging", "workers"), CASES)
def test_passing_reports_are_masked_in_junit_xml_and_the_summary(
    pytester: pytest.Pytester, workers: list[str], logging: str
) -> None:
    pytester.makepyfile(test_user=USER_TESTS)
    canary, plain = f"ck-{secrets.token_urlsafe(24)}", f"p{secrets.token_hex(10)}"
    junit = pytester.path / "junit.xml"
    runner = run_subprocess if workers else run
    result = runner(
        pytester,
        *workers,
        "-rA",
        "-o",
        f"junit_logging={logging}",
        "-o",
        "junit_log_passing_tests=true",
        "-o",
        "junit_family=xunit1",  # record_property warns under xunit2
        f"--junitxml={junit}",
        AR_CANARY_API_KEY=canary,
        AR_PLAIN=plain,
    )
    result.assert_outcomes(passed=1, skipped=1)
    xml = junit.read_text()
    printed = result.stdout.str() + result.stderr.str() + xml
    assert canary not in printed
    assert plain not in printed
    # Masked, not dropped: what was written is still there.
    assert 'name="endpoint" value="https://api.example.com/v1/models?key=REDACTED"' in xml
    if logging in ("all", "system-out", "out-err"):
        assert "calling https://api.example.com/v1/models?key=REDACTED" in xml
        assert "setup out REDACTED" in xml
    if logging in ("all", "system-err", "out-err"):
        assert "with REDACTED" in xml
    if logging in ("all", "log"):
        assert "token REDACTED" in xml
    result.stdout.fnmatch_lines(["*calling https://api.example.com/v1/models?key=REDACTED*"])


def test_a_test_outside_the_plugin_is_left_alone(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """Only tests that ran under interception are masked: a suite's other tests cost
    nothing and print what they print."""
    pytester.makepyfile(
        test_user="""
def test_plain():
    print("value", "ck-not-ours-0000000000000000")
"""
    )
    junit = tmp_path / "junit.xml"
    run(
        pytester, "-o", "junit_logging=all", f"--junitxml={junit}", AR_CANARY_API_KEY="x"
    ).assert_outcomes(passed=1)
    assert "value ck-not-ours-0000000000000000" in junit.read_text()


def test_xml_attributes_and_suite_properties_are_masked(pytester: pytest.Pytester) -> None:
    """``record_xml_attribute`` writes the test's JUnit node at once and
    ``record_testsuite_property`` the suite's, with no report in between to mask: both
    reach the file masked; a test outside the plugin keeps its attribute as written."""
    pytester.makepyfile(
        test_user="""
import os
import pytest

CANARY, PLAIN = os.environ["AR_CANARY_API_KEY"], os.environ["AR_PLAIN"]


@pytest.mark.agentreplay
def test_under_the_plugin(agentreplay, record_xml_attribute, record_testsuite_property):
    record_xml_attribute("endpoint", f"https://api.example.com/v1/models?key={PLAIN}")
    record_xml_attribute("token", CANARY)
    record_testsuite_property("deploy_key", CANARY)


def test_outside(record_xml_attribute):
    record_xml_attribute("build", "ck-not-ours-0000000000000000")
"""
    )
    canary, plain = f"ck-{secrets.token_urlsafe(24)}", f"p{secrets.token_hex(10)}"
    junit = pytester.path / "junit.xml"
    result = run(
        pytester,
        "-o",
        "junit_family=xunit1",  # record_xml_attribute is refused under xunit2
        f"--junitxml={junit}",
        "-W",
        "ignore::pytest.PytestExperimentalApiWarning",
        AR_CANARY_API_KEY=canary,
        AR_PLAIN=plain,
    )
    result.assert_outcomes(passed=2)
    xml = junit.read_text()
    assert canary not in xml and plain not in xml
    assert 'endpoint="https://api.example.com/v1/models?key=REDACTED"' in xml
    assert 'token="REDACTED"' in xml
    assert 'name="deploy_key" value="REDACTED"' in xml
    assert 'build="ck-not-ours-0000000000000000"' in xml
