"""Build a transport's connection pool only when a request really goes out.

Constructing ``httpx.Client()``, ``anthropic.Anthropic()`` or ``openai.OpenAI()``
loads the CA bundle into an SSL context and builds a connection pool: about
20 ms per client (35 ms on a busy host), which dominates a suite of small tests
that replay every call and never open a connection.

While a replay router is active, ``HTTPTransport.__init__`` (sync and async, both
module families) therefore records its arguments instead of running. The real
``__init__`` runs, with exactly those arguments — ``verify``, ``cert``, custom
SSL contexts, proxies, ``trust_env`` — the first time anything touches the
pool: a request allowed out (loopback, allowed hosts, record mode), or any other
use of the private ``_pool``. Closing or entering a transport whose pool was
never built does not build it. Nothing about a real connection changes; only
setup that would never be used is skipped.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["install", "is_deferred"]

_PENDING = "_agentreplay_pending_init"
# The pool stays in the instance dict under its own name, so transports built
# before the patch (whose ``_pool`` is a plain attribute) keep working.
_POOL = "_pool"
_lock = threading.RLock()


def is_deferred(transport: Any) -> bool:
    """Whether ``transport``'s pool has not been built yet."""
    return _PENDING in transport.__dict__


def _materialize(transport: Any) -> None:
    """Run the recorded ``__init__`` once, even when threads race for the pool."""
    with _lock:
        pending = transport.__dict__.pop(_PENDING, None)
        if pending is None:
            return
        init, args, kwargs = pending
        try:
            init(transport, *args, **kwargs)
        except BaseException:
            transport.__dict__[_PENDING] = pending
            raise


class _PoolSlot:
    """The ``_pool`` attribute: building the real pool on first read."""

    def __get__(self, transport: Any, owner: type | None = None) -> Any:
        if transport is None:
            return self
        if _POOL not in transport.__dict__:
            _materialize(transport)
        try:
            return transport.__dict__[_POOL]
        except KeyError:
            raise AttributeError("_pool") from None

    def __set__(self, transport: Any, value: Any) -> None:
        transport.__dict__[_POOL] = value


def _patch_class(cls: type, should_defer: Callable[[], bool], *, is_async: bool) -> None:
    original_init = cls.__init__  # type: ignore[misc]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N807
        if type(self).__init__ is not __init__ or not should_defer():
            original_init(self, *args, **kwargs)  # subclasses with their own __init__: as is
            return
        self.__dict__[_PENDING] = (original_init, args, kwargs)

    cls.__init__ = __init__  # type: ignore[misc]
    cls._pool = _PoolSlot()  # type: ignore[attr-defined]
    # Closing or entering a transport whose pool was never built does not build it:
    # there is nothing to release, and a pool's __enter__ prepares nothing a later
    # build would need.
    if is_async:
        for name, result in (("aclose", None), ("__aexit__", None), ("__aenter__", "self")):
            setattr(cls, name, _async_unless_deferred(getattr(cls, name), result))
    else:
        for name, result in (("close", None), ("__exit__", None), ("__enter__", "self")):
            setattr(cls, name, _unless_deferred(getattr(cls, name), result))


def _unless_deferred(original: Callable[..., Any], result: str | None) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if is_deferred(self):
            return self if result == "self" else None
        return original(self, *args, **kwargs)

    return method


def _async_unless_deferred(original: Callable[..., Any], result: str | None) -> Callable[..., Any]:
    async def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if is_deferred(self):
            return self if result == "self" else None
        return await original(self, *args, **kwargs)

    return method


_patched: set[type] = set()


def install(module: Any, should_defer: Callable[[], bool]) -> None:
    """Make ``module``'s ``HTTPTransport`` and ``AsyncHTTPTransport`` build pools lazily."""
    with _lock:
        for name, is_async in (("HTTPTransport", False), ("AsyncHTTPTransport", True)):
            cls = getattr(module, name)
            if cls not in _patched:
                _patch_class(cls, should_defer, is_async=is_async)
                _patched.add(cls)
