"""The public assertions: each ``assert_*`` of :mod:`..invariants`.

Each one reads a run log (or the egress ledger) and hands it, frozen, to the pure check
that holds its rule (:mod:`.steps`, :mod:`.turns`, :mod:`.retries`...);
:func:`assert_stream_parity` runs the agent through :mod:`.parity` first. This is the
one module of the checks that asks the transport for the active router.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..runlog.adapters.calls import egress_of
from ..runlog.entries import Egress
from ..runlog.masking import IdMask
from ..runlog.run_log import RunLog
from ..transport.router import Router, active_router
from .error_reports import check_error_metadata_reported
from .error_turns import check_terminal_error_turn
from .interrupts import check_no_model_call_after_interrupt
from .parity import DEFAULT_CHUNKINGS, ParityRun, compare_runs, parity_async, parity_sync
from .retries import check_no_partial_content_saved, check_retries_resend_identical_input
from .steps import check_single_terminal_step
from .tool_calls import (
    check_interrupted_tool_call_ended_once,
    check_tool_retries_resend_identical_arguments,
)
from .turns import (
    check_dangling_intent_reissued,
    check_every_tool_call_answered,
    check_no_live_calls,
)

__all__ = [
    "assert_dangling_intent_reissued",
    "assert_error_metadata_reported",
    "assert_every_tool_call_answered",
    "assert_interrupted_tool_call_ended_once",
    "assert_no_live_calls",
    "assert_no_model_call_after_interrupt",
    "assert_no_partial_content_saved",
    "assert_retries_resend_identical_input",
    "assert_single_terminal_step",
    "assert_stream_parity",
    "assert_stream_parity_async",
    "assert_terminal_error_turn",
    "assert_tool_retries_resend_identical_arguments",
]


def assert_stream_parity(
    run: Callable[[bool], Any],
    *,
    script: Sequence[Any] | None = None,
    cassette: Any = None,
    chunkings: Sequence[Any] = DEFAULT_CHUNKINGS,
    respond: Any = None,
    seed: str = "agentreplay",
    ids: IdMask | None = None,
) -> list[ParityRun]:
    """Run ``run(stream)`` once per way of delivering the same response and require
    equal results.

    The response comes from a fresh :class:`~..fakes.FakeModel` serving ``script``
    (and ``respond``) for every run, or from a recorded ``cassette`` (a path, the
    ``agentreplay`` handle, or interactions): a recorded stream is replayed as
    recorded, and its non-streaming twin is the stream folded by the provider codec.
    ``run(True)`` is called once per chunking in ``chunkings`` (``"event"``,
    ``"whole"``, ``"lines"``, a byte size, a chunker), ``run(False)`` once.

    ``run`` (sync or async) returns a :class:`~..runlog.RunLog` — its model calls are
    taken from the fake when it watches nothing — or any persisted state (compared
    normalized, with the model calls compared too). Streamed runs must give equal
    logs; the non-streaming run must give an equal log except for how the response
    arrived (``normalized(transport=False)``: no deltas, stream flags or event
    counts). ``ids`` (a :class:`~..runlog.IdMask`) names the application's own ids
    (a ``turn_id`` field, a pattern), masked alike in every run. Returns the runs,
    the first being the reference (``sse/event``).
    """
    runs = parity_sync(
        run, script=script, cassette=cassette, chunkings=chunkings, respond=respond, seed=seed
    )
    compare_runs(runs, ids)
    return runs


async def assert_stream_parity_async(
    run: Callable[[bool], Any],
    *,
    script: Sequence[Any] | None = None,
    cassette: Any = None,
    chunkings: Sequence[Any] = DEFAULT_CHUNKINGS,
    respond: Any = None,
    seed: str = "agentreplay",
    ids: IdMask | None = None,
) -> list[ParityRun]:
    """:func:`assert_stream_parity` for async tests: ``run`` is awaited in the test's
    own event loop."""
    runs = await parity_async(
        run, script=script, cassette=cassette, chunkings=chunkings, respond=respond, seed=seed
    )
    compare_runs(runs, ids)
    return runs


def assert_single_terminal_step(log: RunLog) -> None:
    """Every started model step ends with exactly one terminal event
    (``step_completed``) whose id, index, turn and session match its start, no
    earlier than it started; a step that ended ``retrying`` is followed (if by
    anything in its turn) by a fresh step id at the same step index, and any other
    next step in the turn has a higher index. An interrupt therefore yields exactly
    one terminal step for the step that was running. A step still running when the
    process died (a ``resumed()`` entry follows its start) has no terminal event.

    Retry exhaustion: a step that ended ``retrying`` with no retry after it, in a turn
    that then ended (``turn_ended``), was the last try of a retry loop that gave up and
    must have ended ``failed`` — unless the turn ended ``aborted`` (an interrupt during
    the backoff) or the run resumed first (the process died during the backoff).
    """
    check_single_terminal_step(log.frozen())


def assert_retries_resend_identical_input(
    log: RunLog, *, ignore: Sequence[str] = (), min_retries: int = 1
) -> None:
    """Every retried model call sends exactly the request body of the try it repeats
    (top-level keys in ``ignore`` aside): no partial answer appended, no option
    changed. Retries are found by steps (a step that ended ``retrying`` and the next
    step of its turn, matched to model calls in order) or, when the log has no steps
    lined up with its calls, by calls (a call after a call that did not complete).
    At least ``min_retries`` retries must be found.
    """
    check_retries_resend_identical_input(log.frozen(), ignore=ignore, min_retries=min_retries)


def assert_no_partial_content_saved(log: RunLog) -> None:
    """No text of an abandoned attempt reaches the saved context after a retry.

    For every step that ended ``retrying``: no saved message carries its step id,
    and no assistant message saved after it contains its partial text (the text of
    its terminal event, else its deltas, else what its model call delivered) other
    than as part of the text the retry recovered. Requests sent to the model after a
    broken call must not carry the partial text it delivered either.
    """
    check_no_partial_content_saved(log.frozen())


def assert_every_tool_call_answered(log: RunLog) -> None:
    """Every tool call the agent logged gets exactly one result (``completed``,
    ``failed`` or ``interrupted``), no result answers an unknown call, and every
    request sent to the model answers each tool call in its history (a tool call
    left unanswered in the saved context makes the next request fail on a real
    provider). Provider-side tool calls (``server_tool_call`` entries: a web search
    the provider ran) need no result from the agent, but each one that began ends
    exactly once (``interrupted`` when its stream was cut first), and the agent
    answers none of them.

    With fake tool servers watched (``RunLog.watch(tool_server)``), across both halves:
    a tool call the agent logged and its server reports failed (cancelled, cut,
    crashed, a JSON-RPC error) counts as answered; no request answers one call twice;
    no server is left running a call; and a call the model asked for in its last reply
    is answered by the agent or reported failed by its server."""
    check_every_tool_call_answered(log.frozen())


def assert_interrupted_tool_call_ended_once(log: RunLog) -> None:
    """Every tool call a watched tool server was running when the user pressed stop
    (``log.interrupt_requested()``) ends exactly once: its server ended it (a runtime
    that leaves it running fails), it was not run again after the interrupt, and the
    agent logged at most one result for it — never ``completed`` for a call whose
    server never answered. A log with no interrupt, no watched tool server, or no call
    running at the interrupt fails: there would be nothing to check."""
    check_interrupted_tool_call_ended_once(log.frozen())


def assert_tool_retries_resend_identical_arguments(log: RunLog, *, min_retries: int = 1) -> None:
    """A tool call a runtime retries — the next call of the same tool on the same
    server after one that failed without an answer (a JSON-RPC error, a cut stream, a
    crashed server), where no model reply asked for the new arguments — sends the
    arguments of the try it repeats. Fails when fewer than ``min_retries`` retries are
    found (``min_retries=0`` to allow none)."""
    check_tool_retries_resend_identical_arguments(log.frozen(), min_retries=min_retries)


def assert_terminal_error_turn(
    log: RunLog, *, turn_id: Any = None, error_kind: str | None = None, keep_partial: bool = True
) -> None:
    """A failed turn (``turn_id``, default the last turn of the log) is saved as a
    terminal error turn: exactly one assistant message of kind ``error``, saved after
    any partial text and followed by no other message of the turn; the user's question
    is saved (a user message of the turn, or saved without a turn id just before it);
    the text the failed step had received before the error (its ``text``, else its
    deltas, else what its model call delivered) is kept in an assistant message saved
    before the error turn — ``keep_partial=False`` for a runtime that drops it by design;
    the turn has no success event (``turn_ended`` with outcome ``completed``); and,
    with ``error_kind``, the last error reported in the turn has that kind."""
    check_terminal_error_turn(
        log.frozen(), turn_id=turn_id, error_kind=error_kind, keep_partial=keep_partial
    )


def assert_error_metadata_reported(log: RunLog, *, min_errors: int = 1) -> None:
    """Every model call answered with an HTTP error is reported with that response's
    status, ``retry-after`` and request id: a 429's wait reaches the error record of its
    step, and so does the id support asks for.

    Each error record (``error_reported``) belongs to the step it names, else to the step
    that ended last before it; steps are paired with model calls (the *k*-th step started
    made the *k*-th call). A step that ended ``failed`` on an HTTP error must have a
    record; every record of a step whose call got an HTTP error must carry its
    ``status`` and, when the response had one, its ``retry_after`` (in seconds, or the
    whole seconds of the header) and its ``request_id`` (known for a fake's fault; a
    recording keeps the header as a placeholder). In a log whose steps do not line up
    with its calls
    (the SDK retried by itself), the last record goes with the last call that did not
    complete. At least ``min_errors`` records must be checked.
    """
    check_error_metadata_reported(log.frozen(), min_errors=min_errors)


def assert_no_model_call_after_interrupt(log: RunLog) -> None:
    """Once the user pressed stop (``log.interrupt_requested(turn_id)``, logged when it
    happens), the turn makes no further model call: no step of that turn starts after
    the interrupt, and — the interrupt having noted how many calls the watched fakes or
    cassette had received — no model call goes out after it other than those of steps
    of later turns. This is the check for an interrupt during a retry backoff: the retry
    must never go out."""
    check_no_model_call_after_interrupt(log.frozen())


def assert_dangling_intent_reissued(log: RunLog, *, key: Any = None) -> None:
    """A write-ahead intent left without completion when the run broke (before the
    first ``resumed()`` in the log) is re-issued exactly once after the resume and
    completed exactly once, after its re-issue; intents completed before the resume
    are not re-issued. ``key`` checks that one intent only (it must be dangling)."""
    check_dangling_intent_reissued(log.frozen(), key=key)


def assert_no_live_calls(source: Any = None, *, all_played: bool = False) -> None:
    """Nothing reached the network, and every call was answered by a fake or from the
    recording.

    ``source`` is the ``agentreplay`` handle (its calls must all be answered from the
    cassette), a :class:`~..runlog.RunLog` built from it, an interception
    :class:`~..transport.router.Router`, or nothing: the active test's router. Requests the
    guard blocked count too — an agent that swallows the error would otherwise pass.
    With ``all_played``, every recorded interaction must also have been played.
    """
    check_no_live_calls(_egress(source), all_played=all_played)


def _egress(source: Any) -> Egress:
    """The egress ledger ``source`` keeps or leads to (see :func:`assert_no_live_calls`)."""
    if source is None:
        return egress_of(_active_router())
    if isinstance(source, RunLog):
        source.refresh()
        if source.egress is None:
            raise ValueError(
                "this run log has no egress ledger: build it with "
                "RunLog.from_cassette(agentreplay), or pass the handle"
            )
        return source.egress
    return egress_of(source)


def _active_router() -> Router:
    """The active test's interception router. Only this public layer asks the transport
    for it: the checks themselves are pure functions of a log or a ledger."""
    router = active_router()
    if router is None:
        raise ValueError(
            "assert_no_live_calls() with no argument needs an active "
            "interception scope (a fixture, the marker or a FakeModel "
            "block); pass the agentreplay handle or a RunLog instead"
        )
    return router
