"""Which aiohttp releases the plugin hooks itself; older ones go through vcrpy.

The hook is a client middleware (aiohttp 3.12) that reads a request's body with
``Payload.as_bytes`` (3.12.2): on 3.12.0 every hooked request failed with an
``AttributeError``, which the lowest CI session found.
"""

from __future__ import annotations

import inspect

import aiohttp
import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version

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


VERSIONS = st.builds(
    "{}{}{}{}{}{}".format,
    st.sampled_from(["", "v", "1!"]),
    st.lists(st.integers(0, 20), min_size=1, max_size=4).map(lambda n: ".".join(map(str, n))),
    st.sampled_from(["", "a1", "b2", "rc1", "RC3"]),
    st.sampled_from(["", ".post1"]),
    st.sampled_from(["", ".dev4"]),
    st.sampled_from(["", "+local.7"]),
)


@given(VERSIONS)
def test_the_release_is_read_as_packaging_reads_it(version: str) -> None:
    """The version is read without ``packaging`` (its import cost a replayed suite over
    a millisecond): the same release numbers, so the same verdict."""
    assert aio.hookable(version) is (Version(version).release >= aio.MIN_VERSION)


@pytest.mark.parametrize("version", ["", "unknown", "dev"])
def test_a_version_that_cannot_be_read_is_not_hooked(version: str) -> None:
    assert aio.hookable(version) is False
