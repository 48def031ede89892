"""Recording survives what runs do to it: concurrent calls, a process that dies
mid-test, an xdist worker that crashes.
"""

from __future__ import annotations

import pytest

from tests.cassettes._plugin_runs import (
    PRELUDE,
    cassette,
    prompts,
    results,
    run,
    run_subprocess,
)
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]


GATHER = (
    PRELUDE
    + """
import asyncio, anthropic

@pytest.mark.agentreplay
def test_gather(agentreplay):
    sdk = anthropic.AsyncAnthropic(api_key=KEY, base_url=URL, max_retries=0)

    async def one(q):
        message = await sdk.messages.create(model="m", max_tokens=9,
                                            messages=[{"role": "user", "content": q}])
        return message.content[0].text

    async def main():
        async with sdk:
            return await asyncio.gather(*(one(f"q{i}") for i in range(4)))

    report(agentreplay, answers=asyncio.run(main()))
"""
)


def test_concurrent_calls_are_written_in_the_order_they_were_made(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    """``asyncio.gather`` of four calls whose answers arrive in reverse order: the
    cassette lists them as they were made, and a re-recording is byte-identical."""
    echo_server.delays = {"q0": 0.3, "q1": 0.2, "q2": 0.1}
    pytester.makepyfile(test_user=GATHER)
    path = cassette(pytester, "test_gather")
    texts = []
    for _ in range(2):
        run(
            pytester, "--agentreplay-record-mode=rewrite", AR_SERVER=echo_server.url
        ).assert_outcomes(passed=1)
        texts.append(path.read_bytes())
    assert texts[0] == texts[1]
    assert prompts(path) == ["q0", "q1", "q2", "q3"]
    run(pytester).assert_outcomes(passed=1)
    *_, replayed = results(pytester)
    assert replayed["answers"] == [f"echo: q{i}" for i in range(4)]
    assert replayed["sources"] == ["cassette"] * 4


DIES = (
    PRELUDE
    + """
@pytest.mark.agentreplay
def test_dies(agentreplay):
    ask_raw(os.environ["AR_PROMPTS"])
    if os.environ.get("AR_DIE"):
        os._exit(3)  # the process is gone before the cassette is written
"""
)


def test_a_process_that_dies_mid_test_leaves_the_old_cassette_alone(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=DIES)
    path = cassette(pytester, "test_dies")
    mode = "--agentreplay-record-mode=new_episodes"
    run(pytester, mode, AR_SERVER=echo_server.url, AR_PROMPTS="A").assert_outcomes(passed=1)
    before = path.read_bytes()
    died = run_subprocess(pytester, mode, AR_SERVER=echo_server.url, AR_PROMPTS="B", AR_DIE="1")
    assert died.ret == 3
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    assert len(echo_server.requests) == 2


CRASHING_WORKER = (
    PRELUDE
    + """
@pytest.mark.parametrize("n", range(4))
@pytest.mark.agentreplay
def test_one(agentreplay, n):
    ask_raw(f"q{n}")

@pytest.mark.agentreplay
def test_crash(agentreplay):
    ask_raw("doomed")
    os._exit(1)
"""
)


def test_a_crashed_xdist_worker_still_gives_a_full_summary(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=CRASHING_WORKER)
    result = run_subprocess(
        pytester, "-n", "2", "--agentreplay-record-mode=once", AR_SERVER=echo_server.url
    )
    output = result.stdout.str()
    assert "INTERNALERROR" not in output + result.stderr.str()
    result.stdout.fnmatch_lines(["*worker*crashed*", "*- agentreplay -*"])
    result.assert_outcomes(passed=4, failed=1)
    for n in range(4):
        path = cassette(pytester, f"test_one[{n}]")
        assert prompts(path) == [f"q{n}"]
        assert f"  written: {path}" in output
    assert not cassette(pytester, "test_crash").exists()
