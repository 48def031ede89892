"""Issue 27, items 17 to 20: names, clocks and configuration.

- ``test_p[A]`` and ``test_p[a]`` had one cassette on a file system that ignores case
  (macOS, Windows): the second test replayed the first's recording;
- ``rewrite`` took a cassette whose modification time lies in the future (a VM, a bind
  mount, an archive) for one this run wrote, and kept its old interactions;
- ``pace=nan`` and ``pace=inf`` were accepted, ``inf`` ending in an ``OverflowError``
  deep in a stream;
- ``settings.redact_headers.add(None)`` in ``pytest_agentreplay_configure`` was an
  INTERNALERROR.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.cassette import Cassette
from pytest_agentreplay.harness import paths
from tests.cassettes._plugin_runs import PRELUDE, run, run_subprocess
from tests.cli._helpers import stream_interaction
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

CASES = (
    PRELUDE
    + """
@pytest.mark.agentreplay
@pytest.mark.parametrize("word", ["A", "a", "Ab", "aB"])
def test_p(agentreplay, word):
    assert ask_raw(word) == "echo: " + word
"""
)


def _names(pytester: pytest.Pytester) -> list[str]:
    return sorted(p.name for p in (pytester.path / "cassettes" / "test_user").iterdir())


def test_ids_that_differ_in_case_only_get_names_that_differ_ignoring_case(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=CASES)
    run(pytester, "--agentreplay-record-mode=once", AR_SERVER=echo_server.url).assert_outcomes(
        passed=4
    )
    names = _names(pytester)
    assert len({name.casefold() for name in names}) == 4, names  # distinct on macOS too
    plain = [n for n in names if re.fullmatch(r"test_p\[\w+\]\.yaml", n)]
    assert len(plain) == 2  # the first of each pair keeps its plain name; the second is hashed
    run(pytester, AR_SERVER=echo_server.url).assert_outcomes(passed=4)  # each replays its own


def _ignores_case(folder: Path) -> bool:
    probe = folder / "CaseProbe"
    probe.touch()
    try:
        return (folder / "caseprobe").exists()
    finally:
        probe.unlink()


def test_on_a_file_system_that_ignores_case_each_test_replays_its_own(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    if not _ignores_case(pytester.path):
        pytest.skip("this file system tells case apart (macOS and Windows do not)")
    pytester.makepyfile(test_user=CASES)
    run(pytester, "--agentreplay-record-mode=once", AR_SERVER=echo_server.url).assert_outcomes(
        passed=4
    )
    run(pytester).assert_outcomes(passed=4)  # each asserts its own echo


def test_a_name_another_file_has_in_another_case_gets_the_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on a file system that ignores case: ``test_p[A].yaml`` is there, so the test
    ``test_p[a]`` must not take ``test_p[a].yaml``, which would be the same file."""

    class Item:
        cls = None
        name = "test_p[a]"
        path = tmp_path / "test_user.py"

    folder = tmp_path / "cassettes" / "test_user"
    folder.mkdir(parents=True)
    assert paths.cassette_path(Item(), "cassettes", None) == folder / "test_p[a].yaml"  # type: ignore[arg-type]
    (folder / "test_p[A].yaml").touch()
    taken = paths.cassette_path(Item(), "cassettes", None)  # type: ignore[arg-type]
    assert re.fullmatch(r"test_p\[a\]-[0-9a-f]{12}\.yaml", taken.name), taken.name
    (folder / "test_p[a].yaml").touch()  # recorded before the other existed: kept as it is
    assert paths.cassette_path(Item(), "cassettes", None) == folder / "test_p[a].yaml"  # type: ignore[arg-type]


# --- rewrite and clocks -----------------------------------------------------------------

ONE = (
    PRELUDE
    + """
@pytest.mark.agentreplay
def test_one(agentreplay):
    ask_raw(os.environ["AR_Q"])
"""
)


@pytest.mark.parametrize("future", [True, False], ids=["future mtime", "past mtime"])
def test_rewrite_replaces_what_the_file_held_before_the_run_whatever_its_mtime(
    pytester: pytest.Pytester, echo_server: ProviderServer, future: bool
) -> None:
    pytester.makepyfile(test_user=ONE)
    run(pytester, "--agentreplay-record-mode=once", AR_SERVER=echo_server.url, AR_Q="old")
    (path,) = (pytester.path / "cassettes" / "test_user").iterdir()
    stamp = time.time() + (10 * 365 * 86400 if future else -86400)
    os.utime(path, (stamp, stamp))  # a VM's clock, a bind mount, an archive
    run(
        pytester, "--agentreplay-record-mode=rewrite", AR_SERVER=echo_server.url, AR_Q="new"
    ).assert_outcomes(passed=1)
    prompts = [
        i.request.json_body["messages"][0]["content"] for i in cassette_io.load(path).interactions
    ]
    assert prompts == ["new"]


SHARED = (
    PRELUDE
    + """
@pytest.mark.agentreplay(cassette="shared.yaml")
@pytest.mark.parametrize("n", range(4))
def test_shared(agentreplay, n):
    ask_raw(f"{os.environ['AR_Q']} {n}")
"""
)


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_rewrite_keeps_what_other_tests_of_the_run_wrote_and_drops_the_rest(
    pytester: pytest.Pytester, echo_server: ProviderServer, workers: list[str]
) -> None:
    pytester.makepyfile(test_user=SHARED)
    runner = run_subprocess if workers else run
    runner(
        pytester, *workers, "--agentreplay-record-mode=once", AR_SERVER=echo_server.url, AR_Q="old"
    )
    path = pytester.path / "cassettes" / "test_user" / "shared.yaml"
    stamp = time.time() + 10 * 365 * 86400
    os.utime(path, (stamp, stamp))
    runner(
        pytester,
        *workers,
        "--agentreplay-record-mode=rewrite",
        AR_SERVER=echo_server.url,
        AR_Q="new",
    ).assert_outcomes(passed=4)
    prompts = sorted(
        i.request.json_body["messages"][0]["content"] for i in cassette_io.load(path).interactions
    )
    assert prompts == ["new 0", "new 1", "new 2", "new 3"]


# --- pace -------------------------------------------------------------------------------


@pytest.mark.parametrize("pace", ["float('nan')", "float('inf')", "-1", "'fast'", "True"])
def test_a_pace_that_is_no_finite_number_is_a_usage_error_naming_the_marker(
    pytester: pytest.Pytester, pace: str
) -> None:
    pytester.makepyfile(
        test_user=f"""
import pytest

@pytest.mark.agentreplay(pace={pace})
def test_paced(agentreplay):
    pass
"""
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*UsageError: test_user.py::test_paced: pace must be a finite number >= 0*"]
    )
    assert "OverflowError" not in result.stdout.str()


@pytest.mark.parametrize("pace", ["nan", "inf", "-1"])
def test_serve_refuses_a_pace_that_is_no_finite_number(tmp_path: Path, pace: str) -> None:
    path = tmp_path / "c.yaml"
    cassette_io.save(path, Cassette(interactions=[stream_interaction()]))
    done = subprocess.run(
        [sys.executable, "-m", "pytest_agentreplay.cli", "serve", str(path), "--pace", pace],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "a finite number >= 0 is needed" in done.stderr
    assert done.stdout == ""


# --- the configure hook -----------------------------------------------------------------

BAD_SETTINGS = {
    "redact_headers.add(None)": (
        "settings.redact_headers.add(None)",
        "settings.redact_headers must hold names",
    ),
    "redact_query_params.add(3)": (
        "settings.redact_query_params.add(3)",
        "settings.redact_query_params must hold names",
    ),
    "redact_body_keys = 'api_key'": (
        "settings.redact_body_keys = 'api_key'",
        "settings.redact_body_keys must hold names",
    ),
    "redact_headers.add('')": (
        "settings.redact_headers.add('')",
        "settings.redact_headers must hold names",
    ),
    "scrubbers.append('x')": (
        "settings.scrubbers.append('x')",
        "settings.scrubbers holds 'x', not a scrubber",
    ),
    "matchers['m'] = 3": ("settings.matchers['m'] = 3", "settings.matchers holds 3, not a matcher"),
    "match_on = 'method'": (
        "settings.match_on = 'method'",
        "match_on must be a list of matcher names",
    ),
    "pace = nan": ("settings.pace = float('nan')", "pace must be a finite number >= 0"),
    "max_body_bytes = 0": (
        "settings.max_body_bytes = 0",
        "settings.max_body_bytes must be a number of bytes > 0",
    ),
    "chunking = 'bogus'": (
        "settings.chunking = 'bogus'",
        "settings.chunking: unknown chunking 'bogus'",
    ),
    "save_on_failure = 'yes'": (
        "settings.save_on_failure = 'yes'",
        "settings.save_on_failure must be True or False",
    ),
}


@pytest.mark.parametrize("setting", BAD_SETTINGS)
def test_a_malformed_setting_from_the_configure_hook_is_a_usage_error(
    pytester: pytest.Pytester, setting: str
) -> None:
    line, said = BAD_SETTINGS[setting]
    pytester.makeconftest(f"def pytest_agentreplay_configure(config, settings):\n    {line}\n")
    pytester.makepyfile(test_user="def test_plain():\n    pass\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output
    assert "pytest_agentreplay_configure" in output
    assert said in output
