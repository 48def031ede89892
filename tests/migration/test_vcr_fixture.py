"""Issue 20, item 16: pytest-recording's ``vcr`` fixture works after the renames.

Tests that read ``vcr.requests[i].body``, ``vcr.play_count``, ``vcr.record_mode`` or
``len(vcr)`` errored with "fixture 'vcr' not found" once pytest-recording was gone.
Issue 26: suites reach further. pydantic-ai's autouse fixtures take ``vcr`` in every
test, return at once when it is ``None`` (pytest-recording's ``vcr`` in a test without
its marker) and otherwise read ``vcr._path``, ``vcr.play_counts`` and ``vcr.all_played``.
"""

from __future__ import annotations

import pytest

from tests.migration.test_vcrpy_defaults import VCR_CASSETTE

pytest_plugins = ["pytester"]

TEST = """
import json, httpx, pytest

@pytest.mark.agentreplay
def test_items(vcr):
    with httpx.Client() as client:
        first = client.post("http://api.example.test/items?page=1", content=b"one")
    assert first.json() == {"id": "first"}
    assert vcr.play_count == 1
    assert vcr.play_counts == {0: 1}
    assert not vcr.all_played
    assert vcr.record_mode == "none"
    assert vcr.write_protected
    assert len(vcr) == 2
    assert json.loads(vcr.requests[0].body) == {"n": 1, "at": "2024-01-01T00:00:00"}
    assert vcr.requests[1].method == "POST"
    assert vcr.requests[0].uri == "http://api.example.test/items?page=1"
    assert vcr.requests[0].host == "api.example.test"
    assert vcr.requests[0].path == "/items"
    assert vcr.requests[0].query == [("page", "1")]
    assert vcr.requests[0].headers["CONTENT-TYPE"] == "application/json"
    assert json.loads(vcr.responses[1]["body"]["string"]) == {"id": "second"}
    assert vcr.responses[1]["status"] == {"code": 200, "message": "OK"}
    with httpx.Client() as client:
        client.post("http://api.example.test/items?page=1", content=b"two")
    assert vcr.play_count == 2
    assert vcr.play_counts == {0: 1, 1: 1}
    assert vcr.all_played
    assert vcr.agentreplay.path.name == "test_items.yaml"
    assert vcr.path == vcr._path == str(vcr.agentreplay.path)
    assert vcr.path.endswith("/cassettes/test_user/test_items.yaml")
"""


def test_the_vcr_fixture_reads_the_cassette_as_pytest_recording_did(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_user=TEST)
    path = pytester.path / "cassettes" / "test_user" / "test_items.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(VCR_CASSETTE + "version: 1\n")
    result = pytester.runpytest_subprocess("-p", "no:recording", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


# pydantic-ai's conftest, as it reads pytest-recording's ``vcr`` (record_mode compared
# with vcrpy's RecordMode.NONE, a str enum equal to "none").
AUTOUSE_CONFTEST = """
import pytest

@pytest.fixture(autouse=True)
def fail_partially_used_vcr_cassettes(vcr):
    yield
    if vcr is None or vcr.record_mode != "none" or vcr.all_played:
        return
    unused = [i for i in range(len(vcr)) if vcr.play_counts.get(i, 0) == 0]
    pytest.fail(
        f"Cassette {getattr(vcr, '_path', '<unknown>')} did not play all interactions: "
        f"played {vcr.play_count}/{len(vcr)}; unused indexes: {unused}"
    )
"""

AUTOUSE_TESTS = """
import httpx, pytest

def test_plain(vcr):
    assert vcr is None

@pytest.mark.agentreplay
def test_plays_one(vcr):
    with httpx.Client() as client:
        client.post("http://api.example.test/items?page=1", content=b"one")
    assert vcr is not None

@pytest.mark.agentreplay(cassette="test_plays_one.yaml")
def test_plays_both(vcr):
    with httpx.Client() as client:
        client.post("http://api.example.test/items?page=1", content=b"one")
        client.post("http://api.example.test/items?page=1", content=b"two")

@pytest.fixture
def written(request):
    # a cassette written before the agentreplay fixture opens it
    folder = request.path.parent / "cassettes" / "test_user"
    path = folder / "test_with_the_handle.yaml"
    path.write_text((folder / "test_plays_one.yaml").read_text())
    yield
    path.unlink()

def test_with_the_handle(written, agentreplay, vcr):
    # no marker: vcr is None, as pytest-recording's, and did not open the cassette early
    assert vcr is None
    assert len(agentreplay.interactions) == 2
"""


def test_vcr_is_none_outside_the_marker_and_reads_as_vcrpy_s_cassette_inside(
    pytester: pytest.Pytester,
) -> None:
    """An autouse fixture taking ``vcr`` puts no test under a cassette, nor opens the
    cassette of a test taking the ``agentreplay`` fixture before that test's own
    fixtures; in the marked tests it reads the cassette's path, play counts and
    ``all_played``."""
    pytester.makeconftest(AUTOUSE_CONFTEST)
    pytester.makepyfile(test_user=AUTOUSE_TESTS)
    path = pytester.path / "cassettes" / "test_user" / "test_plays_one.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(VCR_CASSETTE + "version: 1\n")
    result = pytester.runpytest_subprocess("-p", "no:recording", "-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=4, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*test_plain PASSED*",
            "*test_plays_one PASSED*",
            "*test_plays_one ERROR*",
            "*test_plays_both PASSED*",
            "*test_with_the_handle PASSED*",
            f"*Cassette {path} did not play all interactions: played 1/2; unused indexes: [[]1]",
        ]
    )


def test_a_test_that_only_asks_for_vcr_is_not_intercepted(pytester: pytest.Pytester) -> None:
    """pytest-recording's ``vcr`` without its marker installs no cassette; ours neither:
    the test is not intercepted, and the summary counts no cassette."""
    pytester.makepyfile(
        test_user="""
        def test_plain(vcr, request):
            assert vcr is None
            from pytest_agentreplay.harness.state import TEST_STATE
            assert request.node.stash.get(TEST_STATE, None) is None
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:recording", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "cassettes used" not in result.stdout.str()


BESIDE_TESTS = """
import httpx, pytest

@pytest.mark.vcr
def test_still_on_pytest_recording(vcr):
    assert type(vcr).__module__ == "vcr.cassette" and len(vcr) == 0

@pytest.mark.agentreplay
def test_migrated(vcr):
    with httpx.Client() as client:
        client.post("http://api.example.test/items?page=1", content=b"one")
    assert type(vcr).__name__ == "VcrCassette"
    assert vcr.play_counts == {0: 1} and vcr._path.endswith("test_migrated.yaml")

def test_plain(vcr):
    assert vcr is None
"""


def test_with_pytest_recording_active_each_test_gets_the_vcr_of_its_marker(
    pytester: pytest.Pytester,
) -> None:
    """A suite migrated test by test, pytest-recording still installed: its ``vcr`` (an
    autouse fixture) is the cassette of its own tests, ours that of ours."""
    pytest.importorskip("pytest_recording")
    pytester.makepyfile(test_user=BESIDE_TESTS)
    path = pytester.path / "cassettes" / "test_user" / "test_migrated.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(VCR_CASSETTE + "version: 1\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
