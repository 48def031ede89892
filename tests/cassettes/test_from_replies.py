"""cassettes.from_replies: an offline cassette from replies in one call (issue 20,
item 8), replayed through the real SDKs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import pytest_agentreplay.cassettes.yaml.load  # noqa: F401 - one copy for in-process runs
from pytest_agentreplay import Fault, Reply, cassettes, invariants
from tests import sdk

pytest_plugins = ["pytester"]


@pytest.mark.parametrize("provider", sdk.PROVIDERS)
@pytest.mark.parametrize("stream", [True, False])
def test_a_cassette_from_replies_serves_the_real_sdks(provider: str, stream: bool) -> None:
    cassette = cassettes.from_replies(
        Reply.text("Hello from the cassette."), provider=provider, stream=stream
    )
    [interaction] = cassette.interactions
    assert interaction.response.is_stream is stream

    def run(streaming: bool) -> Any:
        return sdk.call(provider, stream=streaming).text

    runs = invariants.assert_stream_parity(run, cassette=cassette)
    assert {r.state for r in runs} == {"Hello from the cassette."}


def test_it_is_saved_and_replayed_by_the_marker(pytester: pytest.Pytester) -> None:
    body = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}
    cassettes.from_replies(
        "first", "second", stream=False, request=body,
        path=pytester.path / "cassettes" / "test_user" / "test_agent.yaml",
    )  # fmt: skip
    pytester.makepyfile(
        test_user="""
import anthropic, pytest

@pytest.mark.agentreplay
def test_agent():
    client = anthropic.Anthropic(api_key="k", max_retries=0)
    ask = lambda: client.messages.create(
        model="m", max_tokens=9, messages=[{"role": "user", "content": "hi"}])
    assert [ask().content[0].text for _ in range(2)] == ["first", "second"]
"""
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_ids_are_reproducible_and_loaded_back_alike(tmp_path: Path) -> None:
    one = cassettes.from_replies(Reply.tool_call("weather", {"city": "Leeds"}), seed="s")
    two = cassettes.from_replies(Reply.tool_call("weather", {"city": "Leeds"}), seed="s")
    assert one == two
    cassettes.from_replies(Reply.tool_call("weather", {"city": "Leeds"}), seed="s",
                           path=tmp_path / "c.yaml")  # fmt: skip
    assert cassettes.load(tmp_path / "c.yaml").interactions == one.interactions


def test_a_fault_is_refused_with_what_to_do_instead() -> None:
    with pytest.raises(ValueError, match=r"reply #1 carries a fault .*inject\(fault, at_call=1\)"):
        cassettes.from_replies("ok", Reply.failure(Fault.http(429)))
    with pytest.raises(TypeError, match="reply #0 is 3"):
        cassettes.from_replies(3)  # type: ignore[arg-type]
