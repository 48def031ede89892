"""assert_no_live_calls: nothing reached the network, and replay answered every call
from the recording.

Read from the egress ledger: the test's router (fixtures), the cassette handle
(`agentreplay`), or a run log built from it. Seeded bugs: a base URL leaked from
the environment that points the SDK at a local proxy (loopback is allowed, so the
call silently goes out live), a fire-and-forget telemetry task whose blocked
request nobody looks at, and a prompt stamped with the clock, which no recording
can match (in `new_episodes` mode it goes out live and is recorded again).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx2
import pytest

from pytest_agentreplay import FakeModel, Reply, Usage, invariants
from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.invariants import InvariantViolation
from pytest_agentreplay.neutral import Request
from pytest_agentreplay.providers import codec_for
from pytest_agentreplay.providers.base import RenderContext
from pytest_agentreplay.runlog import Egress, RunLog
from pytest_agentreplay.transport.router import Router
from tests.cassettes._plugin_runs import run
from tests.invariants._toy import ToyAgent
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]


@pytest.mark.anyio
async def test_a_run_served_by_a_fake_makes_no_live_call(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text("Offline answer."))
    await ToyAgent(log=RunLog()).run_turn("hi")

    invariants.assert_no_live_calls()


@pytest.mark.anyio
async def test_a_base_url_leaked_to_a_local_proxy_goes_live(
    scripted_model: FakeModel, echo_server: ProviderServer
) -> None:
    scripted_model.check_unused = False  # the agent never reaches the fake
    scripted_model.script(Reply.text("Offline answer."))
    agent = ToyAgent(log=RunLog(), base_url=echo_server.url)  # e.g. ANTHROPIC_BASE_URL in CI

    assert (await agent.run_turn("hi") or "").startswith("echo: ")  # the proxy answered
    await agent.aclose()

    with pytest.raises(InvariantViolation) as failure:
        invariants.assert_no_live_calls()
    assert str(failure.value).splitlines() == [
        f"assert_no_live_calls failed at live call #1: POST {echo_server.url}/v1/messages: 1 "
        f"request(s) went out to the network instead of being answered by a fake model or "
        f"from the recording",
        "  diff:",
        f"    live_calls[0]: new logged: 'POST {echo_server.url}/v1/messages'",
    ]


@pytest.mark.anyio
async def test_a_blocked_request_that_the_agent_ignored_fails(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text("Offline answer."))

    async def telemetry() -> None:
        async with httpx2.AsyncClient() as client:
            await client.post("https://telemetry.example.com/v1/events", json={"event": "turn"})

    task = asyncio.create_task(telemetry())  # fire and forget
    await ToyAgent(log=RunLog()).run_turn("hi")
    await asyncio.wait([task])
    assert task.exception() is not None  # EgressBlocked, seen by nobody

    with pytest.raises(
        InvariantViolation,
        match=r"failed at blocked request #1: POST "
        r"https://telemetry\.example\.com/v1/events: the run tried to reach the "
        r"network 1 time\(s\)",
    ):
        invariants.assert_no_live_calls()


def test_the_ledger_can_be_passed_in() -> None:
    invariants.assert_no_live_calls(Router())
    invariants.assert_no_live_calls(Egress())
    with pytest.raises(InvariantViolation, match="recorded interaction #2"):
        invariants.assert_no_live_calls(Egress(unplayed=[2]), all_played=True)
    with pytest.raises(ValueError, match="needs an active interception scope"):
        invariants.assert_no_live_calls()
    with pytest.raises(ValueError, match="this run log has no egress ledger"):
        invariants.assert_no_live_calls(RunLog())


# --- cassettes, end to end through pytest ---------------------------------------------------

USER_TESTS = """
import os, time
import anthropic, pytest
from pytest_agentreplay import invariants
from pytest_agentreplay.runlog import RunLog


def ask(prompt):
    client = anthropic.Anthropic(api_key="test-key", base_url=os.environ.get("AR_BASE") or None,
                                 max_retries=0)
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=64,
                                messages=[{"role": "user", "content": prompt}]) as stream:
        return stream.get_final_message().content[0].text


@pytest.mark.agentreplay(cassette="hello.yaml")
def test_replay(agentreplay):
    assert ask("Hi") == "Hello from the recording."
    log = RunLog.from_cassette(agentreplay)
    invariants.assert_no_live_calls(agentreplay, all_played=True)
    invariants.assert_no_live_calls(log)
    assert [(c.outcome, c.streaming) for c in log.model_calls] == [("completed", True)]
    assert log.model_calls[0].reply.text_content == "Hello from the recording."


@pytest.mark.agentreplay(cassette="hello.yaml")
def test_unplayed(agentreplay):
    invariants.assert_no_live_calls(agentreplay, all_played=True)


@pytest.mark.agentreplay(cassette="local.yaml", record_mode="new_episodes")
def test_a_prompt_with_a_clock(agentreplay):
    ask(f"Hi (sent at {time.time():.0f})")  # the runtime stamps its prompt: no recording matches
    invariants.assert_no_live_calls(agentreplay)
"""


def _cassette(path: Path, url: str) -> None:
    codec = codec_for("anthropic")
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 64,
        "stream": True,
        "messages": [{"role": "user", "content": "Hi"}],
    }
    reply = Reply.text("Hello from the recording.", usage=Usage(input_tokens=8, output_tokens=5))
    events = codec.render_events(reply, RenderContext(request=Request(provider="anthropic")))
    cassette_io.save(
        path,
        Cassette(
            interactions=[
                Interaction(
                    request=RecordedRequest(method="POST", url=url, json=body),  # type: ignore[call-arg]
                    response=RecordedResponse(
                        status=200,
                        headers={"content-type": codec.stream_content_type},
                        events=[RecordedEvent.from_sse(e, t=0.0) for e in events],
                    ),
                )
            ]
        ),
    )


def test_replay_answers_every_call_from_the_recording(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    folder = pytester.path / "cassettes" / "test_user"
    folder.mkdir(parents=True)
    _cassette(folder / "hello.yaml", "https://api.anthropic.com/v1/messages")
    _cassette(folder / "local.yaml", f"{echo_server.url}/v1/messages")
    pytester.makepyfile(test_user=USER_TESTS)

    result = run(pytester, "test_user.py::test_replay", AR_BASE="")
    result.assert_outcomes(passed=1)

    result = run(pytester, "test_user.py::test_unplayed", AR_BASE="")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*assert_no_live_calls failed at recorded interaction #0: 1 "
            "recorded interaction(s) were never played*"
        ]
    )

    result = run(pytester, "test_user.py::test_a_prompt_with_a_clock", AR_BASE=echo_server.url)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"*assert_no_live_calls failed at live call #1: POST {echo_server.url}/v1/messages: 1 "
            f"request(s) went out to the network instead of being answered by a fake model or from "
            f"the recording*",
        ]
    )
    assert len(echo_server.requests) == 1  # it really went out
