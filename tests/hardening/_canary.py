"""A canary listener: a TCP server that counts the connections it accepts.

``netns_canary()`` puts it on a non-loopback address inside a network namespace made
for the test (a veth pair links it to this one), so a connection the egress guard
failed to stop would really arrive — and be counted. ``loopback_canary()`` is the
same on 127.0.0.1, for runs with loopback blocking on. Both first prove they are
reachable (one connection, made outside any test's interception), so "zero new
connections" means the guard stopped everything, not that nothing could get there.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import pytest

_LISTENER = """
import socket, sys
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind((sys.argv[1], 0))
server.listen(16)
print(server.getsockname()[1], flush=True)
with open(sys.argv[2], "a") as log:
    while True:
        conn, peer = server.accept()
        log.write(f"{peer[0]}\\n")
        log.flush()
        conn.close()
"""


@dataclass
class Canary:
    """Where the canary listens, and how many connections it has accepted."""

    host: str
    port: int
    log: Path
    note: str = field(default="")

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/canary"

    def accepted(self) -> int:
        return len(self.log.read_text().splitlines()) if self.log.exists() else 0

    def prove_reachable(self) -> None:
        """One connection from outside any interception: the canary must count it."""
        before = self.accepted()
        socket.create_connection((self.host, self.port), timeout=5).close()
        for _ in range(200):
            if self.accepted() == before + 1:
                return
            threading.Event().wait(0.01)
        raise AssertionError(f"the canary at {self.host}:{self.port} did not count a connection")


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=10)


def _host(net: str, n: int) -> str:
    """Host ``n`` of the /30 network whose first address is ``net``."""
    head, _, last = net.rpartition(".")
    return f"{head}.{int(last) + n}"


@contextmanager
def netns_canary(tmp: Path) -> Iterator[Canary]:
    """A canary on a 10.213.x.y address in a fresh network namespace, linked by a veth
    pair to its neighbour address here. Raises ``PermissionError`` (with the reason)
    where namespaces or veth links cannot be made."""
    tag = f"ar{os.getpid() % 100_000}"
    slot = os.getpid() % 16_384  # a /30 of 10.213.0.0/16 per process (xdist workers)
    net = f"10.213.{slot >> 6}.{(slot & 63) * 4}"
    here, there = f"{tag}a", f"{tag}b"
    try:
        _ip("netns", "add", tag)
    except (OSError, subprocess.CalledProcessError) as exc:
        reason = getattr(exc, "stderr", "") or str(exc)
        raise PermissionError(f"cannot create a network namespace: {reason.strip()}") from exc
    listener = None
    try:
        _ip("link", "add", here, "type", "veth", "peer", "name", there)
        _ip("link", "set", there, "netns", tag)
        _ip("addr", "add", f"{_host(net, 1)}/30", "dev", here)
        _ip("link", "set", here, "up")
        _ip("-n", tag, "addr", "add", f"{_host(net, 2)}/30", "dev", there)
        _ip("-n", tag, "link", "set", there, "up")
        log = tmp / "netns-canary.log"
        listener = subprocess.Popen(
            ["ip", "netns", "exec", tag, sys.executable, "-c", _LISTENER, _host(net, 2), str(log)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert listener.stdout is not None
        port = int(listener.stdout.readline())
        yield Canary(_host(net, 2), port, log, note=f"network namespace {tag}")
    finally:
        if listener is not None:
            _stop(listener)
        with suppress(subprocess.CalledProcessError, OSError):
            _ip("link", "del", here)
        with suppress(subprocess.CalledProcessError, OSError):
            _ip("netns", "del", tag)


@contextmanager
def loopback_canary(tmp: Path) -> Iterator[Canary]:
    """A canary on 127.0.0.1 (reachable unless loopback blocking is on)."""
    log = tmp / "loopback-canary.log"
    listener = subprocess.Popen(
        [sys.executable, "-c", _LISTENER, "127.0.0.1", str(log)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert listener.stdout is not None
        yield Canary("127.0.0.1", int(listener.stdout.readline()), log, note="loopback")
    finally:
        _stop(listener)


def _stop(listener: subprocess.Popen[str]) -> None:
    listener.kill()
    listener.wait(timeout=10)
    if listener.stdout is not None:
        listener.stdout.close()


WHERE = [
    pytest.param("netns", id="netns"),
    pytest.param("loopback", id="loopback", marks=pytest.mark.agentreplay(block_loopback=True)),
]
"""Where a test's canary listens: ``@pytest.mark.parametrize("canary", WHERE, indirect=True)``."""
