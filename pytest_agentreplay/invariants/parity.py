"""Running one agent scenario once per way of delivering the same response.

:func:`~.assert_stream_parity` calls the user's ``run(stream)`` for each
variant — the response streamed as SSE under several chunkings, and served as one
JSON body — each time against a fresh source of the *same* response: a
:class:`~..fakes.FakeModel` built from the script, or a :class:`TwinServer` built
from a recording. A recorded stream is replayed as recorded; its non-streaming
twin is the stream folded by the provider codec (``codec.fold``), so a cassette
recorded with streaming on also proves the non-streaming path.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import os
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from ..cassettes import io as cassette_io
from ..cassettes.model import Interaction, RecordedResponse
from ..cassettes.replay import playback_for
from ..errors import CodecError
from ..fakes import FakeModel
from ..model import Fault, ModelCall, Request
from ..providers import codec_for, detect
from ..providers.base import Codec, RenderContext
from ..runlog import Delta, RunLog
from ..runlog.adapters import recorded_reply
from ..runlog.normalize import normalize
from ..transport.answer import Plan, for_error, for_reply
from ..transport.playback import ChunkingSpec, Playback, resolve_chunking
from ..transport.router import HTTPRequest, Router, active_router, intercepting
from .report import fail

__all__ = [
    "DEFAULT_CHUNKINGS",
    "ParityRun",
    "TwinServer",
    "compare_runs",
    "parity_async",
    "parity_sync",
]

DEFAULT_CHUNKINGS: tuple[ChunkingSpec, ...] = ("event", "whole", 1, 7)
"""One SSE event a chunk (as providers flush), the whole body at once (as vcrpy and
respx replay), one byte a chunk (every line end and UTF-8 sequence split), and
7-byte chunks (splits that fall anywhere)."""


def chunking_label(chunking: ChunkingSpec) -> str:
    """``event``, ``7-byte``, a chunker function's name, or a chunker object's repr
    (``Chunking(sizes=(3,), ...)`` from the strategies)."""
    if isinstance(chunking, str):
        return chunking
    if isinstance(chunking, int):
        return f"{chunking}-byte"
    return getattr(chunking, "__name__", None) or repr(chunking)


@dataclass
class ParityRun:
    """One variant of a parity check: how the response was delivered, what ``run``
    returned, and the run log compared (``run``'s own, or one holding the model calls)."""

    label: str
    stream: bool
    chunking: ChunkingSpec
    result: Any
    log: RunLog
    state: Any = None
    normalized_state: Any = field(default=None, repr=False)

    def describe(self) -> str:
        if not self.stream:
            return "non-streaming run (JSON body)"
        return f"streaming run (SSE, chunking {chunking_label(self.chunking)!r})"


def _variants(chunkings: Sequence[ChunkingSpec]) -> list[tuple[str, bool, ChunkingSpec]]:
    if not chunkings:
        raise ValueError("assert_stream_parity needs at least one chunking")
    streamed = [(f"sse/{chunking_label(c)}", True, c) for c in chunkings]
    return [*streamed, ("json", False, "event")]


def _interactions(cassette: Any) -> list[Interaction]:
    """The interactions of a cassette path, of the ``agentreplay`` handle (those it
    loaded, then those the test recorded so far: a parity check also runs in the
    test that records the stream it compares), or the interactions given."""
    if isinstance(cassette, (str, os.PathLike)):
        return list(cassette_io.load(cassette).interactions)
    if hasattr(cassette, "interactions"):
        return [*cassette.interactions, *getattr(cassette, "recorded", ())]
    return list(cassette)


def _source_factory(
    script: Sequence[Any] | None, cassette: Any, respond: Any, seed: str
) -> Callable[[ChunkingSpec], Any]:
    if cassette is not None:
        if script is not None or respond is not None:
            raise ValueError("assert_stream_parity takes a script (and respond) or a cassette")
        interactions = _interactions(cassette)
        return lambda chunking: TwinServer(interactions, chunking=chunking)
    if script is None and respond is None:
        raise ValueError("assert_stream_parity needs script=[...] (or respond=) or cassette=")
    return lambda chunking: FakeModel(
        *(script or ()), respond=respond, chunking=chunking, seed=seed, name="assert_stream_parity"
    )


def _finish(
    label: str, stream: bool, chunking: ChunkingSpec, result: Any, served: Any
) -> ParityRun:
    if isinstance(result, RunLog):
        if not result.sources and not result.model_calls:
            result.watch(list(served.log))
        return ParityRun(label, stream, chunking, result, result)
    log = RunLog(model_calls=list(served.log))
    return ParityRun(label, stream, chunking, result, log, result, normalize(result))


def _failed(exc: BaseException, label: str, served: Any) -> BaseException:
    """What to raise when a variant's run raised: the recording's complaint if it has one
    (the run only saw a 500), else ``exc`` with a note naming the variant (3.11+)."""
    problems = getattr(served, "problems", None) if isinstance(served, TwinServer) else None
    if problems and isinstance(exc, Exception):
        failure = AssertionError(f"assert_stream_parity ({label} run): " + "\n".join(problems))
        failure.__cause__ = exc
        return failure
    add_note = getattr(exc, "add_note", None)
    if add_note is not None:
        add_note(f"(raised in the {label} run of assert_stream_parity)")
    return exc


async def _await(result: Awaitable[Any]) -> Any:
    return await result


def _call_sync(run: Callable[[bool], Any], stream: bool) -> Any:
    """``run(stream)``; a coroutine is run to completion, in a worker thread with its
    own loop when this thread already runs one."""
    result = run(stream)
    if not inspect.isawaitable(result):
        return result
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await(result))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _await(result)).result()


def parity_sync(
    run: Callable[[bool], Any],
    *,
    script: Sequence[Any] | None,
    cassette: Any,
    chunkings: Sequence[ChunkingSpec],
    respond: Any,
    seed: str,
) -> list[ParityRun]:
    """Run every variant (see the module docs), from synchronous code."""
    make = _source_factory(script, cassette, respond, seed)
    runs = []
    for label, stream, chunking in _variants(chunkings):
        served = make(chunking)
        try:
            with served:
                result = _call_sync(run, stream)
        except BaseException as exc:
            raise _failed(exc, label, served) from None
        runs.append(_finish(label, stream, chunking, result, served))
    return runs


async def parity_async(
    run: Callable[[bool], Any],
    *,
    script: Sequence[Any] | None,
    cassette: Any,
    chunkings: Sequence[ChunkingSpec],
    respond: Any,
    seed: str,
) -> list[ParityRun]:
    """Run every variant in the caller's event loop."""
    make = _source_factory(script, cassette, respond, seed)
    runs = []
    for label, stream, chunking in _variants(chunkings):
        served = make(chunking)
        try:
            with served:
                result = run(stream)
                if inspect.isawaitable(result):
                    result = await result
        except BaseException as exc:
            raise _failed(exc, label, served) from None
        runs.append(_finish(label, stream, chunking, result, served))
    return runs


# --- serving a recording, streamed or folded ------------------------------------------------


class TwinServer:
    """Serves the model calls of a recording in order, as the client asks: a recorded
    stream as recorded (re-chunked) or folded into its JSON twin; a recorded JSON body
    as it is or rendered as the provider's stream. Logs :class:`ModelCall` objects
    like a fake model, so run logs compare alike."""

    def __init__(self, interactions: Sequence[Interaction], *, chunking: ChunkingSpec = "event"):
        self.interactions = [i for i in interactions if _provider(i) is not None]
        self.chunker = resolve_chunking(chunking)
        self.problems: list[str] = []
        self._log: dict[int, ModelCall] = {}
        self._served = 0
        self._lock = threading.Lock()
        self._router: Router | None = None
        self._scope: Any = None

    @property
    def log(self) -> list[ModelCall]:
        with self._lock:
            return [self._log[i] for i in sorted(self._log)]

    def claims(self, request: HTTPRequest) -> bool:
        return detect(request.method, request.path) is not None

    async def respond_async(self, request: HTTPRequest) -> Playback:
        return self.respond(request)

    def respond(self, request: HTTPRequest) -> Playback:
        provider = detect(request.method, request.path) or "openai_chat"
        codec = codec_for(provider)
        with self._lock:
            number = self._served
            self._served += 1
        if number >= len(self.interactions):
            return self._refuse(
                codec,
                f"the run made model call #{number}, but the recording has "
                f"{len(self.interactions)}: {request.method} {request.url}",
            )
        try:
            body = request.json()
            parsed = codec.parse_request(body if isinstance(body, dict) else {})
        except (ValueError, CodecError) as exc:
            return self._refuse(codec, f"model call #{number} is not a valid request: {exc}")
        return self._serve(number, codec, parsed, request)

    def _refuse(self, codec: Codec, problem: str) -> Playback:
        with self._lock:
            self.problems.append(problem)
        fault = Fault.http(500, f"pytest-agentreplay: {problem}")
        return for_error(codec, fault, RenderContext(), Plan())

    def _serve(self, number: int, codec: Codec, parsed: Request, request: HTTPRequest) -> Playback:
        interaction = self.interactions[number]
        reply = recorded_reply(codec, interaction.response)
        played: list[Playback] = []  # the ender reads the status the client really got

        def ended(outcome: str, sent: int) -> None:
            self._log_call(number, codec, parsed, request.url, played, outcome, sent, reply)

        plan = Plan(chunker=self.chunker, on_end=ended)
        recorded = interaction.response
        if recorded.is_stream and not parsed.stream:
            try:
                interaction = _folded(codec, interaction, number)
            except (ValueError, CodecError) as exc:
                return self._refuse(codec, str(exc))
        if not recorded.is_stream and parsed.stream and reply is not None:
            ctx = RenderContext(model=parsed.model or "fake-model", request=parsed)
            playback = for_reply(codec, reply, ctx, plan, streaming=True)
        else:
            playback = playback_for(
                interaction, method=request.method, path=request.path, fault=None, plan=plan
            )
        played.append(playback)
        return playback

    def _log_call(  # noqa: PLR0917 - one private call site
        self,
        number: int,
        codec: Codec,
        parsed: Request,
        url: str,
        played: list[Playback],
        outcome: str,
        sent: int,
        reply: Any,
    ) -> None:
        status = None if not played or played[0].before_headers else played[0].status
        if outcome == "completed" and status is not None and status >= 400:
            outcome = "http_error"
        call = ModelCall(
            index=number,
            provider=codec.provider,
            url=url,
            streaming=parsed.stream,
            request=parsed,
            status=status,
            outcome=outcome,
            events_sent=sent if parsed.stream and (status or 0) < 400 else 0,
            reply=reply,
        )
        with self._lock:
            self._log[number] = call

    def __enter__(self) -> TwinServer:
        router = active_router()
        if router is None:
            self._scope = intercepting(Router())
            router = self._scope.__enter__()
        self._router = router
        router.add(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._router is not None:
            self._router.remove(self)
        scope, self._scope = self._scope, None
        if scope is not None:
            scope.__exit__(exc_type, exc, tb)
        if exc_type is None and self.problems:
            raise AssertionError("assert_stream_parity: " + "\n".join(self.problems))


def _provider(interaction: Interaction) -> str | None:
    return detect(interaction.request.method, urlsplit(interaction.request.url).path)


def _folded(codec: Codec, interaction: Interaction, number: int) -> Interaction:
    """The non-streaming twin of a recorded stream: the body the provider would have
    returned without streaming, as the codec folds the events."""
    recorded = interaction.response
    folded = codec.fold_detailed(recorded.sse_events())
    # A recording whose last event lacks its blank line (recorded.tail) folds without
    # its terminal event, as the SDKs read it: still a complete answer.
    if recorded.end != "complete" or folded.error is not None:
        error = ", with an in-stream error" if folded.error else ""
        raise ValueError(
            f"recorded model call #{number} did not complete (ended {recorded.end!r}{error}); "
            f"parity needs recordings of complete responses"
        )
    headers = {k: v for k, v in recorded.headers.items() if "request-id" in k}
    response = RecordedResponse(
        status=recorded.status,
        headers={**headers, "content-type": codec.json_content_type},
        json=folded.body,
    )
    return Interaction(request=interaction.request, response=response)


# --- comparing the runs -------------------------------------------------------------------


def compare_runs(runs: list[ParityRun]) -> None:
    """Fail at the first variant whose log or state differs from the reference run."""
    reference = runs[0]
    for other in runs[1:]:
        transport = other.stream  # a JSON run differs in how the response arrived, only
        ours = _parity_view(reference.log, transport=transport)
        theirs = _parity_view(other.log, transport=transport)
        labels = (reference.label, other.label)
        if ours != theirs:
            where = _first_difference(reference.log, ours, theirs, transport)
            fail(
                "assert_stream_parity",
                where,
                f"the {other.describe()} and the {reference.describe()} logged different "
                f"runs for the same response",
                ours,
                theirs,
                labels=labels,
            )
        stateful = reference.state is not None or other.state is not None
        if stateful and reference.normalized_state != other.normalized_state:
            fail(
                "assert_stream_parity",
                "the persisted state",
                f"the {other.describe()} and the {reference.describe()} persisted "
                f"different state for the same response",
                reference.normalized_state,
                other.normalized_state,
                labels=labels,
            )


def _parity_view(log: RunLog, *, transport: bool) -> dict[str, Any]:
    """The normalized log without ``events_sent``: how far the server got delivering a
    stream is the server's ledger, not something the agent did (and the SDKs differ in
    whether they drain a body after its last event)."""
    view = log.normalized(transport=transport)
    for call in view.get("model_calls", []):
        call.pop("events_sent", None)
    return view


def _first_difference(
    log: RunLog, ours: dict[str, Any], theirs: dict[str, Any], transport: bool
) -> str:
    """The step (or model call) at the first differing entry of two normalized logs."""
    mine, other = ours.get("entries", []), theirs.get("entries", [])
    real = [e for e in log.entries if transport or not isinstance(e, Delta)]
    for k in range(max(len(mine), len(other))):
        if k >= len(mine) or k >= len(other) or mine[k] != other[k]:
            entry = real[k] if k < len(real) else (real[-1] if real else None)
            return _where(log, getattr(entry, "step_id", None), f"entry #{k}")
    calls, their_calls = ours.get("model_calls", []), theirs.get("model_calls", [])
    for k in range(max(len(calls), len(their_calls))):
        if k >= len(calls) or k >= len(their_calls) or calls[k] != their_calls[k]:
            return f"model call #{k}"
    return "the egress ledger"


def _where(log: RunLog, step_id: str | None, fallback: str) -> str:
    step = log.step(step_id) if step_id is not None else None
    return step.describe() if step is not None else fallback
