"""Which requests are a cassette's business in replay, besides the ones it matches.

In replay-only modes a request the cassette cannot answer is either a **miss**,
reported with a diagnosis (a model call on any host; a request to a host the cassette
recorded), or not the cassette's business at all, left to the egress rules.

On loopback the port tells services apart. Matching ignores the port (a fake provider
on a fresh port each run still replays), but a cassette that recorded an MCP server on
``127.0.0.1:51111`` claimed every request to 127.0.0.1: a local service on another
port was answered from it or failed as a miss, where without a cassette it passes
(issue 31). So a loopback port the cassette never recorded is claimed only for model
calls.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from urllib.parse import urlsplit

from ..providers import detect
from ..transport.egress import resolves_to_loopback

__all__ = ["Origins", "origin"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


@lru_cache(maxsize=512)
def origin(url: str) -> tuple[str, int | None]:
    """A URL's host (lower-cased) and port (the scheme's default filled in). Remembered:
    every replayed request asks it of its URL, and a suite calls a few (issue 29)."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    default = _DEFAULT_PORTS.get(parts.scheme.lower())
    return (parts.hostname or "").lower(), port if port is not None else default


class Origins:
    """The hosts and ports a cassette recorded, and what that makes its business."""

    def __init__(self, urls: Iterable[str]) -> None:
        self._recorded = {origin(url) for url in urls}
        self._hosts = {host for host, _ in self._recorded}

    def is_miss(self, method: str, url: str) -> bool:
        """Whether an unmatched request is a miss to report: a model call (a provider
        endpoint on any host, a test server on loopback too), a request to a loopback
        host and port the cassette recorded, or to another host it recorded."""
        if detect(method, urlsplit(url).path) is not None:
            return True
        host, port = origin(url)
        if resolves_to_loopback(host):
            return (host, port) in self._recorded
        return host in self._hosts

    def elsewhere(self, method: str, url: str) -> bool:
        """Whether ``url`` is a loopback port the cassette never recorded, and not a
        model call: another local service, which replay leaves alone."""
        host, port = origin(url)
        if (host, port) in self._recorded or not resolves_to_loopback(host):
            return False
        return detect(method, urlsplit(url).path) is None
