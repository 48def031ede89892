"""Fixtures of the migration suites: a plain loopback web server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.migration._web import WebServer


@pytest.fixture
def web_server() -> Iterator[WebServer]:
    """A plain loopback web server (not a model API)."""
    server = WebServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def web(web_server: WebServer) -> str:
    """The URL of :func:`web_server`."""
    return web_server.url
