"""A refused call in an async test is that test's failure, under every async runner.

``EgressBlocked`` (and ``CassetteMiss``) must get past agent code's ``except
Exception``, so it is not an ``Exception``; but anyio's test runner treats any other
``BaseException`` like Ctrl-C: its runner task dies with the error unretrieved, the
next async test of the module breaks, and on Python 3.11 the garbage collector's
report of that task can crash pytest while it formats a failure. As a pytest failure
outcome the refusal is reported as the test's own failure and the runner lives on.
"""

from __future__ import annotations

import httpx2  # noqa: F401 - imported here once, so in-process runs reuse it
import pytest

from pytest_agentreplay import EgressBlocked
from pytest_agentreplay.cassettes.errors import CassetteMiss

pytest_plugins = ["pytester"]

ASYNC_TESTS = """
import anthropic, httpx2, pytest

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.mark.anyio
async def test_blocked():
    async with httpx2.AsyncClient() as client:
        await client.get("https://api.example.com/v1/models")

@pytest.mark.anyio
@pytest.mark.agentreplay
async def test_missing_cassette():
    client = anthropic.AsyncAnthropic(api_key="k", max_retries=0)
    await client.messages.create(model="m", max_tokens=5,
                                 messages=[{"role": "user", "content": "hi"}])

@pytest.mark.anyio
async def test_after_them(scripted_model):
    scripted_model.script("still served")
    client = anthropic.AsyncAnthropic(api_key="k")
    reply = await client.messages.create(model="m", max_tokens=5,
                                         messages=[{"role": "user", "content": "hi"}])
    assert reply.content[0].text == "still served"
"""


def test_refusals_are_pytest_failures_that_no_except_exception_catches() -> None:
    """anyio's runner passes pytest outcomes through as the test's result and keeps
    running; any other ``BaseException`` ends it, as Ctrl-C would."""
    assert issubclass(EgressBlocked, pytest.fail.Exception)
    assert issubclass(CassetteMiss, EgressBlocked)
    assert not issubclass(EgressBlocked, Exception)
    assert str(EgressBlocked("blocked GET x")) == "blocked GET x"


def test_an_anyio_test_refused_a_call_fails_and_the_next_one_runs(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_user=ASYNC_TESTS)
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--agentreplay-block-network", "-W", "error"
    )
    result.assert_outcomes(failed=2, passed=1)
    output = result.stdout.str()
    assert "INTERNALERROR" not in output
    result.stdout.fnmatch_lines(
        [
            "E*EgressBlocked: *blocked a live network call*api.example.com*",
            "E*CassetteMiss: *no cassette at*",
        ]
    )
