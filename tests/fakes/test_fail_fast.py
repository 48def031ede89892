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
