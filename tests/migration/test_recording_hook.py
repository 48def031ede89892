"""A ``pytest_recording_configure`` left in a conftest never stops pytest (issues 20, 26).

Without pytest-recording nothing calls the hook. It used to stop pytest with "unknown
hook" (issue 20); then it was reported with a configure-time ``PytestConfigWarning``,
which ``-W error`` or the common ``filterwarnings = ["error"]`` (pydantic-ai's) turned
into an INTERNALERROR before any test ran (issue 26). It is now a line of the
summary, whatever the warning filters, with or without xdist. With pytest-recording
active the hook is its own, and it calls it for its ``vcr``-marked tests.
"""

from __future__ import annotations

import pytest

from pytest_agentreplay.hooks import UNUSED_RECORDING_HOOK

pytest_plugins = ["pytester"]

HOOK = """
import os

def pytest_recording_configure(config, vcr):
    vcr.register_matcher("never", lambda r1, r2: True)
    with open(os.environ["HOOK_CALLS"], "a") as calls:
        calls.write("called\\n")
"""

TESTS = """
import httpx, pytest

@pytest.mark.agentreplay
def test_marked(agentreplay):
    assert agentreplay.interactions == []

def test_plain():
    pass
"""

WARNINGS_AS_ERRORS = {
    "ini": ((), "[pytest]\nfilterwarnings =\n    error\n"),
    "-W error": (("-W", "error"), "[pytest]\n"),
}

XDIST = {"serial": (), "-n 2": ("-n", "2")}


def _suite(pytester: pytest.Pytester, ini: str) -> None:
    pytester.makeini(ini)
    pytester.makeconftest(HOOK)
    pytester.makepyfile(test_user=TESTS)


@pytest.mark.parametrize("xdist", XDIST, ids=list(XDIST))
@pytest.mark.parametrize("strict", WARNINGS_AS_ERRORS, ids=list(WARNINGS_AS_ERRORS))
def test_a_leftover_hook_under_warnings_as_errors_is_a_summary_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, strict: str, xdist: str
) -> None:
    args, ini = WARNINGS_AS_ERRORS[strict]
    _suite(pytester, ini)
    calls = pytester.path / "calls.txt"
    monkeypatch.setenv("HOOK_CALLS", str(calls))
    result = pytester.runpytest_subprocess(
        "-p", "no:recording", "-p", "no:cacheprovider", *args, *XDIST[xdist]
    )
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.OK
    assert output.count(UNUSED_RECORDING_HOOK) == 1, output
    result.stdout.fnmatch_lines(
        ["*- agentreplay -*", "pytest_recording_configure*nothing calls it*"]
    )
    assert "unknown hook" not in output
    assert "PytestConfigWarning" not in output
    assert not calls.exists()  # nothing called it


def test_the_summary_line_comes_with_a_conftest_found_while_collecting(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A conftest in a sub-folder is loaded after configure time, while collecting."""
    pytester.makeini("[pytest]\nfilterwarnings =\n    error\n")
    sub = pytester.mkpydir("sub")
    (sub / "conftest.py").write_text(HOOK)
    (sub / "test_user.py").write_text(TESTS)
    monkeypatch.setenv("HOOK_CALLS", str(pytester.path / "calls.txt"))
    result = pytester.runpytest_subprocess("-p", "no:recording", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert result.stdout.str().count(UNUSED_RECORDING_HOOK) == 1


def test_without_the_hook_there_is_no_notice(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nfilterwarnings =\n    error\n")
    pytester.makepyfile(test_user=TESTS)
    result = pytester.runpytest_subprocess("-p", "no:recording", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert "pytest_recording_configure" not in result.stdout.str()


@pytest.mark.parametrize("xdist", XDIST, ids=list(XDIST))
@pytest.mark.parametrize("strict", WARNINGS_AS_ERRORS, ids=list(WARNINGS_AS_ERRORS))
def test_with_pytest_recording_active_the_hook_is_its_own(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, strict: str, xdist: str
) -> None:
    """pytest-recording declares the hook and calls it for its ``vcr``-marked tests (here
    one left unmigrated): no notice, and the migrated tests run beside it."""
    pytest.importorskip("pytest_recording")
    args, ini = WARNINGS_AS_ERRORS[strict]
    _suite(pytester, ini)
    pytester.makepyfile(
        test_unmigrated="""
        import pytest

        @pytest.mark.vcr
        def test_still_on_pytest_recording(vcr):
            assert vcr is not None and len(vcr) == 0
        """
    )
    calls = pytester.path / "calls.txt"
    monkeypatch.setenv("HOOK_CALLS", str(calls))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, *XDIST[xdist])
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output
    result.assert_outcomes(passed=3)
    assert UNUSED_RECORDING_HOOK not in output
    assert calls.read_text() == "called\n"  # by pytest-recording, for its one vcr test
