"""Crash-point exploration: stop a run after each step, resume it, compare.

A durable agent runtime promises that a crash at any point, followed by a
resume from its store, ends in the same state as a run that never crashed. The
:class:`CrashExplorer` checks that promise step by step. You give it four
hooks: ``fresh()`` (a new runtime with an empty store), ``run(runtime,
checkpoint)`` (the whole run, calling ``checkpoint("what was just made
durable")`` after each step), ``resume(runtime)`` (restart from the store) and
``state(runtime)`` (what must come out the same: saved messages, the
write-ahead log, a :class:`~..runlog.RunLog`). It then

1. runs the scenario uninterrupted — the reference — and counts its crash points;
2. for each crash point *k* (or those you pick, or hypothesis picks), runs it
   again in a fresh runtime, raises :class:`SimulatedCrash` at point *k*, calls
   ``resume`` on the same runtime, and compares its normalized state with the
   reference's;
3. fails with a :class:`CrashDivergence` carrying a stable code (see
   :data:`CRASH_CODES`) and naming the crash point and the first step where the
   states part.

Give ``script=`` (replies, or :func:`recorded_script` of a cassette) and the
explorer serves the model itself: every attempt gets a fake model that answers
each request the way the reference run's was answered (a re-sent request gets
the answer the reference ended with), and each model request is a crash point
too — the process dying while the call is in flight.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..jsondiff import format_path, json_diff
from ..neutral import Fault, Reply, Request, ToolCall
from ..snapshot import snapshot_view
from .errors import CRASH_CODES, CrashDivergence, CrashPoint, SimulatedCrash

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from ..cassettes.cassette import Cassette
    from ..fakes.script import ScriptItem

__all__ = [
    "CRASH_CODES",
    "Checkpoint",
    "CrashDivergence",
    "CrashExplorer",
    "CrashPoint",
    "CrashResult",
    "SimulatedCrash",
    "recorded_script",
]

R = TypeVar("R")


class Checkpoint:
    """The callable a run calls after each durable step: ``checkpoint("intent saved")``.

    It counts the steps; in a crashing attempt it raises :class:`SimulatedCrash`
    at its crash point.
    """

    def __init__(self, crash_at: int | None = None) -> None:
        self.crash_at = crash_at
        self.points: list[CrashPoint] = []
        self.crashed: CrashPoint | None = None

    def __call__(self, label: str = "") -> None:
        point = CrashPoint(len(self.points), label)
        self.points.append(point)
        if point.index == self.crash_at:
            self.crashed = point
            raise SimulatedCrash(point)


@dataclass(frozen=True)
class CrashResult:
    """A crash point the runtime survived, and the (normalized) state it ended in."""

    point: CrashPoint
    state: Any = field(repr=False)


class CrashExplorer(Generic[R]):
    """Run a scenario, crash it at each step, resume it, compare with the uninterrupted run.

    ``fresh()`` builds a runtime with an empty store; ``run(runtime, checkpoint)``
    runs the scenario, calling ``checkpoint(label)`` after each step it makes
    durable; ``resume(runtime)`` restarts from the store; ``state(runtime)`` reads
    what must match. States are compared after ``normalize`` (default:
    :func:`~..snapshot.snapshot_view`, which masks ids and clocks
    the way snapshots do, and shows a run log as its normalized view).
    ``script`` makes the explorer serve the model (see the module docs);
    ``check_determinism`` runs the reference twice first, so a flaky scenario
    is reported as such (``AR-CRASH-005``) instead of as a crash bug.
    """

    def __init__(
        self,
        *,
        fresh: Callable[[], R],
        run: Callable[[R, Checkpoint], object],
        resume: Callable[[R], object],
        state: Callable[[R], Any],
        script: Sequence[ScriptItem] | None = None,
        normalize: Callable[[Any], Any] = snapshot_view,
        check_determinism: bool = True,
    ) -> None:
        self._fresh, self._run, self._resume, self._state = fresh, run, resume, state
        self._normalize = normalize
        self._model = None if script is None else _ScriptedWorld(script)
        self._check_determinism = check_determinism
        self._reference: tuple[list[CrashPoint], Any] | None = None

    # --- the reference run ----------------------------------------------------------

    @property
    def points(self) -> list[CrashPoint]:
        """Every crash point of the scenario, from the uninterrupted run."""
        return list(self._ensure_reference()[0])

    def _ensure_reference(self) -> tuple[list[CrashPoint], Any]:
        if self._reference is None:
            points, state = self._uninterrupted(record=True)
            if self._check_determinism:
                _, again = self._uninterrupted(record=False)
                diff = json_diff(state, again)
                if diff:
                    raise CrashDivergence("AR-CRASH-005", None, "", diff=diff)
            self._reference = (points, state)
        return self._reference

    def _uninterrupted(self, *, record: bool) -> tuple[list[CrashPoint], Any]:
        runtime = self._fresh()
        checkpoint = Checkpoint()
        try:
            with self._serving(checkpoint, record=record):
                self._run(runtime, checkpoint)
        except _UnknownRequest as unknown:
            detail = f"the second run sent a request the first did not: {unknown.key[:300]}"
            raise CrashDivergence("AR-CRASH-005", None, detail) from None
        return checkpoint.points, self._normalize(self._state(runtime))

    # --- crashing -------------------------------------------------------------------

    def check(self, k: int) -> CrashResult:
        """Crash at point ``k``, resume, compare; raise :class:`CrashDivergence` if the
        resumed state differs (or the run misbehaves around the crash)."""
        points, expected = self._ensure_reference()
        if not 0 <= k < len(points):
            raise IndexError(f"crash point {k} out of range: the run has {len(points)}")
        point = points[k]
        runtime = self._fresh()
        checkpoint = Checkpoint(crash_at=k)
        try:
            with self._serving(checkpoint, record=False):
                self._crash(runtime, checkpoint, point)
                self._resume_after(runtime, point)
        except _UnknownRequest as unknown:
            detail = f"unknown request: {unknown.key[:300]}"
            raise CrashDivergence("AR-CRASH-006", point, detail) from None
        return CrashResult(point, self._compare(point, expected, runtime))

    def _resume_after(self, runtime: R, point: CrashPoint) -> None:
        try:
            self._resume(runtime)
        except Exception as exc:
            detail = f"resume raised {type(exc).__name__}: {exc}"
            raise CrashDivergence("AR-CRASH-002", point, detail) from exc

    def _crash(self, runtime: R, checkpoint: Checkpoint, point: CrashPoint) -> None:
        try:
            self._run(runtime, checkpoint)
        except SimulatedCrash as crash:
            if crash.point.index == point.index:
                return
            raise
        if checkpoint.crashed is not None:
            raise CrashDivergence("AR-CRASH-003", point, "run() returned after the crash")
        reached = len(checkpoint.points)
        raise CrashDivergence(
            "AR-CRASH-004",
            point,
            f"this run passed {reached} crash point(s), the reference {point.index + 1} or more",
        )

    def _compare(self, point: CrashPoint, expected: Any, runtime: R) -> Any:
        actual = self._normalize(self._state(runtime))
        diff = json_diff(expected, actual, labels=("uninterrupted", "resumed"))
        if diff:
            step = _first_divergence(expected, actual)
            raise CrashDivergence("AR-CRASH-001", point, "", step=step, diff=diff)
        return actual

    def explore(self, points: Iterable[int] | None = None) -> list[CrashResult]:
        """:meth:`check` every crash point (or those in ``points``); the first
        divergence is raised."""
        chosen = range(len(self.points)) if points is None else points
        return [self.check(k) for k in chosen]

    def crash_points(self) -> SearchStrategy[int]:
        """A hypothesis strategy over this scenario's crash points (shrinks toward the
        first), for ``explorer.check(data.draw(explorer.crash_points()))``."""
        from hypothesis import strategies as st  # noqa: PLC0415 - hypothesis is optional

        count = len(self.points)
        if not count:
            raise ValueError("the run has no crash points: call checkpoint(label) in run()")
        return st.integers(0, count - 1)

    # --- the model ----------------------------------------------------------------------

    def _serving(self, checkpoint: Checkpoint, *, record: bool) -> AbstractContextManager[Any]:
        if self._model is None:
            return nullcontext()
        served: AbstractContextManager[Any] = self._model.serve(checkpoint, record=record)
        return served


def _first_divergence(expected: Any, actual: Any) -> str | None:
    """The path of the first step where two states part: the first differing item of
    the first differing list (``entries[4]``), or the first differing key."""
    path: list[str | int] = []
    a, b = expected, actual
    while True:
        if isinstance(a, list) and isinstance(b, list):
            i = next(
                (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                min(len(a), len(b)),
            )
            path.append(i)
            return format_path(tuple(path))
        if not (isinstance(a, dict) and isinstance(b, dict)):
            return format_path(tuple(path)) if path else None
        key = next((k for k in [*a, *b] if a.get(k) != b.get(k)), None)
        if key is None:
            return None
        path.append(key)
        a, b = a.get(key), b.get(key)


# --- serving the model -------------------------------------------------------------------


class _UnknownRequest(BaseException):
    """A request the reference run never sent: raised through the runtime (which must
    not catch it, hence a BaseException) and reported by the explorer."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _key(request: Request) -> str:
    return json.dumps(request.raw, sort_keys=True, ensure_ascii=False)


def _pin_ids(reply: Reply, number: int) -> Reply:
    """Give generated tool-call ids fixed values: a resumed run re-sends requests that
    carry them, and must find them as the reference run sent them."""
    if not any(isinstance(p, ToolCall) and p.id is None for p in reply.parts):
        return reply
    parts = [
        p.model_copy(update={"id": f"call_{number}_{j}"})
        if isinstance(p, ToolCall) and p.id is None
        else p
        for j, p in enumerate(reply.parts)
    ]
    return reply.model_copy(update={"parts": parts})


class _ScriptedWorld:
    """The model as the explorer serves it: the script in the reference run, then,
    in every attempt, each request answered as the reference answered it."""

    def __init__(self, script: Sequence[ScriptItem]) -> None:
        from ..fakes.script import as_reply  # noqa: PLC0415 - the fakes load with their first use

        self.script = [_pin_ids(as_reply(item), i) for i, item in enumerate(script)]
        self.answers: dict[str, list[Reply]] = {}

    def serve(self, checkpoint: Checkpoint, *, record: bool) -> Any:
        from ..fakes.fake_model import FakeModel  # noqa: PLC0415

        queue = list(self.script)
        seen: dict[str, int] = {}

        def respond(request: Request) -> Reply:
            checkpoint(f"model request #{sum(seen.values())}")
            key = _key(request)
            if record:
                reply = queue.pop(0) if queue else Reply(fault=Fault.http(500, "script ran out"))
                self.answers.setdefault(key, []).append(reply)
                seen[key] = seen.get(key, 0) + 1
                return reply
            return self._replay(key, seen)

        return FakeModel(respond=respond, check_unused=False, name="crash-explorer model")

    def _replay(self, key: str, seen: dict[str, int]) -> Reply:
        known = self.answers.get(key)
        if not known:
            raise _UnknownRequest(key)
        count = seen.get(key, 0)
        seen[key] = count + 1
        return known[min(count, len(known) - 1)]


def recorded_script(cassette: str | os.PathLike[str] | Cassette) -> list[Reply]:
    """The replies a recorded run's model calls got, in order, as a script for the
    explorer (or any fake model): each stream folded into its final message, each
    HTTP error as ``Fault.http``, a stream that was cut as its reply cut after the
    same number of events. Requests that are not model calls are skipped."""
    from ..cassettes.cassette import Cassette  # noqa: PLC0415
    from ..cassettes.io import load  # noqa: PLC0415 - YAML loads only when asked for
    from ..providers import codec_for, detect  # noqa: PLC0415

    loaded = cassette if isinstance(cassette, Cassette) else load(cassette)
    script: list[Reply] = []
    for interaction in loaded.interactions:
        request, response = interaction.request, interaction.response
        provider = detect(request.method, _path(request.url))
        if provider is not None:
            script.append(_recorded_reply(codec_for(provider), response))
    return script


def _path(url: str) -> str:
    from urllib.parse import urlsplit  # noqa: PLC0415

    return urlsplit(url).path


def _recorded_reply(codec: Any, response: Any) -> Reply:
    if response.status >= 400:
        return Reply(fault=Fault.http(response.status))
    if response.events is None:
        reply: Reply = codec.to_reply(response.json_body or {})
        return reply
    folded = codec.fold_detailed(response.sse_events())
    reply = codec.to_reply(folded.body)
    if response.end in ("cut", "cancelled", "incomplete"):
        return reply.model_copy(update={"fault": Fault.cut(after_events=len(response.events))})
    if response.end == "timeout":
        return reply.model_copy(update={"fault": Fault.timeout(len(response.events))})
    return reply
