"""The agent side of a run log from LangChain / LangGraph callbacks.

:func:`langchain_handler` returns a LangChain callback handler that turns the
callbacks of a run into run-log entries as they happen. Pass it in
``config={"callbacks": [handler]}``:

* the outermost chain (a LangGraph graph, an ``AgentExecutor``) is a **turn**: its
  input's last user message is saved; it ends ``completed``, ``failed`` when it raised,
  ``aborted`` when it was stopped (the task running ``ainvoke`` cancelled, an
  ``astream`` closed early, Ctrl-C). A graph's input of ``None`` or a
  ``Command(resume=...)`` goes on from a checkpoint: the log says ``resumed``;
* each chat-model call is a **step** (its tokens deltas, its usage, its tool calls).
  LangChain reports no error for a call that was cancelled: the adapter closes every
  step still open when the turn is stopped as ``interrupted``, once. A failed call is
  a ``failed`` step with its error report — or, when the next call of its turn resends
  it (``.with_retry()``, a node's ``RetryPolicy``, a loop of your own), a ``retrying``
  step whose retry runs at the same index (see :mod:`.langchain_turns`). Retries the
  provider's SDK makes inside one call (``max_retries``) are no callbacks: they are
  model calls of one step, which the invariants pair from the model side;
* in a LangGraph graph, what is **saved** is what each node writes to the graph's
  state (the messages of its update, which the checkpointer stores); elsewhere, the
  model's answer. A graph run with a checkpointer (a ``thread_id``) issues a
  write-ahead **intent** per task when the task starts (keyed ``thread/step/node``:
  the checkpoint holds the task before it runs) and completes it when the task's
  writes are saved: a task that failed (or was stopped, or paused at an
  ``interrupt()``) leaves its intent dangling, and the resumed run re-issues it;
* each tool run is a tool result (``failed`` when it raised, ``interrupted`` when the
  turn was stopped first).

The callbacks are read by attribute; ``langchain_core`` is imported only when a
handler is built (its base class), so run logs cost nothing without LangChain.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..entries import (
    Delta,
    Entry,
    ErrorReported,
    IntentCompleted,
    IntentIssued,
    MessageSaved,
    Resumed,
    StepCompleted,
    StepOutcome,
    StepStarted,
    ToolCalled,
    ToolResulted,
    TurnEnded,
)
from .langchain_reading import (
    LC_RUN_ID_PREFIX,
    first_message,
    is_resume,
    is_stop,
    last_human_text,
    message_key,
    message_role,
    pauses,
    task_key,
    text_of,
    usage_of,
    written_messages,
)
from .langchain_turns import Step, Turn

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
        self._lock = threading.RLock()
        self._turns: dict[str, Turn] = {}  # root run id: its turn
        self._runs: dict[str, Turn] = {}  # every run id of a turn: the turn
        self._steps: dict[str, Step] = {}  # chat-model run id: its step
        self._tasks: dict[str, str] = {}  # LangGraph task run id: its task key
        self._answers: dict[str, str] = {}  # answer message id: the step that made it
        self._loose = Turn("")  # chat-model calls made outside any chain

    def _emit(self, *entries: Entry) -> None:
        for entry in entries:
            self.entries.append(entry)
            if self._sink is not None:
                self._sink(entry)

    # --- turns: the outermost chain -------------------------------------------------

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: Any, **kw: Any) -> None:
        run, parent = str(run_id), kw.get("parent_run_id")
        with self._lock:
            turn = self._runs.get(str(parent)) if parent is not None else None
            if turn is None:
                turn = self._start_turn(run, inputs)
            self._runs[run] = turn
            key = task_key(kw.get("tags"), kw.get("metadata"))
            if key is not None:
                self._start_task(turn, run, key, kw.get("metadata") or {})

    def _start_turn(self, run: str, inputs: Any) -> Turn:
        turn = self._turns[run] = Turn(run)
        if is_resume(inputs):
            self._emit(Resumed())
        question = last_human_text(inputs)
        if question is not None:
            self._emit(MessageSaved(role="user", text=question, turn_id=run))
        return turn

    def _start_task(self, turn: Turn, run: str, key: str, metadata: Any) -> None:
        """A LangGraph node begins: under a checkpointer (the run has a ``thread_id``)
        its task is durable before it runs, the write-ahead intent of its model call.
        A task the graph re-runs in the same turn (a ``RetryPolicy``) is the same intent."""
        self._tasks[run] = key
        if metadata.get("thread_id") is not None and key not in turn.intents:
            turn.intents.add(key)
            self._emit(IntentIssued(key=key))

    def on_chain_end(self, outputs: Any, *, run_id: Any, **kw: Any) -> None:
        run = str(run_id)
        with self._lock:
            turn = self._runs.get(run)
            key = self._tasks.pop(run, None)
            if turn is not None and key is not None:
                self._saved(turn, outputs)
                if key in turn.intents:
                    self._emit(IntentCompleted(key=key))
            if run in self._turns:
                self._end_turn(run, None if self._turns[run].paused else "completed")

    def on_chain_error(self, error: BaseException, *, run_id: Any, **kw: Any) -> None:
        run = str(run_id)
        with self._lock:
            if self._tasks.pop(run, None) is not None and pauses(error):
                self._runs[run].paused = True  # the graph waits for Command(resume=...)
            # A task that failed leaves its intent dangling, for the resume.
            if run in self._turns:
                self._end_turn(run, "aborted" if is_stop(error) else "failed")

    def _end_turn(self, run: str, outcome: Any) -> None:
        """Settle the turn's steps and tools, then end it (``None``: it paused at an
        ``interrupt()``, and a ``Command(resume=...)`` goes on with it)."""
        turn = self._turns.pop(run)
        if turn.failed is not None:
            self._settle(turn, "failed")
        for step in turn.open_steps():  # cancelled calls: LangChain reports no error
            self._end(step, "interrupted", text="".join(step.text))
        for call_id in turn.tools.values():
            self._emit(ToolResulted(call_id=call_id, outcome="interrupted"))
        turn.tools.clear()
        self._runs = {r: t for r, t in self._runs.items() if t is not turn}
        if outcome is not None:
            self._emit(TurnEnded(turn_id=turn.id, outcome=outcome))

    def _saved(self, turn: Turn, outputs: Any) -> None:
        """What a LangGraph node wrote to the graph's state: its messages, saved."""
        for message in written_messages(outputs):
            role = message_role(message)
            if role is None:
                continue
            content = message[1] if isinstance(message, tuple) else message.content
            step = self._producer(getattr(message, "id", None))
            self._emit(
                MessageSaved(role=role, text=text_of(content), step_id=step, turn_id=turn.id)
            )

    def _producer(self, message_id: Any) -> str | None:
        """The step whose answer a saved message is: by the answer's id (the
        provider's, or the one LangChain gives it from the run)."""
        prefix = LC_RUN_ID_PREFIX + "-"
        if not isinstance(message_id, str):
            return None
        if message_id in self._answers:
            return self._answers[message_id]
        if message_id.startswith(prefix):
            run = message_id[len(prefix) :]
            return run if run in self._steps else None
        return None

    # --- steps: chat-model calls ----------------------------------------------------

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: Any, **kw: Any
    ) -> None:
        run, parent = str(run_id), kw.get("parent_run_id")
        metadata = kw.get("metadata") or {}
        with self._lock:
            turn = self._runs.get(str(parent), self._loose) if parent is not None else self._loose
            self._runs[run] = turn
            step = Step(
                run_id=run,
                index=turn.next_index,
                turn_id=turn.id or None,
                parent=None if parent is None else str(parent),
                task=metadata.get("langgraph_checkpoint_ns"),
                messages=message_key(messages),
                in_graph="langgraph_node" in metadata,
            )
            if turn.failed is not None:
                retry = turn.failed.retried_by(step)
                step.index = turn.failed.index if retry else step.index
                self._settle(turn, "retrying" if retry else "failed")
            turn.next_index = step.index + 1
            turn.steps.append(step)
            self._steps[run] = step
            self._emit(StepStarted(step_id=run, step_index=step.index, turn_id=step.turn_id))

    def on_llm_new_token(self, token: Any, *, run_id: Any, **kw: Any) -> None:
        # A string, or (langchain-anthropic) the chunk's content blocks.
        text = text_of(token)
        with self._lock:
            step = self._steps.get(str(run_id))
            if text and (step is None or not step.ended):
                if step is not None:
                    step.text.append(text)
                self._emit(Delta(text=text, step_id=str(run_id)))

    def on_llm_end(self, response: Any, *, run_id: Any, **kw: Any) -> None:
        with self._lock:
            step = self._steps.get(str(run_id))
            if step is None or step.ended:
                return
            message = first_message(response)
            if isinstance(getattr(message, "id", None), str):
                self._answers[message.id] = step.run_id
            text = text_of(getattr(message, "content", ""))
            self._end(step, "completed", text=text, usage=usage_of(message))
            if text and not step.in_graph:  # in a graph, what the node writes is saved
                self._emit(
                    MessageSaved(
                        role="assistant", text=text, step_id=step.run_id, turn_id=step.turn_id
                    )
                )
            for call in getattr(message, "tool_calls", None) or []:
                self._emit(
                    ToolCalled(
                        call_id=call["id"],
                        name=call["name"],
                        args=call["args"],
                        step_id=step.run_id,
                    )
                )

    def on_llm_error(self, error: BaseException, *, run_id: Any, **kw: Any) -> None:
        with self._lock:
            step = self._steps.get(str(run_id))
            if step is None or step.ended:
                return
            if is_stop(error):
                self._end(step, "interrupted", text="".join(step.text))
                return
            self._emit(_report(error, step))
            turn = self._runs.get(step.run_id, self._loose)
            if turn is self._loose:  # no turn to go on: nothing can retry it
                self._end(step, "failed", text="".join(step.text))
                return
            if turn.failed is not None:  # an earlier failure no call retried
                self._settle(turn, "failed")
            turn.failed = step

    def _settle(self, turn: Turn, outcome: StepOutcome) -> None:
        """The verdict on the turn's failed try: ``retrying`` or ``failed``."""
        step, turn.failed = turn.failed, None
        if step is not None:
            self._end(step, outcome, text="".join(step.text))

    def _end(self, step: Step, outcome: StepOutcome, *, text: str, usage: Any = None) -> None:
        step.ended = True
        self._emit(
            StepCompleted(
                step_id=step.run_id,
                step_index=step.index,
                turn_id=step.turn_id,
                outcome=outcome,
                text=text,
                usage=usage,
            )
        )

    # --- tools ----------------------------------------------------------------------

    def on_tool_start(self, serialized: Any, input_str: Any, *, run_id: Any, **kw: Any) -> None:
        run, parent = str(run_id), kw.get("parent_run_id")
        with self._lock:
            turn = self._runs.get(str(parent), self._loose) if parent is not None else self._loose
            self._runs[run] = turn
            turn.tools[run] = kw.get("tool_call_id") or run

    def on_tool_end(self, output: Any, *, run_id: Any, **kw: Any) -> None:
        failed = getattr(output, "status", "success") == "error"
        content = text_of(getattr(output, "content", output))
        with self._lock:
            call_id = self._close_tool(str(run_id)) or getattr(output, "tool_call_id", None)
            outcome = "failed" if failed else "completed"
            self._emit(
                ToolResulted(call_id=call_id or str(run_id), content=content, outcome=outcome)
            )

    def on_tool_error(self, error: BaseException, *, run_id: Any, **kw: Any) -> None:
        with self._lock:
            call_id = self._close_tool(str(run_id)) or kw.get("tool_call_id") or str(run_id)
            outcome = "interrupted" if is_stop(error) else "failed"
            self._emit(ToolResulted(call_id=call_id, content=str(error), outcome=outcome))

    def _close_tool(self, run: str) -> str | None:
        turn = self._runs.get(run)
        return None if turn is None else turn.tools.pop(run, None)


def _report(error: BaseException, step: Step) -> ErrorReported:
    """The error report of a failed model call: its status, ``retry-after`` and the
    provider's request id."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None) or {}
    return ErrorReported(
        kind=type(error).__name__,
        message=str(error),
        status=getattr(error, "status_code", None),
        retry_after=headers.get("retry-after"),
        request_id=getattr(error, "request_id", None) or headers.get("request-id"),
        step_id=step.run_id,
        turn_id=step.turn_id,
    )


_HANDLER: list[type] = []


def langchain_handler(log: Any = None) -> Any:
    """A LangChain callback handler (a ``BaseCallbackHandler``) adding the run's
    entries to ``log`` (a :class:`~pytest_agentreplay.runlog.RunLog`, or anything with
    ``add(entry)``) as they happen; its ``entries`` keeps them too. See the module
    docs for what each callback becomes."""
    if not _HANDLER:
        from langchain_core.callbacks import BaseCallbackHandler

        _HANDLER.append(
            type("AgentReplayCallbackHandler", (LangChainRecorder, BaseCallbackHandler), {})
        )
    return _HANDLER[0](None if log is None else log.add)
