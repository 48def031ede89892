"""The agent side of a run log from LangChain / LangGraph callbacks.

:func:`langchain_handler` returns a LangChain callback handler that turns the
callbacks of a run into run-log entries as they happen: the outermost chain (a
LangGraph graph, an ``AgentExecutor``) is a turn, each chat-model call a step
(its tokens deltas, its tool calls and text saved), each tool run a tool result,
a model error an error report. Pass it in ``config={"callbacks": [handler]}``.
The callbacks are read by attribute; ``langchain_core`` is imported only when a
handler is built (its base class), so run logs cost nothing without LangChain.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ...neutral import Usage
from ..entries import (
    Delta,
    Entry,
    ErrorReported,
    MessageSaved,
    StepCompleted,
    StepStarted,
    ToolCalled,
    ToolResulted,
    TurnEnded,
)
from . import token_count

__all__ = ["LangChainRecorder", "langchain_handler"]


class LangChainRecorder:
    """The callbacks, as entries. ``sink`` receives each entry (``RunLog.add``);
    :attr:`entries` keeps them all. Thread-safe: LangGraph runs tools in threads."""

    raise_error = True  # a bug in the adapter must fail the test, not vanish
    run_inline = True  # async runs call it in order, in the event loop
    ignore_llm = ignore_chat_model = ignore_chain = ignore_agent = False
    ignore_retriever = ignore_retry = ignore_custom_event = False

    def __init__(self, sink: Callable[[Any], Any] | None = None) -> None:
        self.entries: list[Entry] = []
        self._sink = sink
        self._lock = threading.Lock()
        self._root: str | None = None
        self._steps_in_turn = 0
        self._tool_calls: dict[str, str] = {}  # tool run id: the model's tool-call id
        self._indexes: dict[str, int] = {}  # chat-model run id: its step index

    def _emit(self, *entries: Entry) -> None:
        with self._lock:
            for entry in entries:
                self.entries.append(entry)
                if self._sink is not None:
                    self._sink(entry)

    # --- turns: the outermost chain -------------------------------------------------

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: Any, **kw: Any) -> None:
        if kw.get("parent_run_id") is not None or self._root is not None:
            return
        self._root, self._steps_in_turn = str(run_id), 0
        question = _last_human_text(inputs)
        if question is not None:
            self._emit(MessageSaved(role="user", text=question, turn_id=self._root))

    def on_chain_end(self, outputs: Any, *, run_id: Any, **kw: Any) -> None:
        self._end_turn(run_id, "completed")

    def on_chain_error(self, error: BaseException, *, run_id: Any, **kw: Any) -> None:
        self._end_turn(run_id, "failed")

    def _end_turn(self, run_id: Any, outcome: Any) -> None:
        if self._root is not None and str(run_id) == self._root:
            self._emit(TurnEnded(turn_id=self._root, outcome=outcome))
            self._root = None

    # --- steps: chat-model calls ----------------------------------------------------

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: Any, **kw: Any
    ) -> None:
        index, self._steps_in_turn = self._steps_in_turn, self._steps_in_turn + 1
        self._indexes[str(run_id)] = index
        self._emit(StepStarted(step_id=str(run_id), step_index=index, turn_id=self._root))

    def on_llm_new_token(self, token: Any, *, run_id: Any, **kw: Any) -> None:
        # A string, or (langchain-anthropic) the chunk's content blocks.
        text = _text_of(token)
        if text:
            self._emit(Delta(text=text, step_id=str(run_id)))

    def on_llm_end(self, response: Any, *, run_id: Any, **kw: Any) -> None:
        step, turn = str(run_id), self._root
        message = _first_message(response)
        text = _text_of(getattr(message, "content", ""))
        entries: list[Entry] = [
            StepCompleted(
                step_id=step,
                step_index=self._indexes.get(step),
                turn_id=turn,
                text=text,
                usage=_usage(message),
            )
        ]
        if text:
            entries.append(MessageSaved(role="assistant", text=text, step_id=step, turn_id=turn))
        for call in getattr(message, "tool_calls", None) or []:
            entries.append(
                ToolCalled(call_id=call["id"], name=call["name"], args=call["args"], step_id=step)
            )
        self._emit(*entries)

    def on_llm_error(self, error: BaseException, *, run_id: Any, **kw: Any) -> None:
        step, turn = str(run_id), self._root
        response = getattr(error, "response", None)
        headers = getattr(response, "headers", None) or {}
        report = ErrorReported(
            kind=type(error).__name__,
            message=str(error),
            status=getattr(error, "status_code", None),
            retry_after=headers.get("retry-after"),
            step_id=step,
            turn_id=turn,
        )
        index = self._indexes.get(step)
        completed = StepCompleted(step_id=step, step_index=index, turn_id=turn, outcome="failed")
        self._emit(report, completed)

    # --- tools ----------------------------------------------------------------------

    def on_tool_start(self, serialized: Any, input_str: Any, *, run_id: Any, **kw: Any) -> None:
        with self._lock:
            self._tool_calls[str(run_id)] = kw.get("tool_call_id") or str(run_id)

    def on_tool_end(self, output: Any, *, run_id: Any, **kw: Any) -> None:
        call_id = self._tool_calls.get(str(run_id)) or getattr(output, "tool_call_id", None)
        failed = getattr(output, "status", "success") == "error"
        content = _text_of(getattr(output, "content", output))
        outcome = "failed" if failed else "completed"
        self._emit(ToolResulted(call_id=call_id or str(run_id), content=content, outcome=outcome))

    def on_tool_error(self, error: BaseException, *, run_id: Any, **kw: Any) -> None:
        call_id = self._tool_calls.get(str(run_id)) or kw.get("tool_call_id") or str(run_id)
        self._emit(ToolResulted(call_id=call_id, content=str(error), outcome="failed"))


_HANDLER: list[type] = []


def langchain_handler(log: Any = None) -> Any:
    """A LangChain callback handler (a ``BaseCallbackHandler``) adding the run's
    entries to ``log`` (a :class:`~pytest_agentreplay.runlog.RunLog`, or anything with
    ``add(entry)``) as they happen; its ``entries`` keeps them too."""
    if not _HANDLER:
        from langchain_core.callbacks import BaseCallbackHandler

        _HANDLER.append(
            type("AgentReplayCallbackHandler", (LangChainRecorder, BaseCallbackHandler), {})
        )
    return _HANDLER[0](None if log is None else log.add)


def _last_human_text(inputs: Any) -> str | None:
    """The question a turn starts with: a string input, or the last message of the
    input's ``messages`` when it is the user's."""
    if isinstance(inputs, str):
        return inputs
    messages = inputs.get("messages") if isinstance(inputs, dict) else None
    if not messages:
        return None
    last = messages[-1]
    if isinstance(last, (tuple, list)) and len(last) == 2:
        role, content = last
    elif isinstance(last, dict):
        role, content = last.get("role"), last.get("content")
    else:
        role, content = getattr(last, "type", None), getattr(last, "content", None)
    return _text_of(content) if role in ("human", "user") else None


def _first_message(response: Any) -> Any:
    generations = getattr(response, "generations", None) or [[]]
    first = generations[0][0] if generations[0] else None
    return getattr(first, "message", None)


def _text_of(content: Any) -> str:
    """Text of a message's content: a string, or the text of its content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b if isinstance(b, str) else b.get("text", "")
            for b in content
            if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
        )
    return "" if content is None else str(content)


def _usage(message: Any) -> Usage | None:
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        return None
    details = usage.get("input_token_details") or {}
    return Usage(
        input_tokens=usage.get("input_tokens", 0) or 0,
        output_tokens=usage.get("output_tokens", 0) or 0,
        cache_read_input_tokens=token_count(details.get("cache_read")),
        cache_creation_input_tokens=token_count(details.get("cache_creation")),
    )
