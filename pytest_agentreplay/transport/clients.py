"""Which client library sent a request, read from its headers.

A call log that says ``anthropic 2.17.0 (python, CPython 3.12.3)`` or ``node fetch``
answers the first question of a failure in a mixed suite (issue 30, item 7): which
of the agent's clients made this call. What the libraries send:

- the Stainless SDKs (``anthropic``, ``openai``, in Python and in JS): a
  ``User-Agent`` of ``Anthropic/Python 2.17.0`` and ``x-stainless-lang``,
  ``x-stainless-package-version``, ``x-stainless-runtime``, ``-runtime-version`` and
  ``x-stainless-async``;
- google-genai: ``x-goog-api-client: google-genai-sdk/1.2.0 gl-python/3.12.3``;
- the HTTP clients' defaults: ``python-httpx/0.28.1``, ``python-httpx2/2.17.0``,
  ``Python/3.12 aiohttp/3.10.5``, ``python-requests/2.32.3``,
  ``Python-urllib/3.12``, ``curl/8.5.0``; Node's own ``fetch`` (undici) sends
  ``node`` (older releases ``undici``).

Anything else is the ``User-Agent`` itself, cut short. Pure: no I/O, no imports of
the libraries it names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

__all__ = ["client_library"]

_MAX = 80  # characters of an unknown User-Agent kept
_STAINLESS_UA = re.compile(r"(?P<name>[A-Za-z][\w.-]*)/(?P<lang>[A-Za-z]+) (?P<version>\S+)")
_GOOG_SDK = re.compile(r"(?:^|\s)google-genai-sdk/(?P<version>\S+)")
_GOOG_LANG = re.compile(r"(?:^|\s)gl-(?P<lang>[a-z]+)/(?P<version>\S+)")
_DEFAULTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^python-httpx2/(\S+)"), "httpx2"),
    (re.compile(r"^python-httpx/(\S+)"), "httpx"),
    (re.compile(r"\baiohttp/(\S+)"), "aiohttp"),
    (re.compile(r"^python-requests/(\S+)"), "requests"),
    (re.compile(r"^Python-urllib/(\S+)"), "urllib"),
    (re.compile(r"^curl/(\S+)"), "curl"),
)
_NODE_FETCH = frozenset({"node", "undici"})


def client_library(
    headers: Mapping[str, str] | Iterable[tuple[str | bytes, str | bytes]],
) -> str | None:
    """The library that sent a request with ``headers`` (a mapping, or pairs decoded or
    as the client module holds them: bytes), in a few words; ``None`` when it sent no
    ``User-Agent`` and no SDK header.

    Read from the few headers that say it, and remembered for them: every replayed
    call is logged with its client, and a suite's calls come from a handful of them
    (issue 29: reading them again per call was a few per cent of a replayed request).
    The other headers are passed over by their first letter, undecoded."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    found = []
    for name, value in pairs:
        if name[:1] not in _FIRST:
            continue
        low = _text(name).lower()
        if low == "user-agent" or low.startswith(_SAYING):
            found.append((low, _text(value).strip()))
    return _library(tuple(found))


_SAYING = ("x-stainless-", "x-goog-api-client")
"""The headers besides ``User-Agent`` that name a client (no credential among them)."""

_FIRST: frozenset[str | bytes] = frozenset(("u", "U", "x", "X", b"u", b"U", b"x", b"X"))
"""How those names start, in any case, as text or bytes."""


def _text(value: str | bytes) -> str:
    return value if isinstance(value, str) else value.decode("latin-1")


@lru_cache(maxsize=128)
def _library(pairs: tuple[tuple[str, str], ...]) -> str | None:
    seen = dict(pairs)
    return _stainless(seen) or _google(seen) or _default(seen.get("user-agent", ""))


def _stainless(headers: dict[str, str]) -> str | None:
    """``anthropic 2.17.0 (python, CPython 3.12.3, async)`` from a Stainless SDK."""
    lang = headers.get("x-stainless-lang")
    if not lang:
        return None
    agent = _STAINLESS_UA.match(headers.get("user-agent", ""))
    name = agent.group("name").lower() if agent else "stainless sdk"
    if name.startswith("async") and len(name) > len("async"):  # AsyncAnthropic/Python
        name = name.removeprefix("async")
    version = headers.get("x-stainless-package-version") or (
        agent.group("version") if agent else ""
    )
    runtime = " ".join(
        v
        for v in (headers.get("x-stainless-runtime"), headers.get("x-stainless-runtime-version"))
        if v
    )
    details = [lang.lower(), *([runtime] if runtime else [])]
    if headers.get("x-stainless-async", "false") not in ("", "false"):
        details.append("async")
    return f"{name} {version}".strip() + f" ({', '.join(details)})"


def _google(headers: dict[str, str]) -> str | None:
    """``google-genai 1.2.0 (python 3.12.3)`` from google-genai's ``x-goog-api-client``."""
    for value in (headers.get("x-goog-api-client", ""), headers.get("user-agent", "")):
        sdk = _GOOG_SDK.search(value)
        if sdk is None:
            continue
        lang = _GOOG_LANG.search(value)
        where = f" ({lang.group('lang')} {lang.group('version')})" if lang else ""
        return f"google-genai {sdk.group('version')}{where}"
    return None


def _default(agent: str) -> str | None:
    """An HTTP client's default ``User-Agent`` by name, else the value itself."""
    if not agent:
        return None
    if agent.lower() in _NODE_FETCH:
        return f"node fetch ({agent.lower()})"
    for pattern, name in _DEFAULTS:
        found = pattern.search(agent)
        if found:
            return f"{name} {found.group(1)}"
    return agent if len(agent) <= _MAX else agent[: _MAX - 1] + "…"
