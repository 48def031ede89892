"""Issue 20, item 16: a pytest-recording suite migrates by renaming alone.

A vcrpy-format cassette replays with vcrpy's default matching (method and URI, no
body, in recorded order) unless the test asks otherwise: the body used to be matched
by default, so a suite whose requests carry a timestamp or a changed prompt missed
where pytest-recording played (a ``pytest_recording_configure`` hook left in a
conftest: test_recording_hook.py). A vcrpy cassette without
``version: 1`` (vcrpy writes it but does not need it) used to be refused as
truncated, while one of our own files without it still is.
"""

from __future__ import annotations

import json

import pytest

from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.errors import CassetteFormatError

pytest_plugins = ["pytester"]

VCR_CASSETTE = """\
interactions:
- request:
    body: '{"n": 1, "at": "2024-01-01T00:00:00"}'
    headers:
      Content-Type:
      - application/json
    method: POST
    uri: http://api.example.test/items?page=1
  response:
    body:
      string: '{"id": "first"}'
    headers:
      Content-Type:
      - application/json
    status:
      code: 200
      message: OK
- request:
    body: '{"n": 2, "at": "2024-01-01T00:00:01"}'
    headers:
      Content-Type:
      - application/json
    method: POST
    uri: http://api.example.test/items?page=1
  response:
    body:
      string: '{"id": "second"}'
    headers:
      Content-Type:
      - application/json
    status:
      code: 200
      message: OK
"""

TEST = """
import httpx, json, time, pytest

@pytest.mark.agentreplay{marker}
def test_items():
    with httpx.Client() as client:
        got = [
            client.post(
                "http://api.example.test/items?page=1",
                json={{"n": n, "at": time.time()}},
            ).json()["id"]
            for n in (1, 2)
        ]
    assert got == ["first", "second"]
"""


def _suite(pytester: pytest.Pytester, cassette: str, marker: str = "") -> None:
    pytester.makepyfile(test_user=TEST.format(marker=marker))
    path = pytester.path / "cassettes" / "test_user" / "test_items.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(cassette)


def test_a_vcrpy_cassette_matches_on_method_and_uri_in_order(pytester: pytest.Pytester) -> None:
    _suite(pytester, VCR_CASSETTE + "version: 1\n")
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_match_on_set_by_the_test_still_wins(pytester: pytest.Pytester) -> None:
    _suite(pytester, VCR_CASSETTE + "version: 1\n", marker='(match_on=["method", "body"])')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no recorded interaction matches*"])


def test_our_own_format_still_matches_the_body(pytester: pytest.Pytester) -> None:
    cassette = cassette_io.dumps(cassette_io.loads(VCR_CASSETTE + "version: 1\n"))
    _suite(pytester, cassette)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)


def test_a_vcrpy_cassette_without_version_loads_as_vcrpy_loads_it() -> None:
    cassette = cassette_io.loads(VCR_CASSETTE, path="old.yaml")
    assert [json.loads(i.response.content()) for i in cassette.interactions] == [
        {"id": "first"},
        {"id": "second"},
    ]


@pytest.mark.parametrize(
    "cut",
    [
        pytest.param(lambda text: text[: text.rindex("    status:")], id="before-the-status"),
        pytest.param(lambda text: text.rstrip("\n"), id="mid-line"),
        pytest.param(lambda text: text[: text.rindex("  response:")], id="no-response"),
    ],
)
def test_a_cut_vcrpy_cassette_is_still_refused_as_truncated(cut: object) -> None:
    assert callable(cut)
    with pytest.raises(CassetteFormatError, match="truncated") as caught:
        cassette_io.loads(cut(VCR_CASSETTE), path="cut.yaml")
    assert "cut.yaml" in str(caught.value)


def test_our_own_cassette_without_version_is_still_refused_as_truncated() -> None:
    ours = cassette_io.dumps(cassette_io.loads(VCR_CASSETTE + "version: 1\n"))
    cut = ours[: ours.rindex("version:")]
    with pytest.raises(CassetteFormatError, match="truncated"):
        cassette_io.loads(cut, path="ours.yaml")
