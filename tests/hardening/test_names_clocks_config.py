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
from typing import Any

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


def _item(tmp_path: Path, name: str) -> Any:
    """A stand-in for the pytest item of test ``name`` in ``tmp_path/test_user.py``:
    the three attributes the cassette path reads."""
    return type("Item", (), {"cls": None, "name": name, "path": tmp_path / "test_user.py"})()


def test_a_name_another_file_has_in_another_case_gets_the_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on a file system that ignores case: ``test_p[A].yaml`` is there, so the test
    ``test_p[a]`` must not take ``test_p[a].yaml``, which would be the same file."""

    item = _item(tmp_path, "test_p[a]")
    folder = tmp_path / "cassettes" / "test_user"
    folder.mkdir(parents=True)
    assert paths.cassette_path(item, "cassettes", None) == folder / "test_p[a].yaml"  # type: ignore[arg-type]
    (folder / "test_p[A].yaml").touch()
    taken = paths.cassette_path(item, "cassettes", None)
    assert re.fullmatch(r"test_p\[a\]-[0-9a-f]{12}\.yaml", taken.name), taken.name
    (folder / "test_p[a].yaml").touch()  # recorded before the other existed: kept as it is
    assert paths.cassette_path(item, "cassettes", None) == folder / "test_p[a].yaml"  # type: ignore[arg-type]


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


def _aged(folder: Path, seconds: float = 60.0) -> None:
    """Set ``folder``'s modification time ``seconds`` in the past (a settled folder)."""
    then = time.time() - seconds
    os.utime(folder, (then, then))


def test_a_remembered_folder_listing_is_read_again_once_the_folder_changes(
    tmp_path: Path,
) -> None:
    """The listing of a folder whose last change has settled is reused (bench/ W4); a
    file added, renamed or removed later changes the folder's time, and the next test
    sees it: a name taken in another case still gets the hash."""

    item = _item(tmp_path, "test_p[a]")
    folder = tmp_path / "cassettes" / "test_user"
    folder.mkdir(parents=True)
    (folder / "test_other.yaml").touch()
    _aged(folder)
    assert paths.cassette_path(item, "cassettes", None) == folder / "test_p[a].yaml"  # type: ignore[arg-type]
    assert os.fspath(folder) in paths._listings  # settled: remembered
    (folder / "test_p[A].yaml").touch()  # the folder's time moves on
    taken = paths.cassette_path(item, "cassettes", None)
    assert re.fullmatch(r"test_p\[a\]-[0-9a-f]{12}\.yaml", taken.name), taken.name
    (folder / "test_p[A].yaml").rename(folder / "test_q.yaml")
    _aged(folder, 30.0)  # a time of its own, older than now: remembered anew
    assert paths.cassette_path(item, "cassettes", None) == folder / "test_p[a].yaml"  # type: ignore[arg-type]


def test_a_folder_changed_just_now_is_listed_every_time(tmp_path: Path) -> None:
    """A folder changed within the coarsest time stamp of a file system may change again
    under the same time stamp: its listing is never remembered."""

    item = _item(tmp_path, "test_p[a]")
    folder = tmp_path / "cassettes" / "test_user"
    folder.mkdir(parents=True)
    (folder / "test_other.yaml").touch()
    now = time.time()
    os.utime(folder, (now, now))
    assert paths.cassette_path(item, "cassettes", None) == folder / "test_p[a].yaml"  # type: ignore[arg-type]
    assert os.fspath(folder) not in paths._listings
    (folder / "test_p[A].yaml").touch()
    os.utime(folder, (now, now))  # the same time stamp as before the file came
    taken = paths.cassette_path(item, "cassettes", None)
    assert re.fullmatch(r"test_p\[a\]-[0-9a-f]{12}\.yaml", taken.name), taken.name


def test_a_secret_in_a_test_name_is_masked_in_both_of_its_file_names(tmp_path: Path) -> None:
    """The name is masked once and both candidate names (plain, hashed) come from it."""
    key = "sk-ant-api03-" + "Q7x" * 30

    item = _item(tmp_path, f"test_k[{key}]")
    seen: list[str] = []

    def mask(text: str) -> str:
        seen.append(text)
        return text.replace(key, "<SECRET>")

    folder = tmp_path / "cassettes" / "test_user"
    folder.mkdir(parents=True)
    (folder / "other.yaml").touch()
    path = paths.cassette_path(item, "cassettes", None, mask)
    assert key not in path.name and "-SECRET-" in path.name, path.name  # "<>" made safe
    assert seen == [item.name]
