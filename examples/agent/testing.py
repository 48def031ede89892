"""Test support: report what the agent does to a pytest-agentreplay ``RunLog``.

``record(agent, log)`` subscribes to the agent's events and to its store's writes,
and turns each into one run-log entry — an error with the provider's request id, a
saved answer with the sources it cites — so that the invariants
(``pytest_agentreplay.invariants``) and snapshots can read the run::

    log = record(agent, RunLog.from_fake(scripted_model))
    await agent.run_turn("Hi")
    invariants.assert_single_terminal_step(log)

This is the only module of the agent that imports the plugin.
"""

from __future__ import annotations

from pytest_agentreplay import Citation as LogCitation
from pytest_agentreplay import Usage as LogUsage
from pytest_agentreplay.runlog import RunLog

from .events import (
    Citation,
    ErrorEvent,
    Event,
    MessageDelta,
    ModelStepCompleted,
    ModelStepStarted,
    ServerToolBegin,
    ServerToolEnd,
    ToolBegin,
    ToolEnd,
    TurnAborted,
    TurnComplete,
    Usage,
)
from .runtime import Agent
from .store import Message, Record


def record(agent: Agent, log: RunLog | None = None) -> RunLog:
    """Log ``agent``'s events and store writes into ``log`` (a new one by default)."""
    log = log if log is not None else RunLog()
    agent.subscribe(lambda event: log_event(log, event))
    agent.store.subscribe(lambda record: log_write(log, record))
    return log


def log_event(log: RunLog, event: Event) -> None:
    """One agent event as a run-log entry (``FinalMessage`` is logged as the saved
    message it comes with)."""
    match event:
        case ModelStepStarted():
            log.step_started(
                event.step_id,
                step_index=event.step_index,
                turn_id=event.turn_id,
                session_id=event.session_id,
                at=event.at,
            )
        case ModelStepCompleted():
            log.step_completed(
                event.step_id,
                event.outcome,
                usage=_usage(event.usage),
                text=event.text or None,
                at=event.at,
            )
        case MessageDelta():
            log.delta(event.text, step_id=event.step_id)
        case ToolBegin():
            log.tool_call(event.call_id, event.name, step_id=event.step_id)
        case ToolEnd():
            log.tool_result(
                event.call_id, event.output, outcome=event.outcome, step_id=event.step_id
            )
        case ServerToolBegin():
            log.server_tool_call(event.call_id, event.name, step_id=event.step_id)
        case ServerToolEnd():
            log.server_tool_result(event.call_id, outcome=event.outcome, step_id=event.step_id)
        case ErrorEvent():
            error = event.error
            log.error_reported(
                error.kind,
                error.message,
                retryable=error.retryable,
                status=error.status,
                retry_after=error.retry_after,
                request_id=error.request_id,
                turn_id=event.turn_id,
            )
            log.turn_ended(event.turn_id, "failed")
        case TurnComplete():
            log.turn_ended(event.turn_id, "completed")
        case TurnAborted():
            log.turn_ended(event.turn_id, "aborted")


def log_write(log: RunLog, record: Record) -> None:
    """One store write as a run-log entry: a saved message (with the sources it
    cites), an intent, a completion."""
    if isinstance(record, Message):
        log.message(
            record.role,
            record.text,
            kind=record.kind,
            step_id=record.step_id,
            turn_id=record.turn_id,
            citations=[_citation(c) for c in record.citations],
        )
    elif record.entry == "intent":
        log.intent(record.key, step_id=record.step_id)
    else:
        log.intent_completed(record.key, step_id=record.step_id)


def _citation(citation: Citation) -> LogCitation:
    return LogCitation(
        url=citation.url,
        title=citation.title,
        cited_text=citation.cited_text,
        start=citation.start,
        end=citation.end,
    )


def _usage(usage: Usage | None) -> LogUsage | None:
    if usage is None:
        return None
    return LogUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_input_tokens=usage.cache_read_tokens or None,
        cache_creation_input_tokens=usage.cache_write_tokens or None,
    )
