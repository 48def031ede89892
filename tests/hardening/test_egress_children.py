"""Issue 18, item 12: a child process of a replaying test reached the network.

The guard is in the test's process; a child gets an environment that well-behaved
HTTP clients obey instead: proxy variables pointing at a refusing loopback port, and
``NO_PROXY`` naming only what the test may reach. The children here aim at a witness
server on loopback with loopback blocked for the test, so a request that got out
would be counted.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_agentreplay import invariants
from tests.hardening._witness import Witness, witness

pytest_plugins = ["pytester"]

URLLIB = "import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + '/child', timeout=5)"
REQUESTS = "import sys, requests; requests.get(sys.argv[1] + '/child', timeout=5)"
HTTPX = "import sys, httpx; httpx.get(sys.argv[1] + '/child', timeout=5)"
ENV = "import json, os; print(json.dumps(dict(os.environ)))"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Witness]:
    with witness(tmp_path_factory.mktemp("witness")) as running:
        yield running


@pytest.fixture(autouse=True)
def _no_proxy_of_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    """The children see the proxies the plugin gives them, not the runner's."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def _python(code: str, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        **kwargs,
    )


def _child_env(**kwargs: Any) -> dict[str, str]:
    result: dict[str, str] = json.loads(_python(ENV, **kwargs).stdout)
    return result


CHILDREN = {"urllib": URLLIB, "requests": REQUESTS, "httpx": HTTPX}


class TestLoopbackBlocked:
    @pytest.fixture
    def agentreplay_config(self) -> dict[str, Any]:
        return {"block_loopback": True}

    @pytest.mark.parametrize("client", sorted(CHILDREN))
    def test_a_python_child_is_held(
        self, server: Witness, scripted_model: object, client: str
    ) -> None:
        before = server.lines()
        child = _python(CHILDREN[client], server.url)
        assert child.returncode != 0
        # The refusing proxy's line reaches the child's error, naming what it blocked.
        assert "pytest-agentreplay blocked a live network call" in child.stderr
        assert f"GET {server.url}/child" in child.stderr
        assert server.lines() == before, f"a {client} child reached the witness"
        # ... and the test's ledger has it, as a blocked call of the test's own.
        with pytest.raises(AssertionError, match="a child process's GET"):
            invariants.assert_no_live_calls()

    @pytest.mark.parametrize("client", ["httpx", "requests"])
    def test_a_tunnel_for_https_is_refused_and_ledgered_without_its_query(
        self, scripted_model: object, client: str
    ) -> None:
        """An HTTPS request goes through the proxy as ``CONNECT host:443``: refused with
        the reason in the child's error, in the test's ledger, and the URL's query (a
        key, in Gemini's case) never named anywhere."""
        key = "AIza" + "q" * 35
        call = f"{client}.get('https://api.example.com/v1/models?key={key}', timeout=5)"
        child = _python(f"import {client}; {call}")
        assert child.returncode != 0
        assert "pytest-agentreplay blocked" in child.stderr
        assert "CONNECT api.example.com:443" in child.stderr
        assert key not in child.stderr
        with pytest.raises(AssertionError, match="CONNECT api.example.com:443") as failed:
            invariants.assert_no_live_calls()
        assert key not in str(failed.value)

    def test_curl_is_held(self, server: Witness, scripted_model: object) -> None:
        curl = shutil.which("curl")
        if curl is None:
            pytest.skip("curl is not installed")
        before = server.lines()
        child = subprocess.run(
            [curl, "-sS", "--max-time", "10", f"{server.url}/curl"],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert child.returncode != 0, child.stdout
        assert server.lines() == before, "curl reached the witness"

    def test_an_asyncio_child_is_held(self, server: Witness, scripted_model: object) -> None:
        async def run() -> int:
            child = await asyncio.create_subprocess_exec(
                sys.executable, "-c", URLLIB, server.url, stderr=asyncio.subprocess.DEVNULL
            )
            return await child.wait()

        before = server.lines()
        assert asyncio.run(run()) != 0
        assert server.lines() == before

    def test_an_env_given_to_the_child_is_kept_and_its_exemptions_dropped(
        self, scripted_model: object
    ) -> None:
        env = {"PATH": os.environ.get("PATH", ""), "MINE": "1", "NO_PROXY": "*"}
        child = _child_env(env=env)
        assert child["MINE"] == "1"
        assert child["HTTP_PROXY"].startswith("http://127.0.0.1:")
        assert child["https_proxy"] == child["HTTP_PROXY"] == child["ALL_PROXY"]
        assert "NO_PROXY" not in child, "loopback is blocked: nothing is exempt"


def test_bad_arguments_get_popens_own_error(scripted_model: object) -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'nonsense'"):
        subprocess.Popen(["true"], nonsense=1)  # type: ignore[call-overload]


def test_a_child_still_reaches_what_the_test_may(server: Witness, scripted_model: object) -> None:
    """Loopback is allowed: ``NO_PROXY`` names it, so a child reaches a local server."""
    child = _python(URLLIB, server.url)
    assert child.returncode == 0, child.stderr
    assert server.lines()[-1] == "GET /child HTTP/1.1"


@pytest.mark.agentreplay(allow_hosts=["*.internal.example", "api.example"])
def test_allowed_hosts_are_exempt() -> None:
    exempt = _child_env()["NO_PROXY"].split(",")
    assert {"localhost", "127.0.0.1", ".internal.example", "api.example"} <= set(exempt)


def test_the_tests_own_environment_is_untouched(scripted_model: object) -> None:
    """Clients in the test's process see no proxy: the guard holds them itself."""
    assert "HTTP_PROXY" not in os.environ
    _python("pass")
    assert "HTTP_PROXY" not in os.environ


@pytest.mark.agentreplay(guard_subprocesses=False)
def test_the_marker_switches_it_off() -> None:
    assert "HTTP_PROXY" not in _child_env()


def test_a_test_that_does_not_intercept_leaves_children_alone() -> None:
    assert "HTTP_PROXY" not in _child_env()


def test_the_ini_key_switches_it_off(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nagentreplay_guard_subprocesses = false\n")
    pytester.makepyfile(
        test_user=f"""
import subprocess, sys

def test_child(scripted_model):
    out = subprocess.run([sys.executable, "-c", {ENV!r}], capture_output=True, text=True)
    assert "HTTP_PROXY" not in out.stdout
"""
    )
    pytester.runpytest().assert_outcomes(passed=1)
