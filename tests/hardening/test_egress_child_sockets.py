"""Issue 27, item 21: a child process of a replaying test that opens a raw socket.

Children got only the proxy variables, which a raw socket ignores: a child Python's
``socket.create_connection`` reached the network. And a resolver that maps
``*.localhost`` to an outside address let the test's own httpx and a child's urllib
reach it: the name was taken for loopback.

Now a child Python carries the guard itself (a ``sitecustomize`` on its
``PYTHONPATH``), ``*.localhost`` is loopback only if it resolves there, and a child
that is not Python can be run with no network at all (``no_network``, a network
namespace), where one can be made. The canary listens on a non-loopback address of a
network namespace made for the test, or on loopback with loopback blocked: a
connection that got out would be counted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest

from pytest_agentreplay import EgressBlocked, invariants
from pytest_agentreplay.transport import egress
from pytest_agentreplay.transport.children import NetworkNamespaceUnavailable, no_network
from tests.hardening._canary import WHERE, Canary, loopback_canary

TIMEOUT = 120  # a hung child fails the test instead of the run (not a speed bound)


@pytest.fixture(autouse=True)
def _no_proxy_of_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    """The children see the proxies the plugin gives them, not the runner's."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def _python(code: str, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        **kwargs,
    )


RAW = {
    "create_connection": "socket.create_connection((HOST, PORT), timeout=5)",
    "connect_ex": "assert socket.socket().connect_ex((HOST, PORT)) == 0, 'refused'",
    "bytes host": "socket.socket().connect((HOST.encode(), PORT))",
    "http.client": (
        "import http.client; c = http.client.HTTPConnection(HOST, PORT, timeout=5); "
        "c.request('GET', '/'); c.getresponse()"
    ),
    "urllib, no proxies": (
        "import urllib.request as u; "
        "u.build_opener(u.ProxyHandler({})).open(f'http://{HOST}:{PORT}/', timeout=5)"
    ),
}
CHILD = """
import socket, sys
HOST, PORT = sys.argv[1], int(sys.argv[2])
{code}
print("reached")
"""


@pytest.mark.parametrize("canary", WHERE, indirect=True)
@pytest.mark.parametrize("how", RAW)
def test_a_child_python_opening_a_raw_socket_is_refused(
    canary: Canary, scripted_model: object, how: str, request: pytest.FixtureRequest
) -> None:
    before = canary.accepted()
    child = _python(CHILD.format(code=RAW[how]), canary.host, str(canary.port))
    assert child.returncode != 0, child.stdout
    assert "reached" not in child.stdout
    assert "pytest-agentreplay blocked a live network call from a child process" in child.stderr
    assert request.node.nodeid in child.stderr
    assert canary.accepted() == before, f"a child's {how} reached the canary ({canary.note})"
    # The attempt is in the test's own ledger, as a blocked call.
    with pytest.raises(AssertionError, match=f"a child process's socket connect to {canary.host}"):
        invariants.assert_no_live_calls()


@pytest.mark.parametrize("canary", WHERE, indirect=True)
def test_a_child_datagram_is_refused(canary: Canary, scripted_model: object) -> None:
    child = _python(
        "import socket, sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
        ".sendto(b'x', (sys.argv[1], 53))",
        canary.host,
    )
    assert child.returncode != 0
    assert f"socket sendto to {canary.host}:53" in child.stderr


def test_a_child_still_reaches_loopback_when_the_test_may(
    tmp_path: Path, scripted_model: object
) -> None:
    with loopback_canary(tmp_path) as listener:
        before = listener.accepted()
        child = _python(
            CHILD.format(code=RAW["create_connection"]), "127.0.0.1", str(listener.port)
        )
        assert child.returncode == 0, child.stderr
        for _ in range(500):  # the canary logs the connection in its own time
            if listener.accepted() == before + 1:
                break
            _settle()
        assert listener.accepted() == before + 1


def _settle() -> None:
    """A moment for the canary to log what it accepted (it runs in its own process)."""
    time.sleep(0.01)


def test_a_sitecustomize_of_the_childs_own_still_runs(
    tmp_path: Path, scripted_model: object
) -> None:
    """A virtualenv's or coverage's ``sitecustomize`` is chained, not hidden."""
    mine = tmp_path / "site"
    mine.mkdir()
    (mine / "sitecustomize.py").write_text("import os\nos.environ['MINE_RAN'] = '1'\n")
    env = {**os.environ, "PYTHONPATH": str(mine)}
    child = _python(
        "import os, socket, sys, json\n"
        "try:\n"
        "    socket.create_connection(('203.0.113.9', 9), timeout=5)\n"
        "    guarded = False\n"
        "except ConnectionRefusedError as exc:\n"
        "    guarded = 'pytest-agentreplay' in str(exc)\n"
        "print(json.dumps({'mine': os.environ.get('MINE_RAN'), 'guarded': guarded,\n"
        "    'path': [p for p in sys.path if 'child_site' in p]}))\n",
        env=env,
    )
    seen = json.loads(child.stdout.strip().splitlines()[-1])
    assert seen == {"mine": "1", "guarded": True, "path": []}


# --- *.localhost is loopback only where it resolves -------------------------------------


@pytest.fixture
def outside_localhost(canary: Canary, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Canary]:
    """A resolver that maps ``evil.localhost`` to the canary's (outside) address."""
    original = egress._original_getaddrinfo

    def resolver(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host.lower().endswith(".localhost"):
            host = canary.host
        return original(host, port, *args, **kwargs)

    monkeypatch.setattr(egress, "_original_getaddrinfo", resolver)
    return "evil.localhost", canary


@pytest.mark.parametrize("canary", [pytest.param("netns", id="netns")], indirect=True)
def test_the_tests_own_client_does_not_take_a_name_for_loopback(
    outside_localhost: tuple[str, Canary], scripted_model: object
) -> None:
    name, canary = outside_localhost
    before = canary.accepted()
    with pytest.raises(EgressBlocked, match=name):
        httpx2.get(f"http://{name}:{canary.port}/")
    assert canary.accepted() == before


LOCALHOST_CHILD = """
import json, socket, sys, urllib.request as u
real = socket.getaddrinfo
def resolver(host, *args, **kwargs):  # a resolver that maps *.localhost outside
    if isinstance(host, str) and host.endswith(".localhost"):
        host = sys.argv[1]
    return real(host, *args, **kwargs)
socket.getaddrinfo = resolver
out = {}
for name, opener in (("direct", u.build_opener(u.ProxyHandler({}))), ("env", u.build_opener())):
    try:
        opener.open(f"http://evil.localhost:{sys.argv[2]}/", timeout=5)
        out[name] = "reached"
    except Exception as exc:
        out[name] = str(exc)
print(json.dumps(out))
"""


@pytest.mark.parametrize("canary", [pytest.param("netns", id="netns")], indirect=True)
def test_a_childs_urllib_does_not_take_a_name_for_loopback(
    canary: Canary, scripted_model: object
) -> None:
    before = canary.accepted()
    child = _python(LOCALHOST_CHILD, canary.host, str(canary.port))
    seen = json.loads(child.stdout.strip().splitlines()[-1])
    assert seen["direct"] != "reached" and "pytest-agentreplay blocked" in seen["direct"]
    assert seen["env"] != "reached" and "pytest-agentreplay blocked" in seen["env"]
    assert canary.accepted() == before


def test_no_proxy_names_localhost_only_where_it_resolves_to_loopback(
    scripted_model: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = json.loads(_python("import json, os; print(json.dumps(dict(os.environ)))").stdout)
    assert env["NO_PROXY"].split(",") == ["localhost", "127.0.0.1", "::1"]
    assert ".localhost" not in env["NO_PROXY"]
    monkeypatch.setattr(
        egress, "_original_getaddrinfo", lambda *a, **k: [(2, 1, 6, "", ("192.0.2.9", 0))]
    )
    env = json.loads(_python("import json, os; print(json.dumps(dict(os.environ)))").stdout)
    assert env["NO_PROXY"].split(",") == ["127.0.0.1", "::1"]


# --- a child that is not Python ---------------------------------------------------------

CURL = ["curl", "-sS", "--noproxy", "*", "--max-time", "10"]


@pytest.mark.parametrize("canary", [pytest.param("netns", id="netns")], indirect=True)
def test_a_child_that_ignores_the_proxy_variables_is_held_by_no_network(
    canary: Canary, scripted_model: object
) -> None:
    """What the environment cannot hold (curl told to ignore the proxies reaches the
    canary: the documented limit), a network namespace holds."""
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    try:
        isolated = no_network([*CURL, canary.url])
    except NetworkNamespaceUnavailable as exc:
        pytest.skip(f"no network namespace can be made here: {exc}")
    before = canary.accepted()
    loose = subprocess.run(
        [*CURL, canary.url], capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    for _ in range(500):
        if canary.accepted() > before:
            break
        _settle()
    assert canary.accepted() == before + 1, loose.stderr  # not held: the documented limit
    held = subprocess.run(isolated, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert held.returncode != 0
    assert canary.accepted() == before + 1  # nothing more arrived


def test_no_network_says_why_where_no_namespace_can_be_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_agentreplay.transport import children

    monkeypatch.setattr(children, "_namespaces", ["unshare refused: operation not permitted"])
    with pytest.raises(NetworkNamespaceUnavailable, match="operation not permitted"):
        no_network(["true"])
