"""Issue 18, item 6: an API key the test itself puts in the environment — with
``monkeypatch.setenv`` or inside ``mock.patch.dict(os.environ)`` — and sends in a URL
path is caught by the backstop, although the environment no longer holds it when the
cassette is written (monkeypatch is undone before the plugin's fixture tears down).

The key has no known shape: only its value, captured while the test runs, gives it
away. The write is refused, the secret never printed.
"""

from __future__ import annotations

import secrets

import pytest

from pytest_agentreplay.neutral import Reply
from tests.cassettes._plugin_runs import cassette, run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

USER_TEST = """
import os
from unittest import mock

import httpx2, pytest

URL, SECRET = os.environ["AR_SERVER"], os.environ["AR_SET_LATER"]
BODY = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}


def call():
    key = os.environ["GATEWAY_API_KEY"]
    response = httpx2.post(f"{URL}/gateway/{key}/v1/messages", json=BODY)
    assert response.status_code == 200


@pytest.mark.agentreplay
def test_monkeypatch(agentreplay, monkeypatch):
    monkeypatch.setenv("GATEWAY_API_KEY", SECRET)
    call()


@pytest.mark.agentreplay
def test_patch_dict(agentreplay):
    with mock.patch.dict(os.environ, {"GATEWAY_API_KEY": SECRET}):
        call()
    assert "GATEWAY_API_KEY" not in os.environ


@pytest.mark.agentreplay
def test_setenv_fixture_first(monkeypatch, agentreplay):
    monkeypatch.setenv("GATEWAY_API_KEY", SECRET)
    call()
"""

TESTS = ["test_monkeypatch", "test_patch_dict", "test_setenv_fixture_first"]


def test_a_key_set_during_the_test_never_reaches_disk(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    for _ in TESTS:
        server.add(Reply.text("ok"))
    secret = f"gw-{secrets.token_hex(16)}"
    result = run(
        pytester,
        "--agentreplay-record-mode=once",
        AR_SERVER=server.url,
        AR_SET_LATER=secret,
    )
    result.assert_outcomes(passed=len(TESTS), errors=len(TESTS))
    assert all(secret in path for path in server.paths), "the key went out in the path"
    for name in TESTS:
        assert not cassette(pytester, name).exists(), name
    result.stdout.fnmatch_lines_random(["*env:GATEWAY_API_KEY*"] * len(TESTS))
    printed = result.stdout.str() + result.stderr.str()
    assert secret not in printed
    assert secret[3:19] not in printed
