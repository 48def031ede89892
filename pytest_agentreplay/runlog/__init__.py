"""Run logs: a normalized, serializable record of one agent run.

A :class:`RunLog` holds two sides of a run. The *model side* is the list of
:class:`~..neutral.ModelCall` objects the fakes or the cassette
served (request, how the call ended, events delivered); it fills itself from the
sources the log watches. The *agent side* is an ordered timeline of what the agent
runtime reports: steps started and completed, message deltas, tool calls and
results, messages persisted, write-ahead intents, errors, turn ends and resumes.
The :mod:`~..invariants` read both sides.

API (stable; :mod:`..snapshot` and :mod:`..strategies` build on it)::

    log = RunLog.from_fake(scripted_model)         # or RunLog().watch(fake, handle, ...)
    log = RunLog.from_cassette(agentreplay)        # model calls + egress ledger
    log = RunLog.from_pydantic_ai(result.all_messages())
    log = RunLog.from_openai_agents(result)        # RunResult, or a list of run items
    log.feed_openai_agents(event)                  # one openai-agents stream event

    log.step_started(step_id, step_index=0, turn_id=None, session_id=None, at=None)
    log.step_completed(step_id, outcome="completed", usage=None, text=None, at=None)
    log.delta(text, step_id=None)
    log.tool_call(call_id, name, args=None, step_id=None)
    log.tool_result(call_id, content="", outcome="completed", step_id=None)
    log.server_tool_call(call_id, name, args=None) / log.server_tool_result(call_id, ...)
    log.message(role, text, kind="message", step_id=None, turn_id=None, citations=())
    log.intent(key, step_id=None) / log.intent_completed(key)
    log.error_reported(kind, message="", retryable=None, status=None, retry_after=None,
                       request_id=None)
    log.turn_ended(turn_id, outcome="completed")
    log.interrupt_requested(turn_id) / log.resumed()

    log.model_calls / log.entries / log.egress     # the data (pydantic fields); a watched
                                                   # source is re-read at every access
    log.steps() -> list[Step]                      # started + ends, grouped by step id
    log.messages(role=None, turn_id=None, kind=None) / log.of(StepCompleted)
    log.refresh() / log.frozen()                   # pull model calls now / a still copy
    log.normalized(transport=True, calls="full")   # ids -> ordinals, times masked;
                                                   # calls="brief" | "none" for snapshots
    log.diff(other) -> list[str]                   # json_diff of the normalized views
    normalize(value, ids=IdMask(...)) -> JSON      # the same masking, for any state
    delivered_text(call) -> str                    # text a (cut) call got to the client

Equality (``==``) compares the logs exactly (after refreshing watched sources);
:meth:`RunLog.normalized` is the view to compare across runs and to snapshot:
step, turn, session, tool-call and intent ids become stable ordinals
(``<step-1>``), provider ids (``msg_...``, ``toolu_...``) and UUIDs become
``<id-1>`` / ``<uuid-1>``, and timestamps, durations and request ids are masked.

Builder methods return the entry they add, so a framework callback can be a
one-liner; ids may be strings, ints or UUIDs (stored as strings).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .delivered import delivered_text
    from .entries import (
        Delta,
        Egress,
        Entry,
        ErrorReported,
        IntentCompleted,
        IntentIssued,
        InterruptRequested,
        MessageKind,
        MessageSaved,
        Resumed,
        Role,
        ServerToolCalled,
        ServerToolResulted,
        Step,
        StepCompleted,
        StepOutcome,
        StepStarted,
        ToolCalled,
        ToolOutcome,
        ToolResulted,
        TurnEnded,
        TurnOutcome,
    )
    from .masking import IdMask, normalize
    from .run_log import RunLog

__all__ = [
    "Delta",
    "Egress",
    "Entry",
    "ErrorReported",
    "IdMask",
    "IntentCompleted",
    "IntentIssued",
    "InterruptRequested",
    "MessageKind",
    "MessageSaved",
    "Resumed",
    "Role",
    "RunLog",
    "ServerToolCalled",
    "ServerToolResulted",
    "Step",
    "StepCompleted",
    "StepOutcome",
    "StepStarted",
    "ToolCalled",
    "ToolOutcome",
    "ToolResulted",
    "TurnEnded",
    "TurnOutcome",
    "delivered_text",
    "normalize",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            ".run_log": ("RunLog",),
            ".entries": (
                "Delta",
                "Egress",
                "Entry",
                "ErrorReported",
                "IntentCompleted",
                "IntentIssued",
                "InterruptRequested",
                "MessageKind",
                "MessageSaved",
                "Resumed",
                "Role",
                "ServerToolCalled",
                "ServerToolResulted",
                "Step",
                "StepCompleted",
                "StepOutcome",
                "StepStarted",
                "ToolCalled",
                "ToolOutcome",
                "ToolResulted",
                "TurnEnded",
                "TurnOutcome",
            ),
            ".masking": ("IdMask", "normalize"),
            ".delivered": ("delivered_text",),
        },
    )
