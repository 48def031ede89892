"""Fake models that speak the providers' real wire formats.

A :class:`FakeModel` answers the model calls that real SDKs and frameworks make,
over their real HTTP clients, from a script of :class:`~..model.Reply` objects
(or a function). The request path picks the wire format (``/v1/messages``:
Anthropic, ``/chat/completions``: OpenAI Chat, ``/responses``: OpenAI
Responses) and the request's ``stream`` flag picks JSON or SSE, so one script
serves every provider. It can hold a call (``block``), cut the first streams
(``interrupt``), or fail every call (``fail_with``), and it records what it was
asked (``calls``, ``requests``) and how each call ended (``log``).

It refuses surprises: a call after the script ran out gets a provider-shaped
500 *and* fails the test with the request shown; replies left unconsumed fail
the test too (``check_unused=False`` opts out).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from ..errors import CodecError
from ..model import Fault, ModelCall, Provider, Reply, Request
from ..providers import codec_for, detect
from ..providers.base import Codec, IdFactory, RenderContext, json_data
from ..transport import answer as playbacks
from ..transport.chunking import ChunkingSpec, resolve_chunking
from ..transport.gate import Gate, wait_event_async
from ..transport.playback import Playback
from ..transport.router import Deferred, HTTPRequest, Router, active_router, intercepting

__all__ = ["DEFAULT_HOSTS", "FakeModel", "HTTPCall", "ScriptItem"]

DEFAULT_HOSTS = ("api.anthropic.com", "api.openai.com")

ScriptItem = Reply | Fault | str
"""What a script holds: a reply, a bare fault (a reply that only fails), or text."""

Respond = Callable[[Request], "ScriptItem | Awaitable[ScriptItem]"]


@dataclass(frozen=True)
class HTTPCall:
    """A request exactly as it reached the fake: method, URL, headers, body."""

    method: str
    url: str
    headers: dict[str, str]
    content: bytes

    def json(self) -> Any:
        """The body parsed as JSON."""
        return HTTPRequest(self.method, self.url, (), self.content, "").json()


@dataclass(frozen=True)
class _Route:
    host: str
    port: int | None
    base_path: str
    provider: Provider | None


def _as_reply(item: ScriptItem) -> Reply:
    if isinstance(item, Reply):
        return item
    if isinstance(item, Fault):
        return Reply.failure(item)
    if isinstance(item, str):
        return Reply.text(item)
    raise TypeError(f"a script item must be a Reply, a Fault or a str, got {item!r}")


def _show(request: HTTPRequest) -> str:
    body = request.content.decode("utf-8", "replace")
    if len(body) > 600:
        body = body[:600] + f"... ({len(request.content)} bytes)"
    return f"{request.method} {request.url}\n    {body}"


class FakeModel:
    """A scripted model served to every client of the hosts it covers.

    ``FakeModel(Reply.text("Hi"), "plain text", Fault.http(429))`` serves those in
    order. ``respond=`` (a function of the neutral :class:`~..model.Request`, sync
    or async) answers calls the script does not cover. ``hosts`` are the hosts
    served (``serve()`` adds more); ``chunking`` cuts the SSE body into network
    chunks (``"event"``, ``"whole"``, ``"lines"``, a byte size or a callable);
    ``event_delay`` paces chunks; ``seed`` makes ids reproducible.
    """

    def __init__(
        self,
        *script: ScriptItem,
        respond: Respond | None = None,
        hosts: Iterable[str] = DEFAULT_HOSTS,
        chunking: ChunkingSpec = "event",
        event_delay: float = 0.0,
        seed: str = "agentreplay",
        check_unused: bool = True,
        name: str = "FakeModel",
        allow_hosts: Iterable[str] = (),
    ) -> None:
        self.name = name
        self.respond_fn = respond
        self.check_unused = check_unused
        self.chunker = resolve_chunking(chunking)
        self.event_delay = event_delay
        self.allow_hosts = tuple(allow_hosts)
        self.calls: list[HTTPCall] = []
        self.requests: list[Request] = []
        self._log: dict[int, ModelCall] = {}
        self._routes = [_Route(h.lower(), None, "", None) for h in hosts]
        self._script: deque[Reply] = deque()
        self._ids = IdFactory(seed)
        self._lock = threading.RLock()
        self._problems: list[str] = []
        self._fail: Fault | None = None
        self._interrupts: list[int | None] = []
        self._played_cut: set[int] = set()  # ids of scripted replies an interrupt cut
        self._holding = threading.Event()
        self._block: tuple[Gate, int | None] | None = None
        self._gates: list[Gate] = []
        self._stall = self._gate()
        self._open: dict[int, tuple[Request, str, bool]] = {}
        self._statuses: dict[int, int | None] = {}
        self._router: Router | None = None
        self._scope: Any = None
        self.script(*script)

    # --- configuring ------------------------------------------------------------

    def script(self, *items: ScriptItem) -> FakeModel:
        """Append replies to the script (a ``str`` is ``Reply.text``, a ``Fault`` a failure)."""
        replies = [_as_reply(item) for item in items]
        with self._lock:
            self._script.extend(replies)
        return self

    def configure(
        self,
        *,
        respond: Respond | None = None,
        chunking: ChunkingSpec | None = None,
        event_delay: float | None = None,
        seed: str | None = None,
        check_unused: bool | None = None,
    ) -> FakeModel:
        """Change what the constructor set (for fixtures, which build the fake for you)."""
        if respond is not None:
            self.respond_fn = respond
        if chunking is not None:
            self.chunker = resolve_chunking(chunking)
        if event_delay is not None:
            self.event_delay = event_delay
        if seed is not None:
            self._ids = IdFactory(seed)
        if check_unused is not None:
            self.check_unused = check_unused
        return self

    def serve(self, base_url: str, provider: Provider | None = None) -> FakeModel:
        """Also serve ``base_url`` (Azure, OpenRouter, a local server...).

        ``provider`` fixes the wire format; by default the request path picks it.
        """
        parts = urlsplit(base_url if "://" in base_url else f"https://{base_url}")
        if not parts.hostname:
            raise ValueError(f"serve() needs a URL with a host, got {base_url!r}")
        if provider is not None:
            codec_for(provider)  # validates the name
        with self._lock:
            self._routes.append(
                _Route(parts.hostname.lower(), parts.port, parts.path.rstrip("/"), provider)
            )
        return self

    def fail_with(self, fault: Fault) -> FakeModel:
        """Fail every call with ``fault`` (no reply is consumed)."""
        with self._lock:
            self._fail = fault
        return self

    def interrupt(self, *, after_events: int | None = None, times: int = 1) -> FakeModel:
        """Cut the next ``times`` streams after ``after_events`` events (default: halfway
        through the stream, so some text has arrived and some has not).

        The cut stream plays the reply that is next in the script without
        consuming it, so the retry that follows receives the same reply in full:
        the "interrupted stream, retried in a fresh step" shape.
        """
        with self._lock:
            self._interrupts.extend([after_events] * times)
        return self

    def block(self, *, after_events: int | None = None) -> FakeModel:
        """Hold the next call until :meth:`release`: before any byte (default) or
        after ``after_events`` events of its stream."""
        with self._lock:
            self._block = (self._gate(), after_events)
        return self

    def _gate(self) -> Gate:
        gate = Gate(on_reach=self._holding.set)
        self._gates.append(gate)
        return gate

    def release(self) -> None:
        """Let every held call continue (``block()`` and ``Fault.stall``)."""
        with self._lock:
            gates, self._gates = self._gates, []
            self._block = None
            self._holding.clear()
            self._stall = self._gate()
        for gate in gates:
            gate.open()

    def wait_blocked(self, timeout: float | None = 5.0) -> bool:
        """Wait until a call is being held (``block()`` or a stall); ``False`` on timeout."""
        return self._holding.wait(timeout)

    async def wait_blocked_async(self, timeout: float | None = 5.0) -> bool:
        """:meth:`wait_blocked` without blocking the event loop."""
        return await wait_event_async(self._holding, timeout)

    # --- what happened ------------------------------------------------------------

    @property
    def log(self) -> list[ModelCall]:
        """Every finished call, in arrival order, with its outcome."""
        with self._lock:
            return [self._log[i] for i in sorted(self._log)]

    @property
    def last_request(self) -> Request:
        """The most recent request; ``IndexError`` if there was none."""
        return self.requests[-1]

    @property
    def remaining(self) -> list[Reply]:
        """Replies not consumed yet."""
        with self._lock:
            return list(self._script)

    @property
    def problems(self) -> list[str]:
        """What the test should fail for: surprises, and (at the end) unused replies."""
        with self._lock:
            problems = list(self._problems)
            # A reply an interrupt cut was requested (and partly shown), even though
            # it stays first in the script for the retry: not "never requested".
            unused = [r for r in self._script if id(r) not in self._played_cut]
            if self.check_unused and unused and self._fail is None:
                shown = "\n".join(f"  - {r!r}" for r in unused)
                problems.append(
                    f"{self.name}: {len(unused)} scripted "
                    f"repl{'y' if len(unused) == 1 else 'ies'} never "
                    f"requested:\n{shown}"
                )
        return problems

    def verify(self) -> None:
        """Raise ``AssertionError`` listing every problem, if any."""
        self.close_open_calls()
        problems = self.problems
        if problems:
            raise AssertionError("\n".join(problems))

    def close_open_calls(self) -> None:
        """Log calls whose response was never closed by the client as ``cancelled``."""
        with self._lock:
            open_calls = list(self._open)
        for index in open_calls:
            self._ended(index, "cancelled", 0, None)

    # --- lifecycle ------------------------------------------------------------------

    def attach(self, router: Router) -> FakeModel:
        """Serve through ``router`` (what the pytest fixtures do)."""
        self._router = router
        router.add(self)
        return self

    def detach(self) -> None:
        """Stop serving; calls still held are let go, so no thread hangs the run."""
        self.release()
        if self._router is not None:
            self._router.remove(self)
            self._router = None

    def __enter__(self) -> FakeModel:
        router = active_router()
        if router is None:
            self._scope = intercepting(Router(allow_hosts=self.allow_hosts))
            router = self._scope.__enter__()
        return self.attach(router)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.detach()
        scope, self._scope = self._scope, None
        if scope is not None:
            scope.__exit__(exc_type, exc, tb)
        if exc_type is None:
            self.verify()

    async def __aenter__(self) -> FakeModel:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)

    # --- serving (the Handler protocol) ---------------------------------------------

    def claims(self, request: HTTPRequest) -> bool:
        return self._route_for(request) is not None

    def _route_for(self, request: HTTPRequest) -> _Route | None:
        parts = urlsplit(request.url)
        host, port = (parts.hostname or "").lower(), parts.port
        with self._lock:
            routes = list(self._routes)
        for route in reversed(routes):
            if (
                route.host == host
                and route.port in (None, port)
                and parts.path.startswith(route.base_path)
            ):
                return route
        return None

    def respond(self, request: HTTPRequest) -> Playback | Deferred:
        return self._answer(request, sync=True)

    async def respond_async(self, request: HTTPRequest) -> Playback | Deferred:
        return self._answer(request, sync=False)

    def _answer(self, request: HTTPRequest, *, sync: bool) -> Playback | Deferred:
        route = self._route_for(request)
        assert route is not None
        provider = (
            route.provider
            or detect(request.method, request.path[len(route.base_path) :] or "/")
            or detect(request.method, request.path)
        )
        if provider is None:
            return self._unexpected(request, "the fake serves model calls only")
        codec = codec_for(provider)
        try:
            body = request.json()
            parsed = codec.parse_request(body if isinstance(body, dict) else {})
        except (ValueError, CodecError) as exc:
            return self._unexpected(request, f"its body is not a valid request: {exc}", codec=codec)
        with self._lock:
            index = len(self.calls)
            self.calls.append(
                HTTPCall(request.method, request.url, dict(request.headers), request.content)
            )
            self.requests.append(parsed)
            self._open[index] = (parsed, request.url, parsed.stream)
            block, self._block = self._block, None
        if block is not None and block[1] is None:
            return Deferred(
                gate=block[0],
                then=lambda: self._play(index, codec, parsed, request, sync=sync),
                cancelled=lambda: self._ended(index, "cancelled", 0, None),
            )
        return self._play(index, codec, parsed, request, sync=sync, block=block)

    def _next_reply(self, request: Request, http: HTTPRequest) -> Reply:
        """The reply for this call: the failure, the script, ``respond``, or a 500."""
        with self._lock:
            if self._fail is not None:
                return Reply.failure(self._fail)
            if self._script:
                if self._interrupts and request.stream:
                    self._played_cut.add(id(self._script[0]))
                    return self._cut(self._script[0])
                return self._script.popleft()
        if self.respond_fn is not None:
            reply = _as_reply(_call(self.respond_fn, request))
            with self._lock:
                return self._cut(reply) if self._interrupts and request.stream else reply
        with self._lock:
            self._problems.append(
                f"{self.name}: received a model call after its script ran out "
                f"(call #{len(self.calls) - 1}):\n  {_show(http)}"
            )
        return Reply.failure(Fault.http(500, "pytest-agentreplay: the fake model's script ran out"))

    def _cut(self, reply: Reply) -> Reply:
        """``reply`` cut by the next pending interrupt (caller holds the lock)."""
        after = self._interrupts.pop(0)
        return reply.model_copy(update={"fault": Fault(kind="cut", after_events=after)})

    def _play(
        self,
        index: int,
        codec: Codec,
        request: Request,
        http: HTTPRequest,
        *,
        sync: bool,
        block: tuple[Gate, int | None] | None = None,
    ) -> Playback:
        reply = self._next_reply(request, http)
        ctx = RenderContext(model=request.model or "fake-model", request=request, ids=self._ids)
        with self._lock:
            stall = self._stall
        plan = playbacks.Plan(
            chunker=self.chunker,
            delay=self.event_delay,
            stall_gate=stall,
            on_end=lambda outcome, sent: self._ended(index, outcome, sent, reply),
            extra_gates={block[1]: block[0]} if block is not None and block[1] is not None else {},
        )
        playback = playbacks.for_reply(codec, reply, ctx, plan, streaming=request.stream)
        with self._lock:
            self._statuses[index] = None if playback.before_headers else playback.status
        return playback

    def _unexpected(self, request: HTTPRequest, why: str, codec: Codec | None = None) -> Playback:
        with self._lock:
            self._problems.append(f"{self.name}: unexpected request, {why}:\n  {_show(request)}")
        fault = Fault.http(
            404 if codec is None else 400, f"pytest-agentreplay: {why.split(':', maxsplit=1)[0]}"
        )
        body = json_data({"error": {"type": "not_found", "message": fault.message}})
        if codec is not None:
            return playbacks.for_error(codec, fault, RenderContext(), playbacks.Plan())
        return Playback(
            status=404, headers=[("content-type", "application/json")], events=[body.encode()]
        )

    def _ended(self, index: int, outcome: str, events_sent: int, reply: Reply | None) -> None:
        with self._lock:
            opened = self._open.pop(index, None)
            if opened is None:
                return
            request, url, streaming = opened
            status = self._statuses.pop(index, None)
            # An error body is not an event stream: nothing of the reply was delivered.
            delivered = events_sent if streaming and (status or 0) < 400 else 0
            self._log[index] = ModelCall(
                index=index,
                provider=request.provider,
                url=url,
                streaming=streaming,
                request=request,
                status=status,
                outcome=outcome,
                events_sent=delivered,
                reply=reply,
            )


def _call(fn: Respond, request: Request) -> ScriptItem:
    """Call ``fn``; run it to completion if it is a coroutine function (even from a loop)."""
    result = fn(request)
    if not inspect.isawaitable(result):
        return result
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(result))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _await(result)).result()


async def _await(result: Awaitable[ScriptItem]) -> ScriptItem:
    return await result
