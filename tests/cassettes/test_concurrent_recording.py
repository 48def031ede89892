"""Several xdist workers recording into one cassette: nothing lost, nothing leaked,
and the same file every time — the file a serial run writes.

Eight tests share ``shared.yaml`` and record in ``new_episodes`` mode; later
tests finish first (they sleep less), so the workers write in an order unlike the
collection order. The file must parse, hold every interaction, hold no secret,
and be byte-identical across runs and to a serial run's. The summary counts are
merged from the workers.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.io import load, save
from pytest_agentreplay.cassettes.merge import fingerprint, order_blocks
from pytest_agentreplay.redact import Scrubber
from tests.cassettes._plugin_runs import PRELUDE, interactions, prompts, run, run_subprocess
from tests.cassettes.test_strict_and_summary import summary
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

SHARED = (
    PRELUDE
    + """
import time

ASKS = 1 if os.environ.get("AR_REPLAY_ONE") else 2

@pytest.mark.parametrize("n", range(8))
@pytest.mark.agentreplay(cassette="shared.yaml")
def test_shared(agentreplay, n):
    time.sleep((8 - n) * 0.01)  # the last tests finish first
    report(agentreplay, answers=[ask_raw(f"q{n}.{i}") for i in range(ASKS)])
"""
)
EXPECTED = [f"q{n}.{i}" for n in range(8) for i in range(2)]


def _record(
    pytester: pytest.Pytester, echo_server: ProviderServer, *args: str, key: str
) -> tuple[bytes, pytest.RunResult]:
    folder = pytester.path / "cassettes"
    shutil.rmtree(folder, ignore_errors=True)
    runner = run_subprocess if args else run
    result = runner(
        pytester,
        "--agentreplay-record-mode=new_episodes",
        *args,
        AR_SERVER=echo_server.url,
        AR_KEY=key,
    )
    result.assert_outcomes(passed=8)
    path = folder / "test_user" / "shared.yaml"
    assert len(load(path).interactions) == 16
    assert sorted(prompts(path)) == sorted(EXPECTED)
    assert key.encode() not in path.read_bytes()
    assert {i["request"]["headers"]["x-api-key"] for i in interactions(path)} == {"REDACTED"}
    assert sorted(p.name for p in path.parent.iterdir()) == ["shared.yaml"], "no temp files"
    return path.read_bytes(), result


def test_four_workers_write_the_file_a_serial_run_writes(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=SHARED)
    key = f"sk-ant-api03-{secrets.token_urlsafe(32)}"
    serial, _ = _record(pytester, echo_server, key=key)
    assert prompts(pytester.path / "cassettes/test_user/shared.yaml") == EXPECTED
    again, _ = _record(pytester, echo_server, key=key)
    assert again == serial
    xdist, result = _record(pytester, echo_server, "-n", "4", key=key)
    assert xdist == serial
    counts = summary(result.stdout.str())
    # (How many interactions other tests had already written when each test started,
    # and so it left unplayed, depends on timing: not counted here.)
    counts.pop("unplayed interactions", None)
    assert counts == {
        "cassettes used": "1",
        "interactions replayed": "0",
        "cassettes written": "1",
        "interactions recorded": "16",
        "live calls": "16",
    }, "the summary adds up what the four workers did"


def test_the_replay_summary_is_merged_from_the_workers(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    """Replayed on two workers, one of each test's two calls: the summary counts the
    whole run's replayed and unplayed interactions."""
    pytester.makepyfile(test_user=SHARED)
    _record(pytester, echo_server, key="sk-test")
    replayed = run_subprocess(pytester, "-n", "2", AR_REPLAY_ONE="1")
    replayed.assert_outcomes(passed=8)
    # Each test played 1 of its 2 interactions of the shared cassette: an interaction
    # counts as played when any test played it, wherever that test ran.
    output = replayed.stdout.str()
    assert summary(output) == {
        "cassettes used": "1",
        "interactions replayed": "8",
        "cassettes written": "0",
        "interactions recorded": "0",
        "unplayed interactions": "8",
        "live calls": "0",
    }
    assert "(8 tests)" in output
    assert len(echo_server.requests) == 16


def test_rewrite_keeps_what_other_tests_of_the_run_wrote(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    """``rewrite`` replaces what a shared cassette held before the run, not what the
    other tests sharing it recorded during the run."""
    pytester.makepyfile(test_user=SHARED)
    path = pytester.path / "cassettes" / "test_user" / "shared.yaml"
    path.parent.mkdir(parents=True)
    _seed(path)
    result = run(pytester, "--agentreplay-record-mode=rewrite", AR_SERVER=echo_server.url)
    result.assert_outcomes(passed=8)
    assert prompts(path) == EXPECTED


def _seed(path: Path) -> None:
    """A cassette from an earlier run (an hour old), which ``rewrite`` must drop."""
    path.write_text(
        "interactions:\n"
        "- request:\n"
        "    method: POST\n"
        "    url: http://127.0.0.1:9/v1/messages\n"
        "    json: {model: old, messages: [{role: user, content: stale}]}\n"
        "  response:\n"
        "    status: 200\n"
        "    json: {content: [{type: text, text: stale}]}\n"
        "version: 1\n"
    )
    past = time.time() - 3600
    os.utime(path, (past, past))


def _interaction(text: str) -> Interaction:
    return Interaction(
        request=RecordedRequest(method="POST", url="http://h/v1/messages", json={"q": text}),
        response=RecordedResponse(status=200, json={"a": text}),
    )


def test_order_blocks_sorts_the_blocks_it_finds_and_keeps_the_rest_first(tmp_path: Path) -> None:
    old, a1, a2, b1, c1 = (_interaction(t) for t in ("old", "a1", "a2", "b1", "c1"))
    path = tmp_path / "shared.yaml"
    # Written in the order the workers finished: c (test 2), b (test 1), a (test 0).
    save(path, Cassette(interactions=[old, c1, b1, a1, a2]))
    blocks = [
        (2, [fingerprint(c1)]),
        (0, [fingerprint(a1), fingerprint(a2)]),
        (1, [fingerprint(b1)]),
    ]
    blocks.append((3, [fingerprint(_interaction("never written"))]))
    assert order_blocks(path, blocks, Scrubber())
    assert [i.request.json_body["q"] for i in load(path).interactions] == [
        "old",
        "a1",
        "a2",
        "b1",
        "c1",
    ]
    before = path.read_bytes()
    assert not order_blocks(path, blocks, Scrubber()), "already in order: not rewritten"
    assert path.read_bytes() == before
