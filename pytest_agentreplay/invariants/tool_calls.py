"""The checks across both halves of a run: the tool calls the model asked for, as the
agent logged them and as the tool servers saw them.

A run log that watches fake tool servers (``RunLog.watch(tool_server)``) holds each
``tools/call`` a server received and how it ended (``log.tool_calls``). Three rules read
it beside the model calls and the agent's entries:

- every tool call the model asked for is answered once, or reported failed: no request
  answers a call twice; a call the model asked for last (no model call followed) was
  answered by the agent or failed where it ran; and no tool server was left running a
  call (part of :func:`~.assert_every_tool_call_answered`);
- a tool call interrupted by the user ends exactly once: each call running when stop
  was pressed ended at its server, once, was not run again, and the agent logged at
  most one result for it, never ``completed`` for a call its server never finished
  (:func:`~.assert_interrupted_tool_call_ended_once`);
- a retried tool call resends identical arguments: the call that follows a failed one
  (a JSON-RPC error, a cut, a crash) of the same tool, with no model step asking anew,
  sends the arguments of the try it repeats
  (:func:`~.assert_tool_retries_resend_identical_arguments`).

Agent-side tool calls are paired with server calls by tool name and arguments, in
order. See :mod:`pytest_agentreplay.invariants` for what each check means.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ..neutral import ToolCall, ToolResult
from ..runlog.entries import InterruptRequested, ToolCalled, ToolResulted
from .errors import dump, fail

if TYPE_CHECKING:
    from ..mcp.fake.calls import ToolServerCall
    from ..runlog.run_log import RunLog

__all__ = [
    "check_interrupted_tool_call_ended_once",
    "check_tool_calls_answered_across",
    "check_tool_retries_resend_identical_arguments",
    "failed_at_server",
    "tool_retry_pairs",
]

_ANSWERED = "assert_every_tool_call_answered"
_INTERRUPTED = "assert_interrupted_tool_call_ended_once"
_RETRIED = "assert_tool_retries_resend_identical_arguments"
_RETRYABLE = frozenset({"rpc_error", "cut", "crashed"})
"""How a call fails that a runtime may retry unasked: the tool never answered. A
``tool_error`` is an answer the model reads; a ``cancelled`` call was stopped."""


def _named(call: ToolServerCall) -> str:
    return f"tool call #{call.index} ({call.tool} on {call.server!r})"


def _brief(call: ToolServerCall) -> dict[str, Any]:
    return {"tool": call.tool, "arguments": call.arguments, "outcome": call.outcome}


def _served(log: RunLog) -> set[str]:
    return {name for names in log.tool_servers.values() for name in names}


def _agent_results(log: RunLog, tool: str, arguments: dict[str, Any]) -> list[ToolResulted]:
    """The agent's results for its tool calls of ``tool`` with ``arguments``."""
    ids = {c.call_id for c in log.of(ToolCalled) if c.name == tool and c.args == arguments}
    return [r for r in log.of(ToolResulted) if r.call_id in ids]


def failed_at_server(log: RunLog, call: ToolCalled) -> bool:
    """Whether a tool server reports the agent's tool ``call`` failed (or cancelled): a
    call that was reported failed there needs no result from the agent."""
    return any(c.failed for c in log.tool_calls if c.tool == call.name and c.arguments == call.args)


# --- answered once, or reported failed ---------------------------------------------------


def _check_requests_answer_once(log: RunLog) -> None:
    """No request sent to the model answers one tool call twice."""
    for call in log.model_calls:
        counts = Counter(
            part.tool_call_id
            for message in call.request.messages
            for part in message.parts
            if isinstance(part, ToolResult)
        )
        twice = {k: n for k, n in counts.items() if n > 1}
        if twice:
            first = next(iter(twice))
            fail(
                _ANSWERED,
                f"model call #{call.index}, tool call {first!r}",
                f"the request sent to the model answers it {twice[first]} times",
                dict.fromkeys(twice, 1),
                twice,
            )


def _check_servers_ended(log: RunLog) -> None:
    """No tool server is left running a call."""
    for call in log.tool_calls:
        if not call.ended:
            fail(
                _ANSWERED,
                _named(call),
                "it never ended: the runtime neither waited for the call nor cancelled it",
                {"outcome": "(an ending)"},
                _brief(call),
            )


def _last_asked(log: RunLog) -> list[ToolCall]:
    """The tool calls of the last model reply: no model call followed to carry their
    results, so they must be answered by the agent or fail where they ran."""
    if not log.model_calls or log.model_calls[-1].reply is None:
        return []
    return log.model_calls[-1].reply.tool_calls


def _check_last_asked(log: RunLog) -> None:
    served = _served(log)
    for asked in _last_asked(log):
        if asked.name not in served:
            continue
        ran = [c for c in log.tool_calls if c.tool == asked.name and c.arguments == asked.args]
        answered = _agent_results(log, asked.name, asked.args)
        if answered or any(c.failed for c in ran):
            continue
        where = f"model call #{log.model_calls[-1].index}, tool call {asked.name}({asked.args})"
        fail(
            _ANSWERED,
            where,
            "the model asked for it last; its result was neither logged by the agent nor "
            "sent on, and its tool server reports no failure"
            + ("" if ran else " (the server never received it)"),
            {"answered or failed": True},
            {"server calls": [_brief(c) for c in ran], "agent results": []},
        )


def check_tool_calls_answered_across(log: RunLog) -> None:
    """The cross-half part of :func:`~.assert_every_tool_call_answered`."""
    _check_requests_answer_once(log)
    _check_servers_ended(log)
    _check_last_asked(log)


# --- interrupted tool calls ----------------------------------------------------------------


def _interrupts(log: RunLog) -> list[InterruptRequested]:
    found = log.of(InterruptRequested)
    if not found:
        fail(
            _INTERRUPTED,
            "the run",
            "the log has no interrupt: call log.interrupt_requested(turn_id) when the user "
            "presses stop",
            [{"event": "interrupt_requested"}],
            [],
        )
    if all(e.tool_calls_open is None for e in found):
        fail(
            _INTERRUPTED,
            "the interrupt",
            "the log watched no tool server when stop was pressed: watch it first "
            "(RunLog.watch(tool_server)), so the interrupt notes which calls were running",
        )
    return found


def _check_one(log: RunLog, call: ToolServerCall, before: int) -> None:
    if not call.ended:
        fail(
            _INTERRUPTED,
            _named(call),
            "it never ended after stop was pressed",
            None,
            None,
            lines=[f"logged: {_brief(call)}"],
        )
    again = [
        c
        for c in log.tool_calls[before:]
        if c.tool == call.tool and c.arguments == call.arguments and c.server == call.server
    ]
    if again:
        fail(
            _INTERRUPTED,
            _named(call),
            f"it ran again after stop was pressed (as {_named(again[0])}): an interrupted "
            f"call ends once",
            [_brief(call)],
            [_brief(call), *[_brief(c) for c in again]],
        )
    results = _agent_results(log, call.tool, call.arguments)
    if len(results) > 1:
        fail(
            _INTERRUPTED,
            _named(call),
            f"the agent logged {len(results)} results for it: an interrupted call ends once",
            [{"outcome": "interrupted"}],
            [dump(r) for r in results],
        )
    if results and results[0].outcome == "completed" and call.outcome != "completed":
        fail(
            _INTERRUPTED,
            _named(call),
            f"the agent logged it completed, but its server ended it {call.outcome!r}: no "
            f"result came",
            {"agent outcome": "interrupted"},
            {"agent outcome": "completed", "server outcome": call.outcome},
        )


def check_interrupted_tool_call_ended_once(log: RunLog) -> None:
    """See :func:`~.assert_interrupted_tool_call_ended_once`."""
    checked = 0
    for entry in _interrupts(log):
        before = entry.tool_calls_before or 0
        for index in entry.tool_calls_open or []:
            _check_one(log, log.tool_calls[index], before)
            checked += 1
    if not checked:
        fail(
            _INTERRUPTED,
            "the interrupt",
            "no tool call was running when stop was pressed: nothing was interrupted",
            {"running at the interrupt": "(a tool call)"},
            {"running at the interrupt": []},
        )


# --- retries -----------------------------------------------------------------------------------


def _asked(log: RunLog, tool: str, arguments: dict[str, Any]) -> bool:
    """Whether a model reply asked for ``tool`` with ``arguments``."""
    return any(
        part.name == tool and part.args == arguments
        for call in log.model_calls
        if call.reply is not None
        for part in call.reply.tool_calls
    )


def tool_retry_pairs(log: RunLog) -> list[tuple[ToolServerCall, ToolServerCall]]:
    """(failed try, retry): the next call of the same tool on the same server after a
    call that failed unanswered, unless a model reply asked for the new call's arguments
    (then it is a new call, not a retry)."""
    pairs = []
    calls = log.tool_calls
    for position, first in enumerate(calls):
        if first.outcome not in _RETRYABLE:
            continue
        later = [
            c for c in calls[position + 1 :] if (c.server, c.tool) == (first.server, first.tool)
        ]
        if not later:
            continue
        retry = later[0]
        if retry.arguments != first.arguments and _asked(log, retry.tool, retry.arguments):
            continue
        pairs.append((first, retry))
    return pairs


def check_tool_retries_resend_identical_arguments(log: RunLog, *, min_retries: int = 1) -> None:
    """See :func:`~.assert_tool_retries_resend_identical_arguments`."""
    pairs = tool_retry_pairs(log)
    if len(pairs) < min_retries:
        fail(
            _RETRIED,
            "the run",
            f"found {len(pairs)} tool retr{'y' if len(pairs) == 1 else 'ies'}, expected at "
            f"least {min_retries}"
            + ("" if log.tool_calls else " (the log has no tool calls: watch the tool server)"),
            {"retries": min_retries},
            {"retries": len(pairs)},
            lines=[f"tool calls: {[_brief(c) for c in log.tool_calls]}"],
        )
    for first, retry in pairs:
        if retry.arguments != first.arguments:
            fail(
                _RETRIED,
                f"{_named(retry)}, the retry of {_named(first)} ({first.outcome})",
                "the retry sent different arguments than the try it repeats",
                first.arguments,
                retry.arguments,
                labels=("first try", "retry"),
            )
