"""Issue 18, item 5: under ``-l`` / ``--showlocals`` (and in the arguments a long
traceback shows), a refused write printed reprs of the cassette session, the
cassette and the YAML text cut to 240 characters — and the cut split a query key
before the masker could recognise it, so a piece of the key reached the CI log.

Here the key sits in a URL query at many offsets, so that pytest's cut lands
everywhere in and around it; no piece of it may be printed, at any length.
"""

from __future__ import annotations

import secrets

import pytest

from pytest_agentreplay.neutral import Reply
from tests.cassettes._plugin_runs import run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

PADDINGS = list(range(0, 240, 7))

USER_TEST = """
import os
import httpx2, pytest

URL, KEY, CANARY = os.environ["AR_SERVER"], os.environ["AR_QUERY"], os.environ["AR_CANARY_API_KEY"]


@pytest.mark.agentreplay
@pytest.mark.parametrize("pad", [int(n) for n in os.environ["AR_PADDINGS"].split(",")])
def test_call(agentreplay, pad):
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": CANARY}]}
    url = f"{URL}/{'p' * pad}/v1/messages?key={KEY}"
    assert httpx2.post(url, json=body).status_code == 200
"""


def _pieces(secret: str, size: int = 8) -> set[str]:
    return {secret[n : n + size] for n in range(len(secret) - size + 1)}


@pytest.mark.parametrize("verbosity", [[], ["-vv"]], ids=["cut", "whole"])
def test_no_piece_of_a_key_in_locals_at_any_length(
    pytester: pytest.Pytester, server: ProviderServer, verbosity: list[str]
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    for _ in PADDINGS:
        server.add(Reply.text("ok"))
    key, canary = secrets.token_hex(20), f"ck-{secrets.token_urlsafe(24)}"
    result = run(
        pytester,
        "-l",
        "--tb=long",
        *verbosity,
        "--agentreplay-record-mode=once",
        AR_SERVER=server.url,
        AR_QUERY=key,
        AR_CANARY_API_KEY=canary,
        AR_PADDINGS=",".join(map(str, PADDINGS)),
    )
    result.assert_outcomes(passed=len(PADDINGS), errors=len(PADDINGS))
    printed = result.stdout.str() + result.stderr.str()
    assert "refusing to write" in printed
    assert "session" in printed and "REDACTED" in printed  # locals were shown, masked
    assert not [piece for piece in _pieces(key) | _pieces(canary) if piece in printed]
