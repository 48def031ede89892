"""Child processes of a replaying test: an environment that keeps them in.

The egress guard lives in the test's process. A child process — ``curl``,
``python -c``, the CLI under test — has sockets of its own, which no patch here
reaches (issue 18, item 12). It is started in an environment that holds it two ways:

- every well-behaved HTTP client obeys the proxy variables (``HTTP_PROXY``,
  ``HTTPS_PROXY``, ``ALL_PROXY``, upper and lower case): they point at a loopback
  proxy that refuses every request (:mod:`.refusing_proxy`: it records the attempt in
  the test's blocked ledger and answers one line, not HTTP, saying why), and
  ``NO_PROXY`` names only the hosts the active policy allows (loopback addresses,
  ``localhost`` when it resolves there, ``allow_hosts``), so a child still reaches a
  local fake server and a request for anywhere else fails at once. ``curl``,
  ``wget``, requests, httpx, urllib, aiohttp (``trust_env``), pip and git follow them;
- a child Python carries the guard itself (issue 27: a raw ``socket.create_connection``
  in a child reached the network): ``PYTHONPATH`` starts with a folder whose
  ``sitecustomize`` (:mod:`.child_site`) guards its sockets and name lookups as the
  test's own are guarded, by the policy in ``AGENTREPLAY_CHILD_GUARD``.

What is not held: a child that is not Python and ignores the proxy variables (a raw
socket in C, a Node ``fetch`` without a proxy agent), a Python started with ``-S``,
``-I`` or ``-E`` (no ``sitecustomize``, or no ``PYTHONPATH``), and a child that drops
its environment. :func:`no_network` runs a command where nothing outside it can be
reached, in a network namespace of its own (Linux).

Every child started through :class:`subprocess.Popen` — ``subprocess.run``,
``os.popen``, asyncio's subprocesses — while a blocking policy is active gets that
environment, built from the ``env=`` it was given or from ``os.environ``; the test's
own environment is not changed, so clients in the test's process see no proxy. The
policy's :meth:`~.egress.Policy.no_proxy` returning ``None`` switches it off.
``os.system``, ``os.exec*``, ``os.spawn*`` and ``os.posix_spawn`` keep the
process's environment.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import egress, refusing_proxy
from .errors import NetworkNamespaceUnavailable

__all__ = [
    "GUARD_VARIABLE",
    "PROXY_VARIABLES",
    "SITE_FOLDER",
    "NetworkNamespaceUnavailable",
    "environment",
    "exempt_hosts",
    "install",
    "no_network",
    "no_proxy_entries",
    "refusing_port",
]

GUARD_VARIABLE = "AGENTREPLAY_CHILD_GUARD"
"""The variable a child Python's guard reads its policy from (JSON)."""
SITE_FOLDER = str(Path(__file__).with_name("child_site"))
"""The folder put first on a child's ``PYTHONPATH``: its ``sitecustomize`` is the guard."""

PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)
_EXEMPT_VARIABLES = ("NO_PROXY", "no_proxy")
_lock = threading.Lock()
_installed = False


def refusing_port() -> int:
    """The loopback port of the proxy that refuses every request a child sends it and
    records it in the active test's blocked ledger (:mod:`.refusing_proxy`)."""
    return refusing_proxy.port()


def no_proxy_entries(hosts: Iterable[str]) -> list[str]:
    """``hosts`` (names, addresses, ``*.example.com`` globs) as ``NO_PROXY`` entries:
    a leading ``*.`` becomes ``.`` (a suffix, to curl and requests); a glob that names
    no suffix cannot be said in ``NO_PROXY`` and is left out (its host is refused)."""
    entries = []
    for host in hosts:
        if host.startswith("*.") and not any(c in host[2:] for c in "*?["):
            entries.append(host[1:])
        elif not any(c in host for c in "*?["):
            entries.append(host)
    return entries


def environment(
    base: Mapping[Any, Any],
    exempt: Iterable[str],
    port: int,
    guard: Mapping[str, Any] | None = None,
) -> dict[Any, Any]:
    """``base`` with the proxy variables pointed at ``port`` on loopback, ``NO_PROXY``
    naming ``exempt`` alone (the user's own exemptions could name any host), and, given
    the ``guard`` policy, a child Python's own guard on its ``PYTHONPATH``."""
    env = dict(base)
    as_bytes = any(isinstance(key, bytes) for key in env)

    def key(name: str) -> Any:
        return name.encode() if as_bytes else name

    def value(text: str) -> Any:
        return text.encode() if as_bytes else text

    for name in PROXY_VARIABLES:
        env[key(name)] = value(f"http://127.0.0.1:{port}")
    joined = ",".join(exempt)
    for name in _EXEMPT_VARIABLES:
        env.pop(key(name), None)
        if joined:
            env[key(name)] = value(joined)
    if guard is not None:
        env[key(GUARD_VARIABLE)] = value(json.dumps({**guard, "proxy": port}))
        before = env.get(key("PYTHONPATH"))
        path = SITE_FOLDER if not before else SITE_FOLDER + os.pathsep + _text(before)
        env[key("PYTHONPATH")] = value(path)
    return env


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _child_env(env: Mapping[Any, Any] | None) -> Mapping[Any, Any] | None:
    """The environment a child started now gets (``env`` unchanged when no blocking
    policy guards children)."""
    policy = egress.current()
    exempt = policy.no_proxy() if policy is not None else None
    if policy is None or exempt is None:
        return env
    base = os.environ if env is None else env
    return environment(base, exempt, refusing_port(), policy.child_policy())


def install() -> None:
    """Wrap ``subprocess.Popen.__init__`` once; it changes nothing while no blocking
    policy is active."""
    global _installed  # noqa: PLW0603
    with _lock:
        if _installed:
            return
        _installed = True
    original = subprocess.Popen.__init__
    signature = inspect.signature(original)

    def init(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        bound = None
        if egress.current() is not None:
            with contextlib.suppress(TypeError):  # bad arguments: Popen's own error follows
                bound = signature.bind(self, *args, **kwargs)
        if bound is None:
            original(self, *args, **kwargs)
            return
        bound.arguments["env"] = _child_env(bound.arguments.get("env"))
        original(*bound.args, **bound.kwargs)

    init.__doc__ = original.__doc__
    subprocess.Popen.__init__ = init  # type: ignore[method-assign]


def exempt_hosts(allow_loopback: bool, allow_hosts: Iterable[str]) -> list[str]:
    """The ``NO_PROXY`` entries of a policy that allows loopback (or not) and
    ``allow_hosts``. ``localhost`` only when it resolves to loopback here, and never
    ``.localhost``: ``*.localhost`` is loopback only where it resolves there, which a
    child that is not Python decides by itself (issue 27)."""
    loopback = ["127.0.0.1", "::1"] if allow_loopback else []
    if allow_loopback and egress.resolves_to_loopback("localhost"):
        loopback.insert(0, "localhost")
    return loopback + no_proxy_entries(allow_hosts)


_namespaces: list[str | None] = []  # the probe's verdict, once per process


def _namespace_problem() -> str | None:
    """Why no network namespace can be made here, or ``None`` when one can."""
    if _namespaces:
        return _namespaces[0]
    unshare = shutil.which("unshare")
    if not sys.platform.startswith("linux") or unshare is None:
        problem: str | None = "network namespaces need Linux and unshare (util-linux)"
    else:
        probe = subprocess.run(
            [unshare, "--net", "--map-root-user", "true"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            env={**os.environ, "PATH": os.environ.get("PATH", "")},
        )
        problem = None if probe.returncode == 0 else f"unshare refused: {probe.stderr.strip()}"
    _namespaces.append(problem)
    return problem


def no_network(argv: Sequence[str]) -> list[str]:
    """``argv`` wrapped to run in a network namespace of its own, for a child that is not
    Python and may ignore the proxy variables: it can reach nothing outside it — not the
    network, not this machine's loopback (a fake on a port included) — only its own
    loopback. Linux, with user namespaces permitted (``unshare --net --map-root-user``;
    the command runs as root of its own namespace). Raises
    :class:`NetworkNamespaceUnavailable` saying why where none can be made::

        subprocess.run(no_network(["node", "agent.js"]), check=True)
    """
    problem = _namespace_problem()
    if problem is not None:
        raise NetworkNamespaceUnavailable(problem)
    unshare = shutil.which("unshare")
    assert unshare is not None
    lo_up = 'ip link set lo up 2>/dev/null || true; exec "$@"'
    return [unshare, "--net", "--map-root-user", "sh", "-c", lo_up, "agentreplay", *argv]
