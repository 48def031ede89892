"""A cassette pytest-recording named differently is pointed at by the miss (issue 26).

pytest-recording replaces ``<>?%*:|"'/\\`` in a test's name with ``-``; this plugin
replaces the characters a file name cannot hold and adds a short hash, so that
``test[a:b]`` and ``test[a-b]`` never share a file (docs/migrating.md). A migrated
suite's files for such tests (5 of pydantic-ai's, their parametrize ids holding
``provider:model``) are not found; the miss now names the file that is there and
the name to give it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agentreplay.harness.paths import safe_name
from tests.cassettes._plugin_runs import run
from tests.migration.test_vcrpy_defaults import VCR_CASSETTE

pytest_plugins = ["pytester"]

TEST = """
import httpx, pytest

class TestItems:
    @pytest.mark.agentreplay
    @pytest.mark.parametrize("model", ["openai:gpt-5"])
    def test_items(self, model):
        with httpx.Client() as client:
            client.post("{url}", content=b"one")
"""

URLS = {
    # a host no cassette serves: the egress guard blocks the call
    "other host": "http://api.example.test/items?page=1",
    # a provider's host: the cassette miss
    "provider": "https://api.anthropic.com/v1/messages",
}


def _folder(pytester: pytest.Pytester) -> Path:
    folder = pytester.path / "cassettes" / "test_user"
    folder.mkdir(parents=True)
    return folder


CONFIG = """
@pytest.fixture
def agentreplay_config():
    return {"filter_headers": ["authorization"], "ignore_localhost": True}
"""


@pytest.mark.parametrize("config", ["", CONFIG], ids=["", "vcrpy keys"])
@pytest.mark.parametrize("url", URLS.values(), ids=list(URLS))
def test_the_miss_names_pytest_recording_s_file_and_the_name_to_give_it(
    pytester: pytest.Pytester, url: str, config: str
) -> None:
    """Also beside vcrpy's keys in ``agentreplay_config`` (pydantic-ai's)."""
    pytester.makepyfile(test_user=TEST.replace("{url}", url) + config)
    theirs = _folder(pytester) / "TestItems.test_items[openai-gpt-5].yaml"
    theirs.write_text(
        VCR_CASSETTE.replace("http://api.example.test/items?page=1", url) + "version: 1\n"
    )
    ours = f"{safe_name('TestItems.test_items[openai:gpt-5]')}.yaml"
    assert ours != theirs.name
    result = run(pytester)
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "pytest-recording's name for this test's cassette is there: " in output
    assert "TestItems.test_items[openai-gpt-5].yaml. This plugin adds a short hash" in output
    assert f"rename it to {ours}, or pass cassette='TestItems.test_items[openai-gpt-5].yaml'" in (
        output
    )
    # and once renamed, it replays
    theirs.rename(theirs.with_name(ours))
    run(pytester).assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("url", "said"),
    [(URLS["other host"], "blocked a live network call"), (URLS["provider"], "no cassette at")],
    ids=list(URLS),
)
def test_without_such_a_file_the_miss_says_nothing_of_it(
    pytester: pytest.Pytester, url: str, said: str
) -> None:
    pytester.makepyfile(test_user=TEST.replace("{url}", url))
    _folder(pytester)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    assert said in result.stdout.str()
    assert "pytest-recording's name" not in result.stdout.str()
