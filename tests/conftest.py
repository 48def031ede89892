"""Suite-wide settings: a bounded, derandomized hypothesis profile for CI."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.servers import ProviderServer, provider_server

settings.register_profile(
    "ci",
    max_examples=60,
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def anyio_backend() -> str:
    """Async tests run on asyncio (the SDKs' default event loop)."""
    return "asyncio"


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    """A loopback server speaking the providers' wire formats, answering from its
    script (``server.add(reply)``): what tests record from."""
    with provider_server() as state:
        yield state


@pytest.fixture
def echo_server(server: ProviderServer) -> ProviderServer:
    """``server`` that, once its script is used up, answers every model call with
    ``echo: <the last user message>``: any number of distinct calls to record."""
    server.echo = True
    return server
