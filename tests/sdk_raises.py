"""What the installed SDKs raise when a stream breaks, and where google-genai sends.

The plugin's part never changes: a dropped connection is the client's transport error
(``httpx2.RemoteProtocolError``), a read timeout its ``ReadTimeout``. What reaches agent
code is the SDK's choice, and it moved: up to 2.16, ``anthropic`` let an error raised
while it read a streamed body through unwrapped; from 2.17 on, ``iter_response_bytes``
(``anthropic/_streaming.py``) wraps it in ``APIConnectionError`` / ``APITimeoutError``.
``openai`` wraps it on every version the pyproject allows.

google-genai moved too: 3.0 made httpx2 its default client (2.x took httpx when it
was installed), so a cut or a timeout is httpx2's error, and v1 its default API version
(2.x sent to v1beta).

Tests ask here instead of naming one version's exception, so the suite passes on the
lowest and the newest versions the CI sessions install (noxfile.py), and the table in
docs/faults.md states the same boundary. A failure names the package and its version.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest
from packaging.version import Version

ANTHROPIC_WRAPS_STREAM_READS_SINCE = Version("2.17.0")
"""The first ``anthropic`` release that wraps a failed read of a streamed body."""

ANTHROPIC_WRAPS_STREAM_READS = Version(version("anthropic")) >= ANTHROPIC_WRAPS_STREAM_READS_SINCE

GENAI_3 = Version(version("google-genai")) >= Version("3.0.0")
GENAI_HTTP: Any = httpx2 if GENAI_3 else httpx
"""The HTTP library of google-genai's default client, whose errors a cut or a timeout
raise (the SDK wraps neither)."""
GENAI_API_VERSION = "v1" if GENAI_3 else "v1beta"
"""The API version google-genai's default client sends to."""

Expected = tuple[type[BaseException], "type[BaseException] | None"]


def _sdk(provider: str) -> str:
    return "anthropic" if provider == "anthropic" else "openai"


def _wrapped(provider: str, stream: bool) -> bool:
    return provider != "anthropic" or not stream or ANTHROPIC_WRAPS_STREAM_READS


def cut_error(
    provider: str,
    *,
    stream: bool = True,
    transport: type[BaseException] = httpx2.RemoteProtocolError,
) -> Expected:
    """The exception a dropped connection surfaces as, and its ``__cause__`` (or None).

    ``transport`` is what the HTTP client raised: ``RemoteProtocolError`` for httpx2's
    own transport, ``ReadError`` for an aiohttp backend (httpx-aiohttp).
    """
    if not _wrapped(provider, stream):
        return transport, None
    module: Any = anthropic if provider == "anthropic" else openai
    return module.APIConnectionError, transport


def timeout_error(provider: str, *, stream: bool = True) -> Expected:
    """The exception a read timeout after the 200 surfaces as, and its ``__cause__``."""
    if not _wrapped(provider, stream):
        return httpx2.ReadTimeout, None
    module: Any = anthropic if provider == "anthropic" else openai
    return module.APITimeoutError, httpx2.ReadTimeout


_FAMILIES = (httpx2.TransportError, anthropic.APIError, openai.APIError)


def _describe(provider: str) -> str:
    name = _sdk(provider)
    return f"{name} {version(name)}"


@contextmanager
def raises_expected(provider: str, expected: Expected, match: str | None = None) -> Iterator[Any]:
    """``pytest.raises`` for exactly ``expected``'s type, whose cause is its second part.

    The failure message names the SDK and its version, so a session that installed
    another release says which package moved. ``match`` is searched in the transport's
    error (the exception itself, or the cause the SDK wrapped).
    """
    raised, cause = expected
    # Any exception of the families involved is caught, so that a wrong one fails with
    # the SDK's name and version rather than as an unexplained error.
    with pytest.raises((raised, *_FAMILIES)) as info:
        yield info
    got = info.value
    assert type(got) is raised, (
        f"{_describe(provider)} raised {type(got).__module__}.{type(got).__qualname__}"
        f" ({got}), the suite expects {raised.__module__}.{raised.__qualname__} for this"
        " version: see tests/sdk_raises.py and the table in docs/faults.md"
    )
    if cause is not None:
        assert isinstance(got.__cause__, cause), (
            f"{_describe(provider)}: {type(got).__qualname__} is caused by"
            f" {type(got.__cause__).__qualname__}, expected {cause.__qualname__}"
        )
    transport = got if cause is None else got.__cause__
    if match is not None:
        assert re.search(match, str(transport)), f"{match!r} not in {str(transport)!r}"


def assert_reported(provider: str, reported: dict[str, Any], expected: Expected) -> None:
    """A child process's report of what it caught (class names under ``error`` and
    ``cause``) is ``expected``; an unwrapped transport error's own cause is not compared
    (httpx2 chains httpcore2's error of the same name)."""
    raised, cause = expected
    assert reported["error"] == raised.__name__, (
        f"{_describe(provider)} raised {reported['error']} in the child, the suite expects"
        f" {raised.__name__} for this version: see tests/sdk_raises.py"
    )
    if cause is not None:
        assert reported["cause"] == cause.__name__, f"{_describe(provider)}: {reported}"


def raises_cut(
    provider: str,
    *,
    stream: bool = True,
    match: str | None = None,
    transport: type[BaseException] = httpx2.RemoteProtocolError,
) -> Any:
    """Expect a dropped connection as the installed SDK raises it."""
    return raises_expected(provider, cut_error(provider, stream=stream, transport=transport), match)


def raises_timeout(provider: str, *, stream: bool = True) -> Any:
    """Expect a read timeout after the 200 as the installed SDK raises it."""
    return raises_expected(provider, timeout_error(provider, stream=stream))
