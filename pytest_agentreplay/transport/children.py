"""Child processes of a replaying test: an environment that keeps HTTP clients in.

The egress guard lives in the test's process. A child process — ``curl``,
``python -c``, the CLI under test — has sockets of its own, which no patch here
reaches (issue 18, item 12). What can be done is to start it in an environment that
every well-behaved HTTP client obeys: the proxy variables (``HTTP_PROXY``,
``HTTPS_PROXY``, ``ALL_PROXY``, upper and lower case) point at a loopback proxy that
refuses every request (:mod:`.refusing_proxy`: it records the attempt in the test's
blocked ledger and answers one line, not HTTP, saying why), and ``NO_PROXY`` names
only the hosts the active policy allows (loopback, ``allow_hosts``), so a child still
reaches a local fake server and a request for anywhere else fails at once. ``curl``,
``wget``, requests, httpx, urllib, aiohttp (``trust_env``), pip and git follow these
variables; a client that ignores them (a raw socket, a Node
``fetch`` without a proxy agent) is not held.

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
import os
import subprocess
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from . import egress, refusing_proxy

__all__ = [
    "PROXY_VARIABLES",
    "environment",
    "exempt_hosts",
    "install",
    "no_proxy_entries",
    "refusing_port",
]

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


def environment(base: Mapping[Any, Any], exempt: Iterable[str], port: int) -> dict[Any, Any]:
    """``base`` with the proxy variables pointed at ``port`` on loopback and ``NO_PROXY``
    naming ``exempt`` alone (the user's own exemptions could name any host)."""
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
    return env


def _child_env(env: Mapping[Any, Any] | None) -> Mapping[Any, Any] | None:
    """The environment a child started now gets (``env`` unchanged when no blocking
    policy guards children)."""
    policy = egress.current()
    exempt = policy.no_proxy() if policy is not None else None
    if exempt is None:
        return env
    return environment(os.environ if env is None else env, exempt, refusing_port())


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
    ``allow_hosts``."""
    loopback = ["localhost", "127.0.0.1", "::1", ".localhost"] if allow_loopback else []
    return loopback + no_proxy_entries(allow_hosts)
