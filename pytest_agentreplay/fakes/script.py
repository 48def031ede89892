"""What a fake model serves and what it saw: the script, its holds, its call log.

A :class:`~..fakes.FakeModel` is three parts around the wire formats:

- :class:`Script` — the replies in order, and what overrides them: a fault for every
  call (``fail_with``), cut streams (``interrupt``), a ``respond`` function for
  calls past the end;
- :class:`Holds` — where calls wait until the test calls ``release()``: the next
  call (``block``) and stalled streams (``Fault.stall``);
- :class:`~.call_log.CallLog` (in its own module) — every request as it arrived
  (``calls``, ``requests``) and one :class:`~..neutral.ModelCall` per finished call
  (``log``); :class:`HTTPCall` is how it keeps a request.

:func:`call_sync` runs a user function that may be a coroutine function to
completion from synchronous code (a fake's ``respond``, a parity check's ``run``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..neutral import Fault, Reply, Request
from ..transport.clients import client_library
from ..transport.gate import Gate, wait_event_async
from ..transport.router import HTTPRequest, decode_headers

__all__ = [
    "HTTPCall",
    "Holds",
    "Respond",
    "Script",
    "ScriptItem",
    "as_reply",
    "call_sync",
]

ScriptItem = Reply | Fault | str
"""What a script holds: a reply, a bare fault (a reply that only fails), or text."""

Respond = Callable[[Request], "ScriptItem | Awaitable[ScriptItem]"]
"""A function answering the calls a script does not cover (sync or async)."""


def as_reply(item: ScriptItem) -> Reply:
    """A script item as the reply it means (a ``str`` is ``Reply.text``, a ``Fault``
    a reply that only fails)."""
    if isinstance(item, Reply):
        return item
    if isinstance(item, Fault):
        return Reply.failure(item)
    if isinstance(item, str):
        return Reply.text(item)
    raise TypeError(f"a script item must be a Reply, a Fault or a str, got {item!r}")


def call_sync(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``; a coroutine is run to completion, in a worker thread with its own
    loop when this thread already runs one."""
    result = fn(*args)
    if not inspect.isawaitable(result):
        return result
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(result))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _await(result)).result()


async def _await(result: Awaitable[Any]) -> Any:
    return await result


class Script:
    """The replies a fake serves, in order, and what overrides them.

    A stream cut by an interrupt plays the reply that is next without consuming it,
    so the retry that follows receives the same reply in full.
    """

    def __init__(self, respond: Respond | None = None) -> None:
        self.respond = respond
        self.fail: Fault | None = None
        self._replies: deque[Reply] = deque()
        self._interrupts: list[int | None] = []
        self._injected: list[Fault] = []  # faults for the next calls, streamed or not
        self._played_cut: set[int] = set()  # ids of scripted replies an interrupt cut
        self._lock = threading.Lock()

    def reset(self) -> None:
        """Forget every reply, interrupt, injected fault, ``fail`` and ``respond``."""
        with self._lock:
            self._replies.clear()
            self._interrupts.clear()
            self._injected.clear()
            self._played_cut.clear()
            self.fail = None
            self.respond = None

    def extend(self, items: Sequence[ScriptItem]) -> None:
        """Append replies to the script."""
        replies = [item if type(item) is Reply else as_reply(item) for item in items]
        with self._lock:
            self._replies.extend(replies)

    def interrupt(self, after_events: int | None, times: int) -> None:
        """Cut the next ``times`` streams after ``after_events`` (``None``: halfway)."""
        with self._lock:
            self._interrupts.extend([after_events] * times)

    def inject(self, fault: Fault) -> None:
        """Fail the next call (streamed or not) with ``fault``."""
        with self._lock:
            self._injected.append(fault)

    def pending_injected(self) -> int:
        """Faults injected for a call that never came."""
        with self._lock:
            return 0 if self.fail is not None else len(self._injected)

    @property
    def remaining(self) -> list[Reply]:
        """Replies not consumed yet."""
        with self._lock:
            return list(self._replies)

    def pending_interrupts(self) -> int:
        """Interrupts queued for a stream that never came."""
        with self._lock:
            return 0 if self.fail is not None else len(self._interrupts)

    def unused(self) -> list[Reply]:
        """Replies never requested: a reply an interrupt cut was requested (and partly
        shown), even though it stays first in the script for the retry."""
        with self._lock:
            return [r for r in self._replies if id(r) not in self._played_cut]

    def next_reply(self, stream: bool) -> Reply | None:
        """The reply the script holds for this call (``stream``: a streamed one): the
        failure, an injected fault, the next reply; ``None`` when the script ran out
        (then :meth:`responded` answers)."""
        with self._lock:
            if self.fail is not None:
                return Reply.failure(self.fail)
            if self._injected:
                return self._strike(self._injected.pop(0))
            if self._replies:
                if self._interrupts and stream:
                    self._played_cut.add(id(self._replies[0]))
                    return self._cut(self._replies[0])
                return self._replies.popleft()
        return None

    def responded(self, stream: bool, request: Callable[[], Request]) -> Reply | None:
        """The reply for a call past the end of the script: ``respond``'s (handed
        ``request()``, the call's parsed request); ``None`` when there is no ``respond``."""
        if self.respond is None:
            return None
        reply = as_reply(call_sync(self.respond, request()))
        with self._lock:
            return self._cut(reply) if self._interrupts and stream else reply

    def _strike(self, fault: Fault) -> Reply:
        """The next reply failed by an injected ``fault``, not used up (the retry gets
        it whole); a bare failure when the script is empty (caller holds the lock)."""
        if not self._replies:
            return Reply.failure(fault)
        self._played_cut.add(id(self._replies[0]))
        return self._replies[0].model_copy(update={"fault": fault})

    def _cut(self, reply: Reply) -> Reply:
        """``reply`` cut by the next pending interrupt (caller holds the lock)."""
        after = self._interrupts.pop(0)
        return reply.model_copy(update={"fault": Fault(kind="cut", after_events=after)})


class Holds:
    """Where a fake's calls wait until :meth:`release`: the next call (:meth:`block`),
    and every stream a ``Fault.stall`` stops (:attr:`stall`)."""

    def __init__(self) -> None:
        self.holding = threading.Event()
        self._lock = threading.Lock()
        self._gates: list[Gate] = []
        self._block: tuple[Gate, int | None] | None = None
        self._owners: dict[int, tuple[int, int | None]] = {}  # id(gate): the call it holds
        self.stall = self._gate()

    def _gate(self) -> Gate:
        gate = Gate(on_reach=self.holding.set)
        self._gates.append(gate)
        return gate

    def block(self, after_events: int | None) -> None:
        """Hold the next call: before any byte (``None``) or after ``after_events``."""
        with self._lock:
            self._block = (self._gate(), after_events)

    def take_block(self, index: int) -> tuple[Gate, int | None] | None:
        """The hold for call ``index``, arriving now (once), if :meth:`block` set one."""
        if self._block is None:  # the usual call: nothing to take, no lock to take it under
            return None
        with self._lock:
            block, self._block = self._block, None
            if block is not None:
                self._owners[id(block[0])] = (index, block[1])
        return block

    def unreleased(self) -> list[tuple[int, int | None]]:
        """Calls a :meth:`block` holds now, and was never released from: ``(call
        index, after_events)``. Issue 20: a forgotten ``release()`` was reported as
        "1 scripted reply never requested" although the call came and was held."""
        with self._lock:
            return [self._owners[id(g)] for g in self._gates if id(g) in self._owners and g.reached]

    def release(self) -> None:
        """Let every held call continue; later stalls hold again."""
        with self._lock:
            gates, self._gates = self._gates, []
            self._block = None
            self._owners.clear()
            self.holding.clear()
            self.stall = self._gate()
        for gate in gates:
            gate.open()

    def wait(self, timeout: float | None) -> bool:
        """Wait until a call is being held; ``False`` on timeout."""
        return self.holding.wait(timeout)

    async def wait_async(self, timeout: float | None) -> bool:
        """:meth:`wait` without blocking the event loop."""
        return await wait_event_async(self.holding, timeout)


@dataclass(frozen=True, eq=False, repr=False)
class HTTPCall:
    """A request exactly as it reached the fake: method, URL, headers, body."""

    method: str
    url: str
    headers: dict[str, str]
    content: bytes

    @staticmethod
    def of(request: HTTPRequest, url: str | None = None) -> HTTPCall:
        """``request`` as logged: its headers made a dict when first read (most tests
        never read them: bench/ W5); ``url``, when given, is its URL (an equal string
        kept already)."""
        call = object.__new__(_LoggedCall)
        call.__dict__.update(
            method=request.method,
            url=request.url if url is None else url,
            content=request.content,
            _sent=request.headers_as_sent(),  # not the request: it is let go after the call
        )
        return call

    def _fields(self) -> tuple[Any, ...]:
        return (self.method, self.url, self.headers, self.content)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HTTPCall):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # its headers are a dict, as before

    def __repr__(self) -> str:
        return (
            f"HTTPCall(method={self.method!r}, url={self.url!r}, headers={self.headers!r}, "
            f"content={self.content!r})"
        )

    def json(self) -> Any:
        """The body parsed as JSON."""
        return HTTPRequest(self.method, self.url, (), self.content, "").json()

    @property
    def client(self) -> str | None:
        """The client library that sent it, from its headers (``openai 3.63.0 (python,
        CPython 3.12.3)``, ``node fetch (node)``, ``httpx 0.28.1``...)."""
        return client_library(self.headers)


class _LoggedCall(HTTPCall):
    """:meth:`HTTPCall.of`'s call: its headers made a dict of the request's when first read."""

    @property
    def headers(self) -> dict[str, str]:
        fields = self.__dict__
        headers: dict[str, str] | None = fields.get("_headers")
        if headers is None:
            headers = fields["_headers"] = dict(decode_headers(fields["_sent"]))
        return headers

    @headers.setter
    def headers(self, value: dict[str, str]) -> None:
        self.__dict__["_headers"] = value  # a copy made with dataclasses.replace
