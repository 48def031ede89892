"""Hooking the HTTP client libraries: httpx and httpx2, sync and async (aiohttp: :mod:`.aio`).

The transports of both module families are patched at class level —
``HTTPTransport.handle_request`` and ``AsyncHTTPTransport.handle_async_request`` —
so clients built anywhere (inside the anthropic / openai SDKs, pydantic-ai,
openai-agents, worker threads) are caught without passing ``http_client=``. The
patch is installed once (for a family not imported yet, when it is first
imported: see :mod:`.import_hook`) and hands every request to the :class:`Hooks`
it was installed with — the router's (:mod:`.router`), which decides who answers.

This module knows the client libraries and nothing of routing; a
:class:`~.family.Family` is one client module as the rest of the package sees it.
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from . import aio_version, children, egress, send_guard
from . import lazy_pool as lazy
from .family import Family
from .import_hook import when_imported

__all__ = ["FAMILIES", "Hooks", "install"]

FAMILIES = ("httpx", "httpx2")


@dataclass(frozen=True)
class Hooks:
    """What the patched transports call: ``handle(family, transport, request)`` for a
    sync request, ``handle_async`` for an async one, and ``defer_pools()`` — whether
    a transport built now may skip building its pool (see :mod:`.lazy_pool`)."""

    handle: Callable[[Family, Any, Any], Any]
    handle_async: Callable[[Family, Any, Any], Awaitable[Any]]
    defer_pools: Callable[[], bool]


_families: dict[str, Family] = {}
_considered: set[str] = set()  # families found installed (or not), once per process
_install_lock = threading.RLock()


def install(hooks: Hooks) -> list[str]:
    """Patch the transports of every installed module family, once, to call ``hooks``.
    Returns the names of the families patched so far.

    A family that is installed but not imported yet is patched as soon as something
    imports it (see :mod:`.import_hook`): replaying through ``httpx`` alone never
    pays for importing ``httpx2``.
    """
    with _install_lock:
        for name in FAMILIES:
            if name in _considered:
                continue
            _considered.add(name)
            if importlib.util.find_spec(name) is not None:
                when_imported(name, functools.partial(_add_family, name, hooks))
        if "aiohttp" not in _considered:
            _considered.add("aiohttp")
            if aio_version.supported():  # asked without importing the hook (asyncio)
                when_imported("aiohttp", functools.partial(_add_aiohttp, hooks))
        egress.install()
        send_guard.install()  # after egress: it wraps the sendmsg egress patched
        children.install()
        return list(_families)


def _add_family(name: str, hooks: Hooks, module: Any) -> None:
    with _install_lock:
        if name in _families:
            return
        family = Family(name, module)
        _patch(family, hooks)
        lazy.install(family.module, hooks.defer_pools)
        _families[name] = family


def _add_aiohttp(hooks: Hooks, module: Any) -> None:
    """Hook aiohttp's ``ClientSession`` (see :mod:`.aio`), once."""
    from . import aio  # noqa: PLC0415 - see install()

    with _install_lock:
        if "aiohttp" not in _families:
            _families["aiohttp"] = aio.install(module, hooks.handle_async)


def _patch(family: Family, hooks: Hooks) -> None:
    sync_cls = family.module.HTTPTransport
    async_cls = family.module.AsyncHTTPTransport
    family.send = sync_cls.handle_request
    family.send_async = async_cls.handle_async_request
    handle, handle_async = hooks.handle, hooks.handle_async

    def handle_request(self: Any, request: Any) -> Any:
        __tracebackhide__ = True  # its arguments' repr holds the raw URL, secrets included
        return handle(family, self, request)

    async def handle_async_request(self: Any, request: Any) -> Any:
        __tracebackhide__ = True
        return await handle_async(family, self, request)

    sync_cls.handle_request = handle_request
    async_cls.handle_async_request = handle_async_request
