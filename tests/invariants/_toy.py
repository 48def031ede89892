"""Toy agent runtimes for the invariant tests: correct by default, one seeded bug each.

:class:`ToyAgent` is a small async agent on the real ``anthropic`` SDK, the shape
the invariants are about: a turn loop with tools, model steps with ids and
indexes, retries of interrupted streams in a fresh step at the same index, a
durable store (saved context and a write-ahead log) and error turns. It reports
everything to a :class:`~pytest_agentreplay.runlog.RunLog` through the documented
builder API, as a user's event callback would. ``bugs`` switches on the mistakes
real runtimes make (see :data:`BUGS`); each invariant test seeds the one it is
about and checks the failure message.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2

from pytest_agentreplay.neutral import Usage
from pytest_agentreplay.runlog import RunLog

MODEL = "claude-sonnet-4-6"
SAFE_MESSAGE = "The model provider is unavailable right now. Please try again."

BUGS = frozenset(
    {
        "double_terminal_on_interrupt",  # a `finally` logs a second terminal event
        "reuse_step_id_on_retry",  # a retry keeps the step id of the try it repeats
        "partial_in_context",  # the delta buffer is not reset before a retry
        "retry_changes_body",  # a retry "continues" from the partial text (prefill)
        "stream_usage",  # streaming reads usage from message_start
        "drop_failed_tool_result",  # a tool that raised gets no tool_result
        "no_reissue",  # resume forgets dangling write-ahead intents
        "double_reissue",  # resume re-issues a dangling intent twice
        "success_instead_of_error",  # a failed turn is saved as if it had succeeded
        "exhaustion_left_retrying",  # the last try of a retry loop that gives up says "retrying"
        "drop_partial_on_error",  # the text streamed before an error is not saved
        "question_saved_with_answer",  # the user's question is saved only with its answer
        "drop_retry_after",  # the error record forgets the response's retry-after
        "sleep_through_interrupt",  # the backoff before a retry ignores the stop button
        "resume_from_turn_start",  # resume re-runs the turn from its first step
    }
)


class SimulatedCrashError(Exception):
    """The process died (simulated): the runtime does nothing more."""


class _StoppedError(Exception):
    """The user pressed stop during a backoff."""


class _StreamCutError(Exception):
    def __init__(self, partial: str) -> None:
        super().__init__("stream interrupted")
        self.partial = partial


class TurnFailedError(Exception):
    def __init__(
        self,
        kind: str,
        message: str,
        *,
        partial: str = "",
        step_id: str | None = None,
        status: int | None = None,
        retry_after: str | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind, self.message, self.partial, self.step_id = kind, message, partial, step_id
        self.status, self.retry_after, self.retryable = status, retry_after, retryable


@dataclass
class Store:
    """The durable store: the saved context and the write-ahead log (survives a crash)."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    wal: dict[str, str] = field(default_factory=dict)  # intent key -> "pending" | "done"


@dataclass
class StepResult:
    step_id: str
    text: str
    tool_calls: list[Any]
    usage: Usage


_KINDS = {401: "auth", 403: "auth", 404: "model_not_found", 429: "rate_limit"}


def _classify(exc: anthropic.APIStatusError) -> TurnFailedError:
    status = exc.status_code
    return TurnFailedError(
        _KINDS.get(status, "provider"),
        exc.message,
        status=status,
        retry_after=exc.response.headers.get("retry-after"),
        retryable=status in (408, 409, 429) or status >= 500,
    )


class ToyAgent:
    """See the module docs. ``crash_on_cut`` makes an interrupted stream kill the process
    (leaving the write-ahead intent dangling) instead of being retried;
    ``retry_rate_limits`` retries a 429 after its ``retry-after`` (or until
    :attr:`stop` is set), waiting with ``sleep`` when the backoff ignores the stop."""

    def __init__(
        self,
        *,
        log: RunLog,
        store: Store | None = None,
        stream: bool = True,
        tools: dict[str, Callable[[dict[str, Any]], str]] | None = None,
        retry_limit: int = 2,
        bugs: frozenset[str] | set[str] = frozenset(),
        crash_on_cut: bool = False,
        session_id: str = "session-a",
        base_url: str | None = None,
        retry_rate_limits: bool = False,
        sleep: Callable[[float], Any] = asyncio.sleep,
    ) -> None:
        assert set(bugs) <= BUGS, set(bugs) - BUGS
        self.log, self.store, self.stream = log, store or Store(), stream
        self.tools, self.retry_limit, self.bugs = tools or {}, retry_limit, set(bugs)
        self.crash_on_cut, self.session_id = crash_on_cut, session_id
        self.client = anthropic.AsyncAnthropic(api_key="test", max_retries=0, base_url=base_url)
        self.retry_rate_limits, self.sleep, self.stop = retry_rate_limits, sleep, asyncio.Event()
        self._open_step: str | None = None
        self._unsaved: list[dict[str, Any]] = []  # bug "question_saved_with_answer"

    # --- the saved context ---------------------------------------------------------------

    def _save(
        self,
        role: str,
        content: list[dict[str, Any]],
        *,
        kind: str = "message",
        step_id: str | None = None,
        turn_id: str | None = None,
    ) -> None:
        self.store.messages.append({"role": role, "content": content, "kind": kind})
        text = "".join(b.get("text", "") for b in content if b["type"] == "text")
        if not any(b["type"] == "tool_result" for b in content):
            self.log.message(role, text, kind=kind, step_id=step_id, turn_id=turn_id)

    def _history(self) -> list[dict[str, Any]]:
        saved = [
            {"role": m["role"], "content": m["content"]}
            for m in self.store.messages
            if m["kind"] == "message"
        ]
        return saved + self._unsaved

    # --- one model call ----------------------------------------------------------------

    async def _call(self, step_id: str, prefill: str) -> StepResult:
        messages = self._history()
        if prefill:  # bug "retry_changes_body": continue from where the cut stream stopped
            messages.append({"role": "assistant", "content": prefill})
        body: dict[str, Any] = {"model": MODEL, "max_tokens": 256, "messages": messages}
        if self.tools:
            body["tools"] = [
                {"name": n, "description": n, "input_schema": {"type": "object"}}
                for n in self.tools
            ]
        if not self.stream:
            message = await self.client.messages.create(**body)
            return self._result(step_id, message, message.usage)
        seen: list[str] = []
        try:
            async with self.client.messages.stream(**body) as stream:
                first_usage = None
                async for event in stream:
                    if event.type == "message_start":
                        first_usage = event.message.usage
                    elif event.type == "text":
                        seen.append(event.text)
                        self.log.delta(event.text, step_id=step_id)
                message = await stream.get_final_message()
        except (anthropic.APIConnectionError, httpx2.RemoteProtocolError) as exc:
            raise _StreamCutError("".join(seen)) from exc
        except anthropic.APIStatusError as exc:  # an in-stream error event
            exc.partial = "".join(seen)  # type: ignore[attr-defined]
            raise
        usage = first_usage if "stream_usage" in self.bugs else message.usage
        return self._result(step_id, message, usage)

    @staticmethod
    def _result(step_id: str, message: Any, usage: Any) -> StepResult:
        text = "".join(b.text for b in message.content if b.type == "text")
        calls = [b for b in message.content if b.type == "tool_use"]
        return StepResult(
            step_id,
            text,
            calls,
            Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens),
        )

    # --- a model step, with retries ---------------------------------------------------------

    def _end(self, step_id: str, outcome: Any, **fields: Any) -> None:
        """The one terminal event of a step; the step is no longer open."""
        self.log.step_completed(step_id, outcome, at=time.time(), **fields)
        self._open_step = None

    async def _step(self, turn_id: str, index: int) -> StepResult:
        key = f"{turn_id}:{index}"
        buffer = ""  # what the abandoned tries streamed (kept only by the buggy paths)
        step_id = uuid.uuid4().hex
        for attempt in range(self.retry_limit + 1):
            if attempt and "reuse_step_id_on_retry" not in self.bugs:
                step_id = uuid.uuid4().hex
            self.log.step_started(
                step_id,
                step_index=index,
                turn_id=turn_id,
                session_id=self.session_id,
                at=time.time(),
            )
            self._open_step = step_id
            if attempt == 0:
                self.store.wal[key] = "pending"
                self.log.intent(key, step_id=step_id)
            try:
                result = await self._call(
                    step_id, buffer if "retry_changes_body" in self.bugs else ""
                )
            except _StreamCutError as cut:
                if self.crash_on_cut:
                    raise SimulatedCrashError(key) from cut
                last = attempt == self.retry_limit
                gave_up = "retrying" if "exhaustion_left_retrying" in self.bugs else "failed"
                self._end(step_id, gave_up if last else "retrying", text=cut.partial)
                buffer += cut.partial
                if last:
                    raise TurnFailedError(
                        "provider",
                        SAFE_MESSAGE,
                        partial=cut.partial,
                        step_id=step_id,
                        retryable=True,
                    ) from cut
                continue
            except anthropic.APIStatusError as exc:
                if self._backs_off(exc, attempt):
                    self._end(step_id, "retrying")
                    await self._backoff(exc.response.headers.get("retry-after"))
                    continue
                self._end(step_id, "failed")
                failure = _classify(exc)
                failure.step_id, failure.partial = step_id, getattr(exc, "partial", "")
                raise failure from exc
            except asyncio.CancelledError:
                if "double_terminal_on_interrupt" in self.bugs:  # logs, but leaves it open
                    self.log.step_completed(step_id, "interrupted", at=time.time())
                else:
                    self._end(step_id, "interrupted")
                raise
            if "partial_in_context" in self.bugs:
                result.text = buffer + result.text
            self._end(step_id, "completed", usage=result.usage, text=result.text)
            self.store.wal[key] = "done"
            self.log.intent_completed(key, step_id=step_id)
            return result
        raise AssertionError("unreachable")

    def _backs_off(self, exc: anthropic.APIStatusError, attempt: int) -> bool:
        return self.retry_rate_limits and exc.status_code == 429 and attempt < self.retry_limit

    async def _backoff(self, retry_after: str | None) -> None:
        """Wait before a retry; the stop button ends the wait and the turn."""
        wait = float(retry_after or 1)
        if "sleep_through_interrupt" in self.bugs:
            await self.sleep(wait)  # the stop button is not looked at: the retry goes out
            return
        try:
            await asyncio.wait_for(self.stop.wait(), wait)
        except TimeoutError:
            return
        raise _StoppedError

    # --- turns -------------------------------------------------------------------------------

    async def run_turn(self, text: str, *, turn_id: str | None = None) -> str | None:
        """One user turn: the answer, or ``None`` when the turn failed (saved as an error)."""
        turn_id = turn_id or uuid.uuid4().hex
        question = [{"type": "text", "text": text}]
        if "question_saved_with_answer" in self.bugs:
            self._unsaved = [{"role": "user", "content": question}]
        else:
            self._save("user", question, turn_id=turn_id)
        try:
            return await self._loop(turn_id, 0)
        except TurnFailedError as failure:
            self._fail_turn(turn_id, failure)
            return None
        except _StoppedError:
            self.log.turn_ended(turn_id, "aborted")
            return None
        except asyncio.CancelledError:
            if self._open_step is not None:  # close a step its own handler left open
                self._end(self._open_step, "interrupted")
            self.log.turn_ended(turn_id, "aborted")
            raise

    async def _loop(self, turn_id: str, index: int) -> str:
        while True:
            result = await self._step(turn_id, index)
            content = [{"type": "text", "text": result.text}] if result.text else []
            content += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": c.input}
                for c in result.tool_calls
            ]
            for unsaved in self._unsaved:  # bug "question_saved_with_answer": saved only now
                self._save("user", unsaved["content"], turn_id=turn_id)
            self._unsaved = []
            self._save("assistant", content, step_id=result.step_id, turn_id=turn_id)
            if not result.tool_calls:
                self.log.turn_ended(turn_id, "completed")
                return result.text
            self._run_tools(result)
            index += 1

    def _run_tools(self, result: StepResult) -> None:
        answers = []
        for call in result.tool_calls:
            self.log.tool_call(call.id, call.name, dict(call.input), step_id=result.step_id)
            try:
                output, outcome = self.tools[call.name](dict(call.input)), "completed"
            except Exception as exc:  # the tool failed: the model must still be told
                output, outcome = f"error: {exc}", "failed"
                if "drop_failed_tool_result" in self.bugs:
                    continue
            self.log.tool_result(call.id, output, outcome=outcome, step_id=result.step_id)
            answers.append(
                {
                    "type": "tool_result",
                    "tool_use_id": call.id,
                    "content": output,
                    "is_error": outcome == "failed",
                }
            )
        if answers:
            self._save("user", answers)

    def _fail_turn(self, turn_id: str, failure: TurnFailedError) -> None:
        step = failure.step_id
        if "success_instead_of_error" in self.bugs:
            self._save(
                "assistant",
                [{"type": "text", "text": failure.partial}],
                step_id=step,
                turn_id=turn_id,
            )
            self.log.turn_ended(turn_id, "completed")
            return
        if failure.partial and "drop_partial_on_error" not in self.bugs:
            self._save(
                "assistant",
                [{"type": "text", "text": failure.partial}],
                step_id=step,
                turn_id=turn_id,
            )
        self._save(
            "assistant",
            [{"type": "text", "text": failure.message}],
            kind="error",
            step_id=step,
            turn_id=turn_id,
        )
        self.log.error_reported(
            failure.kind,
            failure.message,
            retryable=failure.retryable,
            status=failure.status,
            retry_after=None if "drop_retry_after" in self.bugs else failure.retry_after,
            step_id=step,
            turn_id=turn_id,
        )
        self.log.turn_ended(turn_id, "failed")

    async def resume(self) -> None:
        """Restart from the store: re-issue every intent the crash left dangling."""
        self.log.resumed()
        for key in [k for k, state in self.store.wal.items() if state == "pending"]:
            if "no_reissue" in self.bugs:
                continue
            turn_id, index = key.rsplit(":", 1)
            start = 0 if "resume_from_turn_start" in self.bugs else int(index)
            for _ in range(2 if "double_reissue" in self.bugs else 1):
                await self._loop(turn_id, start)

    async def aclose(self) -> None:
        await self.client.close()
