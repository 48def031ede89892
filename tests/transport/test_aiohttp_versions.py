"""Which aiohttp releases the plugin hooks itself; older ones go through vcrpy.

The hook is a client middleware (aiohttp 3.12) that reads a request's body with
``Payload.as_bytes`` (3.12.2): on 3.12.0 every hooked request failed with an
``AttributeError``, which the lowest CI session found.
"""

from __future__ import annotations

import inspect

import aiohttp
import pytest

from pytest_agentreplay.transport import aio


@pytest.mark.parametrize(
    ("version", "hooked"),
    [
        ("3.11.18", False),
        ("3.12.0", False),
        ("3.12.2", True),
        ("3.12.15", True),
        ("3.14.5", True),
        ("4.0.0a1", True),
    ],
)
def test_a_release_is_hooked_from_3_12_2(version: str, hooked: bool) -> None:
    assert aio.hookable(version) is hooked


def test_the_installed_aiohttp_has_what_the_hook_uses() -> None:
    """Run by the lowest and newest CI sessions too: a release the plugin claims to
    hook must have the two APIs the hook is built on."""
    assert aio.supported() is aio.hookable(aiohttp.__version__)
    if aio.supported():
        assert "middlewares" in inspect.signature(aiohttp.ClientSession).parameters
        assert inspect.iscoroutinefunction(aiohttp.payload.Payload.as_bytes)
