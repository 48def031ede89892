"""Where a response waits: a one-way door shared by threads and event loops.

A fake model holds a call (``block()``) or stalls a stream (``Fault.stall``) on a
:class:`Gate` until the test calls ``release()``; a delivery waits on it from the
client's thread or event loop, and a client that hangs up while held wakes it.
:func:`wait_event_async` is ``threading.Event.wait`` for async tests
(``wait_blocked_async``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where an event loop runs: a sync test never loads asyncio
    import asyncio

__all__ = ["Gate", "wait_event_async"]


class Gate:
    """A one-way door, shared between threads and event loops.

    Deliveries block on it (:meth:`wait` / :meth:`wait_async`) until :meth:`open`;
    :attr:`reached` is true as soon as anyone starts waiting (``on_reach`` is called
    then: what ``wait_blocked()`` in a test waits for).
    """

    def __init__(self, on_reach: Callable[[], None] | None = None) -> None:
        # Two flags under the lock, not two Events: nobody waits on them (a waiter
        # blocks on its own ``wake``), and every fake and cassette makes gates it never
        # uses (bench/ W4, W5: an Event is a Condition and a lock to build).
        self._lock = threading.Lock()
        self._opened = False
        self._reached = False
        self._on_reach = on_reach
        self._wakers: list[Callable[[], None]] = []

    @property
    def reached(self) -> bool:
        """Whether anyone has started waiting here (and so been held, unless open)."""
        return self._reached

    def open(self) -> None:
        """Let every waiter (present and future) through."""
        with self._lock:
            self._opened = True
            wakers, self._wakers = self._wakers, []
        for wake in wakers:
            wake()

    def _register(self, wake: Callable[[], None]) -> bool:
        """Register a waker; ``False`` if the gate is already open."""
        with self._lock:
            if self._opened:
                return False
            self._wakers.append(wake)
            self._reached = True
        if self._on_reach is not None:
            self._on_reach()
        return True

    def _unregister(self, wake: Callable[[], None]) -> None:
        with self._lock, _suppress_value_error():
            self._wakers.remove(wake)

    def wait(self, wake: threading.Event) -> None:
        """Block the calling thread until the gate opens or ``wake`` is set by a hang-up."""
        if not self._register(wake.set):
            return
        try:
            wake.wait()
        finally:
            self._unregister(wake.set)

    async def wait_async(self) -> None:
        """Wait in the running event loop until the gate opens; cancellable."""
        import asyncio  # noqa: PLC0415 - loaded already: an event loop is running

        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            loop.call_soon_threadsafe(_resolve, future)

        if not self._register(wake):
            return
        try:
            await future
        finally:
            self._unregister(wake)


async def wait_event_async(event: threading.Event, timeout: float | None) -> bool:
    """``event.wait(timeout)`` for async code: polls without blocking the loop."""
    import asyncio  # noqa: PLC0415 - loaded already: an event loop is running

    deadline = None if timeout is None else time.monotonic() + timeout
    while not event.is_set():
        if deadline is not None and time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.001)
    return True


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class _suppress_value_error:  # noqa: N801 - used like contextlib.suppress, cheaper
    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: object, exc: object, tb: object) -> bool:
        return exc_type is ValueError
