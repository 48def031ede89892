"""Item 7: what pytest-agentreplay prints never shows a secret — error messages, miss
diffs, reprs, and the whole failure report of a test (tracebacks with ``-l``, the
``-ra`` summary, JUnit XML), with and without xdist.

Two secrets travel in each request: a random canary in an API-key environment
variable (found by the backstop's scan) and a plain ``?key=`` value of no known
shape (found by the URL rules a cassette gets).
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from pytest_agentreplay.cassettes.cassette import Cassette
from pytest_agentreplay.cassettes.io import dumps
from pytest_agentreplay.harness.report_mask import mask_report
from pytest_agentreplay.transport.router import HTTPRequest, Router
from tests.cassettes._plugin_runs import run, run_subprocess
from tests.cli._helpers import json_interaction

pytest_plugins = ["pytester"]

USER_TESTS = """
import os, httpx2, pytest

CANARY, PLAIN = os.environ["AR_CANARY_API_KEY"], os.environ["AR_PLAIN"]
BODY = {"model": "gpt-test", "stream": False,
        "messages": [{"role": "user", "content": "Weather? " + CANARY}]}


@pytest.mark.agentreplay
def test_blocked(agentreplay):
    print("calling", CANARY)
    httpx2.get(f"https://telemetry.example.com/t/{CANARY}?key={PLAIN}")


@pytest.mark.agentreplay(cassette="recorded.yaml")
def test_miss_diff(agentreplay):
    httpx2.post("https://api.openai.com/v1/chat/completions?key=" + PLAIN, json=BODY)


@pytest.mark.agentreplay
def test_assertion_and_reprs(agentreplay):
    url = f"https://user:{PLAIN}@api.example.com/v1?key={CANARY}"
    assert repr(agentreplay) == url, f"unexpected handle for {url}"
"""


def _recorded(folder: Path) -> None:
    """The cassette ``test_miss_diff`` misses: same call, without the canary."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "recorded.yaml").write_text(dumps(Cassette(interactions=[json_interaction()])))


def test_reprs_leave_out_the_url_parts_that_carry_credentials() -> None:
    secret = secrets.token_hex(12)
    request = HTTPRequest(
        method="GET",
        url=f"https://u:{secret}@h.example/v1/x?key={secret}#access_token={secret}",
        headers=(("authorization", f"Bearer {secret}"),),
        content=secret.encode(),
    )
    assert repr(request) == "HTTPRequest(GET https://h.example/v1/x?…, family='')"
    router = Router(test="t", mask=lambda text: text.replace(secret, "REDACTED"))
    error = router.refuse(f"GET {request.url}", "h.example")
    assert secret not in str(error)
    assert secret not in repr(router)


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_error_messages_diffs_reprs_and_tracebacks_mask_secrets(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    pytester.makepyfile(test_user=USER_TESTS)
    _recorded(pytester.path / "cassettes" / "test_user")
    canary, plain = f"ck-{secrets.token_urlsafe(24)}", f"p{secrets.token_hex(10)}"
    runner = run_subprocess if workers else run
    junit = pytester.path / "junit.xml"
    result = runner(
        pytester,
        *workers,
        "-l",
        "--tb=long",
        "-rA",
        f"--junitxml={junit}",
        AR_CANARY_API_KEY=canary,
        AR_PLAIN=plain,
    )
    result.assert_outcomes(failed=3)
    printed = result.stdout.str() + result.stderr.str() + junit.read_text()
    assert canary not in printed
    assert plain not in printed
    # The reports are masked, not dropped: each still says what went wrong.
    result.stdout.fnmatch_lines_random(
        [
            "*EgressBlocked: *GET https://telemetry.example.com/t/REDACTED?key=REDACTED*",
            "*messages[[]0[]].content: recorded 'Weather?', now 'Weather? REDACTED'*",
            "*AssertionError: unexpected handle for https://user:REDACTED@api.example.com/v1"
            "?key=REDACTED*",
            "*calling REDACTED*",
        ]
    )


def test_a_report_that_cannot_be_masked_is_withheld_not_an_internal_error() -> None:
    secret = secrets.token_hex(12)
    report = pytest.TestReport(
        "t.py::t", ("t.py", 1, "t"), {}, "failed", f"boom {secret}", "call", [("out", secret)]
    )

    def broken(text: str) -> str:
        raise RuntimeError(text)

    mask_report(report, broken)
    assert secret not in str(report.longrepr)
    assert "could not mask this failure report (RuntimeError)" in str(report.longrepr)
    assert report.sections == []
