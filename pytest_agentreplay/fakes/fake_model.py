"""The fake model: a script of replies served over the providers' real wire formats.

:class:`FakeModel` routes a request to its wire format and renders the reply
(through :mod:`..transport.answer`); what it serves and what it saw are
:mod:`.script`'s (the script, interrupts, holds, the call log); :mod:`.serving`
scopes it to a block and :mod:`.listening` puts it on a real port.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, partial
from urllib.parse import urlsplit

from .. import jsonparse
from ..errors import CodecError
from ..neutral import Fault, ModelCall, Provider, Reply, Request, reply_source
from ..providers import codec_for, detect, target, token_count, unspoken
from ..providers.base import Codec, IdFactory, RenderContext, RequestFacts, json_data
from ..providers.catalog import DEFAULT_HOSTS
from ..transport import answer
from ..transport.chunking import ChunkingSpec, resolve_chunking
from ..transport.gate import Gate
from ..transport.playback import Playback
from ..transport.router import Deferred, HTTPRequest
from .call_log import CallLog, ReadAgain
from .errors import UnexpectedModelCall
from .listening import FakeServer
from .messages import held_problem, injected_problem, interrupt_problem, show
from .script import (
    Holds,
    HTTPCall,
    Respond,
    Script,
    ScriptItem,
)
from .serving import Serving

__all__ = ["FakeModel"]


@dataclass(frozen=True)
class _Route:
    host: str
    port: int | None
    base_path: str
    provider: Provider | None


_OWN_PORT = _Route("", None, "", None)
"""The route of a request on the fake's own port (``listen()``): it names no host served."""


@dataclass(frozen=True)
class _Decision:
    """What a fake makes of a ``method url``: the route that claims it (``None``: not
    served by host), the provider whose token count or model call it is, and its target
    (path and query, as a codec reads it). A pure function of the method, the URL and
    the routes: remembered per fake (:meth:`FakeModel._decide`). ``url`` is the URL it
    was made for, which the log keeps for each call of that URL (one string for them
    all, not each call's own copy: a fake keeps every call)."""

    route: _Route | None
    counter: Provider | None
    provider: Provider | None
    target: str
    url: str

    @cached_property
    def codec(self) -> Codec:
        """The codec of :attr:`provider` (asked for a model call only: ``provider`` set)."""
        assert self.provider is not None
        return codec_for(self.provider)

    @cached_property
    def read_again(self) -> ReadAgain | None:
        """How a logged call of this method and URL is parsed again (see :mod:`.call_log`)."""
        if self.provider is None:
            return None
        codec, where = codec_for(self.provider), self.target
        return lambda call: Serving._parse_at(codec, call, where)


_DECISIONS_KEPT = 256  # distinct method + URL pairs remembered per fake (a test uses a few)


class FakeModel(Serving):
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
        self.past_the_script: str | None = None
        """What to do about a call after the script ran out, when not the default
        (``agentreplay serve --fake`` names its control API)."""
        self.check_unused = check_unused
        self.chunker = resolve_chunking(chunking)
        self.event_delay = event_delay
        self.allow_hosts = tuple(allow_hosts)
        self._script = Script(respond)
        self._holds = Holds()
        self._log = CallLog()
        self.calls: list[HTTPCall] = self._log.calls
        # replaced, never changed in place: a call reads it without the lock
        self._routes = tuple(_Route(h.lower(), None, "", None) for h in hosts)
        # what each method + URL was found to be, for these routes (replaced with them)
        self._decisions: dict[tuple[str, str], _Decision] = {}
        self._ids = IdFactory(seed)
        self._lock = threading.Lock()
        self._problems: list[str] = []
        self._unreleased: list[tuple[int, int | None]] = []
        self.script(*script)

    # --- configuring ------------------------------------------------------------

    @property
    def respond_fn(self) -> Respond | None:
        """The function answering calls the script does not cover (``respond=``)."""
        return self._script.respond

    @respond_fn.setter
    def respond_fn(self, respond: Respond | None) -> None:
        self._script.respond = respond

    def script(self, *items: ScriptItem) -> FakeModel:
        """Append replies to the script (a ``str`` is ``Reply.text``, a ``Fault`` a failure)."""
        self._script.extend(items)
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
        route = _Route(parts.hostname.lower(), parts.port, parts.path.rstrip("/"), provider)
        with self._lock:
            self._routes = (*self._routes, route)
            self._decisions = {}
        return self

    def listen(self, *, host: str = "127.0.0.1", port: int = 0) -> FakeServer[FakeModel]:
        """Serve this fake on a real loopback HTTP port, for other processes: see
        :class:`~.listening.FakeServer` (``with fake.listen() as server: ...``)."""
        return FakeServer(self, host=host, port=port).start()

    def fail_with(self, fault: Fault) -> FakeModel:
        """Fail every call with ``fault`` (no reply is consumed)."""
        self._script.fail = fault
        return self

    def interrupt(self, *, after_events: int | None = None, times: int = 1) -> FakeModel:
        """Cut the next ``times`` streams after ``after_events`` events (default: halfway
        through the stream, so some text has arrived and some has not).

        The cut stream plays the reply that is next in the script without
        consuming it, so the retry that follows receives the same reply in full:
        the "interrupted stream, retried in a fresh step" shape.
        """
        self._script.interrupt(after_events, times)
        return self

    def inject(self, fault: Fault) -> FakeModel:
        """Fail the next call, streamed or not, with ``fault``.

        As with :meth:`interrupt`, the failed call plays the reply that is next in the
        script without using it up (a cut stream shows its start), so the retry that
        follows gets it whole; with the script empty the call only fails. Each call
        queues one fault, for one call."""
        self._script.inject(fault)
        return self

    def reset(self) -> FakeModel:
        """Start over: forget the script, interrupts, injected faults, ``fail_with``,
        ``respond=``, the call log and the problems seen so far. A call held at the
        reset is let go without an answer (its connection is dropped): it belongs to no
        script. For a fake that outlives one test (``listen()`` in a
        module-scoped fixture, ``agentreplay serve --fake``)."""
        self._script.reset()
        self.release()
        self._log.reset()
        with self._lock:
            self._problems.clear()
            self._unreleased.clear()
        return self

    def block(self, *, after_events: int | None = None) -> FakeModel:
        """Hold the next call until :meth:`release`: before any byte (default) or
        after ``after_events`` events of its stream."""
        self._holds.block(after_events)
        return self

    def release(self) -> None:
        """Let every held call continue (``block()`` and ``Fault.stall``)."""
        self._holds.release()

    def wait_blocked(self, timeout: float | None = 5.0) -> bool:
        """Wait until a call is being held (``block()`` or a stall); ``False`` on timeout."""
        return self._holds.wait(timeout)

    async def wait_blocked_async(self, timeout: float | None = 5.0) -> bool:
        """:meth:`wait_blocked` without blocking the event loop."""
        return await self._holds.wait_async(timeout)

    # --- what happened ------------------------------------------------------------

    @property
    def log(self) -> list[ModelCall]:
        """Every finished call, in arrival order, with its outcome."""
        return self._log.entries

    @property
    def requests(self) -> list[Request]:
        """Every request, parsed into the neutral :class:`~..neutral.Request`, in arrival
        order (a new list at every read; the same requests in it)."""
        return self._log.requests

    @property
    def last_request(self) -> Request:
        """The most recent request; ``IndexError`` if there was none."""
        return self._log.last_request()

    @property
    def remaining(self) -> list[Reply]:
        """Replies not consumed yet."""
        return self._script.remaining

    @property
    def problems(self) -> list[str]:
        """What the test should fail for: surprises, and (at the end) unused replies."""
        with self._lock:
            problems = list(self._problems)
        pending = self._script.pending_interrupts()
        if pending:
            problems.append(interrupt_problem(self.name, pending, list(self.requests)))
        injected = self._script.pending_injected()
        if injected:
            problems.append(injected_problem(self.name, injected))
        unused = self._script.unused()
        if not self.check_unused or not unused or self._script.fail is not None:
            return problems
        # A call held before its first byte took no reply: the reply was requested
        # and is waiting for release(), not spare (issue 20).
        held = self._held()[: len(unused)]
        problems.extend(held_problem(self.name, i, unused[n]) for n, i in enumerate(held))
        unused = unused[len(held) :]
        if unused:
            shown = "\n".join(f"  - {r!r}" for r in unused)
            problems.append(
                f"{self.name}: {len(unused)} scripted "
                f"repl{'y' if len(unused) == 1 else 'ies'} never "
                f"requested:\n{shown}"
            )
        return problems

    @property
    def surprises(self) -> list[str]:
        """The surprises so far (unexpected requests, parts a provider cannot send),
        left in place: what the end of the test will fail for, besides the state of the
        script (replies never requested, interrupts never used)."""
        with self._lock:
            return list(self._problems)

    def take_problems(self) -> list[str]:
        """The surprises so far (unexpected requests, parts a provider cannot send),
        acknowledged: the end of the ``with`` block or the fixture's teardown no longer
        fails for them. For a test whose point is such a problem, as ``recwarn.pop``
        takes an expected warning. Replies still unused are checked at the end as
        always: they are the script's state, not a surprise."""
        with self._lock:
            taken = list(self._problems)
            self._problems.clear()
        return taken

    def _held(self) -> list[int]:
        """Calls held by ``block()`` before their first byte that the test never
        released (kept when :meth:`detach` lets them go, so the check at the end
        still sees them)."""
        with self._lock:
            seen = list(self._unreleased)
        held = {*seen, *self._holds.unreleased()}
        return sorted(index for index, after in held if after is None)

    def verify(self) -> None:
        """Raise ``AssertionError`` listing every problem, if any."""
        self.close_open_calls()
        problems = self.problems
        if problems:
            raise AssertionError("\n".join(problems))

    def close_open_calls(self) -> None:
        """Log calls whose response was never closed by the client as ``cancelled``."""
        self._log.close_open()

    # --- lifecycle ------------------------------------------------------------------

    def detach(self) -> None:
        """Stop serving; calls still held are let go, so no thread hangs the run."""
        held = self._holds.unreleased()
        with self._lock:
            self._unreleased.extend(held)
        self.release()
        super().detach()

    # --- serving (the Handler protocol) ---------------------------------------------

    def claims(self, request: HTTPRequest) -> bool:
        return self._decide(request).route is not None

    def _decide(self, request: HTTPRequest) -> _Decision:
        """What ``request``'s method and URL are to this fake, remembered: the router
        asks :meth:`claims`, then :meth:`respond` asks again, on every call."""
        decisions = self._decisions  # first: a decision made as routes change is dropped
        key = (request.method, request.url)
        decision = decisions.get(key)
        if decision is None:
            decision = self._decision(request)
            if len(decisions) >= _DECISIONS_KEPT:
                decisions.clear()
            decisions[key] = decision
        return decision

    def _decision(self, request: HTTPRequest) -> _Decision:
        route = self._route_for(request)
        path = request.path
        served = route or _OWN_PORT
        provider = (
            served.provider
            or detect(request.method, path[len(served.base_path) :] or "/")
            or detect(request.method, path)
        )
        counter = token_count(request.method, path)
        return _Decision(route, counter, provider, target(request.url), request.url)

    def _route_for(self, request: HTTPRequest) -> _Route | None:
        parts = request.url_parts
        host, port = (parts.hostname or "").lower(), parts.port
        for route in reversed(self._routes):
            if (
                route.host == host
                and route.port in (None, port)
                and parts.path.startswith(route.base_path)
            ):
                return route
        return None

    def respond(self, request: HTTPRequest) -> Playback | Deferred:
        decision = self._decide(request)
        if decision.counter is not None:
            return self._count_tokens(request, codec_for(decision.counter))
        if decision.provider is None:
            return self._not_a_model_call(request)
        codec = decision.codec
        try:
            # the body read and checked here, not in a helper (a step per call: bench/ W5)
            content = request.content
            body = jsonparse.loads(content) if content else None
            if not isinstance(body, dict):
                body = {}
            parsed = codec.check_call(request.method, decision.target, body)
        except (ValueError, CodecError) as exc:
            return self._unexpected(request, f"its body is not a valid request: {exc}", codec=codec)
        index = self._log.open(request, parsed, decision.read_again, url=decision.url)
        block = self._holds.take_block(index)
        if block is not None and block[1] is None:
            return Deferred(
                gate=block[0],
                then=lambda: self._play_held(index, codec, parsed, request),
                cancelled=lambda: self._log.ended(index, "cancelled", 0, None),
            )
        return self._play(index, codec, parsed, request, block=block)

    def _play_held(
        self, index: int, codec: Codec, request: RequestFacts, http: HTTPRequest
    ) -> Playback:
        """:meth:`_play` for a call held before its first byte (``block()``), once let
        go: a :meth:`reset` while it was held forgot it, and it belongs to no script."""
        if self._log.forgotten(index):
            return Playback(status=503, headers=[], events=[], ending="cut", before_headers=True)
        return self._play(index, codec, request, http)

    async def respond_async(self, request: HTTPRequest) -> Playback | Deferred:
        return self.respond(request)

    def _past_the_end(
        self, index: int, codec: Codec, request: RequestFacts, http: HTTPRequest
    ) -> Reply:
        """The reply for call ``index``, which came after the script ran out: ``respond=``'s;
        without one, the test fails at once (:class:`UnexpectedModelCall`)."""

        def parsed() -> Request:  # what respond= is handed: the log's (a reset forgot it)
            return self._log.request(index) or self._parse(codec, http)

        reply = self._script.responded(request.stream, parsed)
        if reply is not None:
            return reply
        problem = self._mask(
            f"{self.name}: received a model call after its script ran out "
            f"(call #{index}):\n  {show(http)}\n"
            f"  {self.past_the_script or self._past_the_script()}"
        )
        # Kept as a problem too: code that catches BaseException (or a thread that
        # dies with it) must not turn the surprise into a pass.
        with self._lock:
            self._problems.append(problem)
        self._log.ended(index, "cancelled", 0, None)
        raise UnexpectedModelCall(f"pytest-agentreplay: {problem}", pytrace=False)

    def _past_the_script(self) -> str:
        return (
            f"Script a reply for it ({self.name}.script(...)) or answer past the end with respond=."
        )

    def _mask(self, text: str) -> str:
        """``text`` with secrets masked by the router's rules (the session scrubber's
        under pytest; none for a fake outside the plugin's router)."""
        router = self._router
        return router.mask(text) if router is not None else text

    def _play(
        self,
        index: int,
        codec: Codec,
        request: RequestFacts,
        http: HTTPRequest,
        *,
        block: tuple[Gate, int | None] | None = None,
    ) -> Playback:
        reply = self._script.next_reply(request.stream)
        if reply is None:  # the script ran out
            reply = self._past_the_end(index, codec, request, http)
        # built positionally, on every call: no keywords to match (bench/ W5)
        ctx = RenderContext(request.model or "fake-model", request, self._ids)
        log = self._log
        on_end = partial(log.ended, index, reply=reply)  # (outcome, sent): no frame of ours

        try:
            if block is None and reply.fault is None and not request.stream:  # the usual call
                playback = answer.json_answer(
                    codec, reply, ctx, chunker=self.chunker, delay=self.event_delay, on_end=on_end
                )
            else:
                plan = self._plan(on_end, block)
                playback = answer.for_reply(codec, reply, ctx, plan, streaming=request.stream)
        except CodecError as exc:  # a part this provider cannot send: refuse, never drop it
            plan = self._plan(on_end, block)
            playback = self._refuse(codec, reply, exc, http, ctx=ctx, plan=plan)
        log.answered(index, None if playback.before_headers else playback.status)
        return playback

    def _plan(self, on_end: answer.OnEnd, block: tuple[Gate, int | None] | None) -> answer.Plan:
        """How a call's answer is played: chunking, pacing, the stall gate, who hears
        its ending, and the gate of a ``block(after_events=...)`` holding it."""
        gates = {block[1]: block[0]} if block is not None and block[1] is not None else {}
        return answer.Plan(self.chunker, self.event_delay, self._holds.stall, on_end, gates)

    def _count_tokens(self, request: HTTPRequest, codec: Codec) -> Playback:
        """A token count, answered from the request alone (Gemini's ``countTokens``):
        no reply of the script is used, no model call is logged."""
        try:
            body = request.json()
        except ValueError as exc:
            return self._unexpected(request, f"its body is not JSON: {exc}", codec=codec)
        counted = codec.count_tokens(body if isinstance(body, dict) else {})
        if counted is None:
            return self._not_a_model_call(request)
        headers = [("content-type", codec.json_content_type)]
        return Playback(status=200, headers=headers, events=[json_data(counted).encode()])

    def _not_a_model_call(self, request: HTTPRequest) -> Playback:
        """A request no codec speaks fails the test, saying which formats are spoken
        and which one this request looks like (Cohere's ``POST /v2/chat``...)."""
        try:
            body = request.json()
        except ValueError:
            body = None
        why = unspoken(request.method, request.path, body)
        return self._unexpected(request, f"the fake serves model calls only: {why}")

    def _refuse(
        self,
        codec: Codec,
        reply: Reply,
        why: CodecError,
        http: HTTPRequest,
        *,
        ctx: RenderContext,
        plan: answer.Plan,
    ) -> Playback:
        """Fail the test for a reply ``codec`` cannot render, and answer the call with
        the provider's 400 saying why (the agent sees an error, not a partial reply)."""
        with self._lock:
            self._problems.append(
                f"{self.name}: cannot serve {reply_source(reply)} as {codec.provider}: "
                f"{why}\n  {show(http)}"
            )
        fault = Fault.http(400, f"pytest-agentreplay: {why}")
        return answer.for_reply(codec, Reply.failure(fault), ctx, plan, streaming=False)

    def _unexpected(self, request: HTTPRequest, why: str, codec: Codec | None = None) -> Playback:
        with self._lock:
            self._problems.append(f"{self.name}: unexpected request, {why}:\n  {show(request)}")
        fault = Fault.http(
            404 if codec is None else 400, f"pytest-agentreplay: {why.split(':', maxsplit=1)[0]}"
        )
        body = json_data({"error": {"type": "not_found", "message": fault.message}})
        if codec is not None:
            return answer.for_error(codec, fault, RenderContext(), answer.Plan())
        return Playback(
            status=404, headers=[("content-type", "application/json")], events=[body.encode()]
        )
