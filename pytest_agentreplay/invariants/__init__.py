"""Invariants an agent runtime must keep, as assertions over run logs.

Each ``assert_*`` raises :class:`InvariantViolation` (an ``AssertionError``) whose
message names the first offending step and shows a short diff of what was
expected against what the log holds. All but :func:`assert_stream_parity` (which
runs your agent) and :func:`assert_no_live_calls` (which reads the egress
ledger) are pure functions of a :class:`~..runlog.RunLog`.

==================================================  ============================================
``assert_stream_parity``                            JSON and SSE (under many chunkings) give
                                                    equal logs
``assert_single_terminal_step``                     every started step ends exactly once;
                                                    retries start fresh step ids at the same
                                                    index; a retry loop that gives up ends its
                                                    last try ``failed``
``assert_no_live_calls``                            nothing reached the network; replay answered
                                                    every call from the recording
``assert_retries_resend_identical_input``           a retried model call sends the same request
                                                    body
``assert_every_tool_call_answered``                 every tool call gets exactly one result (or
                                                    its MCP server reports it failed); every
                                                    provider-side tool call that began ends once
``assert_interrupted_tool_call_ended_once``         a tool call running when stop was pressed
                                                    ends exactly once, at its server and in the
                                                    log
``assert_tool_retries_resend_identical_arguments``  a retried MCP tool call sends the arguments
                                                    of the try it repeats
``assert_dangling_intent_reissued``                 a write-ahead intent left by a crash is
                                                    re-issued once on resume and completes once
``assert_terminal_error_turn``                      a failed turn is saved as an error turn,
                                                    after the user's question and the partial
                                                    text the user saw, with no success event
``assert_error_metadata_reported``                  an HTTP error's status, ``retry-after`` and
                                                    request id reach the error record of its
                                                    step
``assert_no_model_call_after_interrupt``            once stop is pressed, the turn makes no
                                                    further model call (no retry after the
                                                    backoff)
``assert_no_partial_content_saved``                 text of an abandoned (retried) step never
                                                    reaches the saved context
==================================================  ============================================

The assertions are in :mod:`.assertions`, each the public face of a pure check
(:mod:`.steps`, :mod:`.turns`, :mod:`.retries`, :mod:`.error_turns`,
:mod:`.error_reports`, :mod:`.interrupts`, :mod:`.tool_calls`); stream parity runs in
:mod:`.parity`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .assertions import (
        assert_dangling_intent_reissued,
        assert_error_metadata_reported,
        assert_every_tool_call_answered,
        assert_interrupted_tool_call_ended_once,
        assert_no_live_calls,
        assert_no_model_call_after_interrupt,
        assert_no_partial_content_saved,
        assert_retries_resend_identical_input,
        assert_single_terminal_step,
        assert_stream_parity,
        assert_stream_parity_async,
        assert_terminal_error_turn,
        assert_tool_retries_resend_identical_arguments,
    )
    from .errors import InvariantViolation
    from .parity import DEFAULT_CHUNKINGS, ParityRun

__all__ = [
    "DEFAULT_CHUNKINGS",
    "InvariantViolation",
    "ParityRun",
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

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            ".assertions": (
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
            ),
            ".parity": ("DEFAULT_CHUNKINGS", "ParityRun"),
            ".errors": ("InvariantViolation",),
        },
    )
