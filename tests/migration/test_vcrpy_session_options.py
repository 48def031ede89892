"""Issue 20, item 16: vcrpy's keys that change how a cassette is played, written and
found — ``allow_playback_repeats``, ``record_on_exception``, ``cassette_library_dir``,
``path_transformer``, ``serializer="yaml"``, ``func_path_generator`` — honoured with
vcrpy's semantics in ``agentreplay_config`` and the marker (they were refused as
unknown keys).
"""

from __future__ import annotations

import pytest

from tests.cassettes._plugin_runs import cassette, run

pytest_plugins = ["pytester"]

ONE = """\
interactions:
- request:
    body: null
    headers: {}
    method: GET
    uri: https://api.example.test/n
  response:
    body:
      string: '{"n": %d}'
    headers:
      Content-Type:
      - application/json
    status:
      code: 200
      message: OK
"""

REPEATS_TEST = """
import httpx2, pytest


@pytest.mark.agentreplay({kwargs})
def test_repeats(agentreplay):
    got = [httpx2.get("https://api.example.test/n").json()["n"] for _ in range(3)]
    assert got == [1, 1, 1]
"""


@pytest.mark.parametrize(("kwargs", "passed"), [("allow_playback_repeats=True", 1), ("", 0)])
def test_allow_playback_repeats_plays_the_first_match_every_time(
    pytester: pytest.Pytester, kwargs: str, passed: int
) -> None:
    pytester.makepyfile(test_user=REPEATS_TEST.format(kwargs=kwargs))
    path = cassette(pytester, "test_repeats")
    path.parent.mkdir(parents=True)
    path.write_text(ONE % 1 + (ONE % 2).removeprefix("interactions:\n") + "version: 1\n")
    result = run(pytester)
    result.assert_outcomes(passed=passed, failed=1 - passed)


FAILING_TEST = """
import os, httpx2, pytest

URL = os.environ["WEB"]


@pytest.mark.agentreplay(record_on_exception={value})
def test_failing(agentreplay):
    httpx2.get(URL + os.environ.get("P", "/a"))
    assert os.environ.get("PASS") == "1"
"""


@pytest.mark.parametrize(("value", "written"), [(False, False), (True, True), (None, True)])
def test_record_on_exception_false_writes_nothing_for_a_failed_test(
    pytester: pytest.Pytester, web: str, value: bool | None, written: bool
) -> None:
    pytester.makepyfile(test_user=FAILING_TEST.format(value=value))
    result = run(pytester, "--agentreplay-record-mode=once", WEB=web)
    result.assert_outcomes(failed=1)
    # None: not set, this plugin's rule (a failed test still writes a new cassette).
    assert cassette(pytester, "test_failing").exists() is written


@pytest.mark.parametrize(("value", "saved"), [(True, True), (None, False)])
def test_record_on_exception_true_saves_over_an_existing_cassette(
    pytester: pytest.Pytester, web: str, value: bool | None, saved: bool
) -> None:
    pytester.makepyfile(test_user=FAILING_TEST.format(value=value))
    run(pytester, "--agentreplay-record-mode=once", WEB=web, PASS="1").assert_outcomes(passed=1)
    path = cassette(pytester, "test_failing")
    result = run(pytester, "--agentreplay-record-mode=new_episodes", WEB=web, P="/b")
    result.assert_outcomes(failed=1)
    # vcrpy saves what a failing test recorded; this plugin's rule keeps the cassette.
    assert ("/b\n" in path.read_text()) is saved


PATHS_TEST = """
import os, httpx2, pytest
from vcr import VCR


@pytest.fixture
def agentreplay_config():
    return {{"cassette_library_dir": os.environ["LIB"], {extra}}}


@pytest.mark.agentreplay
def test_placed(agentreplay):
    assert str(agentreplay.path) == os.environ["EXPECTED"]
    httpx2.get(os.environ["WEB"] + "/p")
"""


@pytest.mark.parametrize(
    ("extra", "name"),
    [
        ("'serializer': 'yaml'", "test_placed.yaml"),
        ("'path_transformer': VCR.ensure_suffix('.yml')", "test_placed.yml"),
        ("'func_path_generator': lambda f: 'unused'", "test_placed.yaml"),
    ],
)
def test_cassette_library_dir_and_path_transformer_place_the_cassette(
    pytester: pytest.Pytester, web: str, extra: str, name: str
) -> None:
    pytester.makepyfile(test_user=PATHS_TEST.format(extra=extra))
    lib = pytester.path / "recorded"
    expected = lib / name
    env = {"WEB": web, "LIB": str(lib), "EXPECTED": str(expected)}
    run(pytester, "--agentreplay-record-mode=once", **env).assert_outcomes(passed=1)
    assert expected.exists()
    assert not (pytester.path / "cassettes").exists()
    run(pytester, **env).assert_outcomes(passed=1)
