"""Running one agent scenario once per way of delivering the same response.

:func:`~.assert_stream_parity` calls the user's ``run(stream)`` for each
variant — the response streamed as SSE under several chunkings, and served as one
JSON body — each time against a fresh source of the *same* response: a
:class:`~..fakes.FakeModel` built from the script, or a
:class:`~..fakes.twin.TwinServer` built from a recording. A recorded stream is
replayed as recorded; its non-streaming twin is the stream folded by the provider
codec (``codec.fold``), so a cassette recorded with streaming on also proves the
non-streaming path. Then :func:`compare_runs` compares the runs' logs. The
transport is reached only through the fakes.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cassettes import io as cassette_io
from ..cassettes.cassette import Interaction
from ..fakes import ChunkingSpec
from ..fakes.fake_model import FakeModel
from ..fakes.script import call_sync
from ..fakes.twin import TwinServer
from ..runlog.entries import Delta
from ..runlog.masking import IdMask, normalize
from ..runlog.run_log import RunLog
from .errors import fail

__all__ = [
    "DEFAULT_CHUNKINGS",
    "ParityRun",
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
                result = call_sync(run, stream)
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


# --- comparing the runs -------------------------------------------------------------------


def compare_runs(runs: list[ParityRun], ids: IdMask | None = None) -> None:
    """Fail at the first variant whose log or state differs from the reference run;
    ``ids`` names the application's own ids, masked in both (issue 20: random turn
    ids made every variant differ)."""
    if ids is not None:
        for run in runs:
            if run.state is not None and run.state is not run.log:
                run.normalized_state = normalize(run.state, ids=ids)
    reference = runs[0]
    for other in runs[1:]:
        transport = other.stream  # a JSON run differs in how the response arrived, only
        ours = _parity_view(reference.log, transport=transport, ids=ids)
        theirs = _parity_view(other.log, transport=transport, ids=ids)
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


def _parity_view(log: RunLog, *, transport: bool, ids: IdMask | None) -> dict[str, Any]:
    """The normalized log without ``events_sent``: how far the server got delivering a
    stream is the server's ledger, not something the agent did (and the SDKs differ in
    whether they drain a body after its last event)."""
    view = log.normalized(transport=transport, ids=ids)
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
