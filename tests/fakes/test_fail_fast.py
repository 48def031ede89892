"""Fakes that fail fast and say why (issue 20, items 1-4): a call past the script, a
held call never released, an interrupt no stream used, two fake fixtures in one test."""

from __future__ import annotations

import anthropic  # noqa: F401 - imported once here, so in-process runs reuse it
import openai  # noqa: F401
import pytest

import pytest_agentreplay.fakes  # noqa: F401

pytest_plugins = ["pytester"]

HEADER = """
import asyncio, threading
import anthropic, openai, pytest
from pytest_agentreplay import Fault, Reply, UnexpectedModelCall

def ask(text="hi", *, stream=False, retries=0):
    client = anthropic.Anthropic(api_key="k", max_retries=retries)
    kwargs = dict(model="m", max_tokens=9, messages=[{"role": "user", "content": text}])
    if stream:
        with client.messages.stream(**kwargs) as s:
            return s.get_final_message()
    return client.messages.create(**kwargs)

async def aask(text="hi", *, retries=0):
    client = anthropic.AsyncAnthropic(api_key="k", max_retries=retries)
    return await client.messages.create(
        model="m", max_tokens=9, messages=[{"role": "user", "content": text}])
"""


def run(pytester: pytest.Pytester, body: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_user=HEADER + body)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def test_a_call_past_the_script_stops_the_test_through_retry_loops(
    pytester: pytest.Pytester,
) -> None:
    # Before issue 20: a 500 the SDK (2 retries) and the agent (5 tries) retried.
    result = run(
        pytester,
        """
CALLS = []

def agent(question):
    for attempt in range(5):
        try:
            return ask(question, retries=2)
        except Exception as exc:
            CALLS.append(exc)
    raise RuntimeError("AgentError: the model kept failing")

def test_agent(scripted_model):
    scripted_model.script(Reply.text("one"))
    agent("first")
    try:
        agent("second question")
    finally:
        CALLS.append(len(scripted_model.calls))

def test_calls_were_not_retried():
    assert CALLS == [2]
""",
    )
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "*scripted_model: received a model call after its script ran out (call #1)*",
            "*POST https://api.anthropic.com/v1/messages*",
            "*second question*",
            "*scripted_model.script(...)*",
        ]
    )
    result.stdout.no_fnmatch_line("*AgentError*")


def test_a_call_past_the_script_stops_an_async_test(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
def test_agent(scripted_model):
    async def main():
        try:
            await aask("too many", retries=3)
        except Exception:
            pytest.fail("swallowed by except Exception")
    asyncio.run(main())
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*script ran out (call #0)*", "*too many*"])
    result.stdout.no_fnmatch_line("*swallowed*")


def test_a_call_past_the_script_masks_secrets_in_the_request(
    pytester: pytest.Pytester,
) -> None:
    secret = "sk-ant-api03-" + "Q" * 40
    result = run(
        pytester,
        f"""
def test_agent(scripted_model):
    ask("my key is {secret}")
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*script ran out (call #0)*"])
    assert secret not in result.stdout.str()


def test_a_call_past_the_script_is_still_reported_when_the_agent_catches_everything(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
def test_agent(scripted_model):
    try:
        ask("a")
    except BaseException:
        pass
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*script ran out (call #0)*"])


def test_the_exception_is_a_pytest_failure_and_public() -> None:
    from _pytest.outcomes import Failed

    from pytest_agentreplay import UnexpectedModelCall

    assert issubclass(UnexpectedModelCall, Failed)
    assert not issubclass(UnexpectedModelCall, Exception)


def test_a_forgotten_release_says_the_call_is_held_and_what_to_call(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
def test_cancelled_while_held(blocking_model):
    blocking_model.script(Reply.text("after release"))
    async def main():
        task = asyncio.create_task(aask("q"))
        assert await blocking_model.wait_blocked_async(5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    asyncio.run(main())

def test_released(blocking_model):
    blocking_model.script(Reply.text("after release"))
    out = []
    worker = threading.Thread(target=lambda: out.append(ask("q").content[0].text))
    worker.start()
    assert blocking_model.wait_blocked(5)
    blocking_model.release()
    worker.join(5)
    assert out == ["after release"]
""",
    )
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "*blocking_model: call #0 was held by block() and never released*",
            "*after release*",
            "*Call blocking_model.release()*",
        ]
    )
    result.stdout.no_fnmatch_line("*never requested*")


@pytest.mark.parametrize("stream", [True, False])
def test_an_interrupt_no_stream_used_fails_the_test(
    pytester: pytest.Pytester, stream: bool
) -> None:
    result = run(
        pytester,
        f"""
def test_agent(interrupting_model):
    interrupting_model.script(Reply.text("one two three four"))
    try:
        ask("q", stream={stream})
    except Exception:  # the cut stream (httpx's RemoteProtocolError): retry
        ask("q", stream={stream})
""",
    )
    if stream:
        result.assert_outcomes(passed=1)
        return
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*interrupting_model: 1 interrupt queued by interrupt() never cut a stream "
            "(call #0 did not stream;*"
        ]
    )


def test_a_fake_used_as_a_block_reports_an_unused_interrupt() -> None:
    from pytest_agentreplay import FakeModel

    with pytest.raises(AssertionError, match="no call came"), FakeModel().interrupt():
        pass


def test_two_fake_fixtures_in_one_test_are_one_fake(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
def test_held_then_cut(interrupting_model, blocking_model):
    assert interrupting_model is blocking_model
    blocking_model.script(Reply.text("one two three four five six"))
    out = []
    def agent():
        try:
            ask("q", stream=True)
        except Exception as exc:
            out.append("cut")
        out.append(ask("q", stream=True).content[0].text)
    worker = threading.Thread(target=agent)
    worker.start()
    assert blocking_model.wait_blocked(5)
    blocking_model.release()
    worker.join(30)
    assert out == ["cut", "one two three four five six"]
    assert [c.outcome for c in blocking_model.log] == ["cut", "completed"]
""",
    )
    result.assert_outcomes(passed=1)


def test_cassette_miss_is_exported_at_the_top_level() -> None:
    import pytest_agentreplay
    from pytest_agentreplay.cassettes.errors import CassetteMiss

    assert pytest_agentreplay.CassetteMiss is CassetteMiss
    assert "CassetteMiss" in pytest_agentreplay.__all__
