"""The turn loop: call the model, run the tools it asks for, until it answers.

One turn is a sequence of model steps (index 0, 1, ...). A step is one model call:

1. the write-ahead intent (the request) is written, then ``ModelStepStarted``;
2. the call streams (``MessageDelta``, ``ToolBegin`` as tool calls start) or not;
3. it ends with exactly one ``ModelStepCompleted``:

   * ``completed`` — the reply and its WAL completion are saved together;
   * ``retrying`` — a dropped stream or failing server (or an auth error healed by
     ``refresh_credentials``): the same request is sent again, after a backoff, in a
     *fresh* step (new id) at the *same* index; its partial text is dropped;
   * ``failed`` — the turn fails: any partial text is kept, then an error turn is
     saved (``kind='error'``) and ``ErrorEvent`` sent, never ``TurnComplete``;
   * ``interrupted`` — :meth:`Agent.interrupt` cancelled the call (its WAL completion
     says so: only a crash leaves an intent without a completion).

:meth:`Agent.interrupt` also cancels a tool, or the wait before a retry. :meth:`Agent.resume`
finishes the turns a crash left running, from where their write-ahead log stops: a
model call left without a completion is re-issued (once, in a fresh step at its
index), a reply already completed is not asked for again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Literal, TypeVar

from .answers import is_silent
from .config import SessionConfig, Tool
from .diagnostics import ContextEpochs, ContextKey
from .errors import PROVIDER_ERRORS, AgentError, classify, no_response, retry_delay
from .events import (
    NO_USAGE,
    ErrorEvent,
    Event,
    FinalMessage,
    ModelStepStarted,
    ToolOutcome,
    TurnAborted,
    TurnComplete,
    Usage,
)
from .providers import ModelClient, ModelReply, client_for
from .step_events import Listener, StepEvents
from .store import Message, Store, ToolUse, WalRecord
from .turns import Step, Turn, TurnResult, new_id

E = TypeVar("E")
RefreshCredentials = Callable[[SessionConfig], Awaitable[SessionConfig]]
TOOL_INTERRUPTED = "Interrupted by the user."


class Agent(StepEvents):
    """An agent session: ``await agent.run_turn("question")`` runs one turn.

    Events go to :attr:`events` and to every listener added with :meth:`subscribe`; messages,
    turns and the write-ahead log go to ``store``. ``refresh_credentials`` is awaited
    (once per step index) when the provider rejects the credentials: it returns the
    new config (a new key, or another provider and model) and the step is retried
    with a client built from it.
    """

    def __init__(
        self,
        config: SessionConfig,
        *,
        store: Store | None = None,
        tools: Sequence[Tool] = (),
        session_id: str | None = None,
        refresh_credentials: RefreshCredentials | None = None,
    ) -> None:
        self.config = config
        self.store = store or Store()
        self.tools = {tool.name: tool for tool in tools}
        self.session_id = session_id or new_id()
        self.refresh_credentials = refresh_credentials
        self.client: ModelClient = client_for(config)
        self.events: list[Event] = []
        self._listeners: list[Listener] = []
        self._task: asyncio.Future[ModelReply] | None = None
        self._interrupting = False
        self._epochs = ContextEpochs()  # the prompt cache's view of the requests sent

    @property
    def provider(self) -> str:
        return self.client.provider

    @property
    def model(self) -> str:
        return self.client.model

    def events_of(self, kind: type[E]) -> list[E]:
        """The events of one type, in order: ``agent.events_of(ModelStepStarted)``."""
        return [event for event in self.events if isinstance(event, kind)]

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener`` with every event, as it happens."""
        self._listeners.append(listener)

    def interrupt(self) -> None:
        """Stop the running turn at once: cancels the model request in flight, a tool,
        or the wait before a retry. The turn ends ``aborted``."""
        if self._task is not None and not self._task.done():
            self._interrupting = True
            self._task.cancel()

    # --- turns -----------------------------------------------------------------------

    async def run_turn(self, text: str) -> TurnResult:
        """Answer ``text``. The user message is saved first, whatever happens next."""
        turn = Turn(new_id())
        self.store.begin_turn(self._message(turn.turn_id, "user", text))
        return await self._drive(turn, self._loop(turn, 0))

    async def resume(self) -> list[TurnResult]:
        """After a crash: finish every turn the store says is still running."""
        return [
            await self._resume(turn_id) for turn_id in self.store.pending_turns(self.session_id)
        ]

    def replay_turn(self, turn_id: str) -> TurnResult:
        """A finished turn's result, read back from the store: no model call, no event."""
        record = self.store.turn(turn_id)
        if record.status == "running":
            raise ValueError(f"turn {turn_id} has not finished: resume() it first")
        return TurnResult(
            turn_id,
            record.status,
            record.text,
            record.usage,
            provider=record.provider,
            model=record.model,
        )

    async def _resume(self, turn_id: str) -> TurnResult:
        """Go on with a turn from where its write-ahead log stops."""
        records = [r for r in self.store.wal(self.session_id) if r.turn_id == turn_id]
        replies = [r.body for r in records if r.entry == "completion" and _is_reply(r.body)]
        turn = Turn(turn_id, sum((Usage(**body["usage"]) for body in replies), NO_USAGE))
        if not records or records[-1].entry == "intent":  # it died in a model call: re-issue it
            index = records[-1].step_index if records else 0
            return await self._drive(turn, self._loop(turn, index))
        last = records[-1]
        turn.step = step = Step(turn_id, last.step_id, last.step_index)
        if not _is_reply(last.body):  # it died after a failed try: retry (a fresh budget) or fail
            error = AgentError.from_json(last.body["error"])
            if not error.transient:
                return self._fail(turn, error)
            return await self._drive(turn, self._loop(turn, last.step_index))
        # It died after a step completed (in a tool, say): go on from that reply.
        return await self._drive(turn, self._after(turn, step, ModelReply.from_json(last.body)))

    async def _drive(self, turn: Turn, work: Coroutine[Any, Any, ModelReply]) -> TurnResult:
        # The turn runs as its own task, so that interrupt() can cancel it (whatever it
        # awaits: the model, a tool, a backoff) without cancelling the caller.
        self._interrupting = False
        self._task = asyncio.ensure_future(work)
        try:
            reply = await self._task
        except asyncio.CancelledError:
            if not self._interrupting:
                raise
            return self._abort(turn)
        except AgentError as error:
            if turn.left_intent:  # the turn stays running: resume() re-issues the call
                return self._report_dangling(turn, error)
            return self._fail(turn, error)
        finally:
            self._task = None
        return self._complete(turn, reply)

    async def _loop(self, turn: Turn, index: int) -> ModelReply:
        """Model steps from ``index`` on, running the tools each asks for, until one answers."""
        while index < self.config.max_steps:
            step, reply = await self._step_with_retries(turn, index)
            if not reply.tool_calls:
                return self._final(step, reply)
            await self._run_tools(step, reply.tool_calls)
            index += 1
        raise AgentError("bad_request", "The agent took too many steps.", retryable=False)

    async def _after(self, turn: Turn, step: Step, reply: ModelReply) -> ModelReply:
        """Go on from a step that completed before a crash (its reply is in the store)."""
        if not reply.tool_calls:
            return self._final(step, reply)
        await self._run_tools(step, reply.tool_calls)
        return await self._loop(turn, step.step_index + 1)

    def _final(self, step: Step, reply: ModelReply) -> ModelReply:
        cited = tuple(reply.citations)
        self._emit(FinalMessage(**step.ids(self.session_id), text=reply.text, citations=cited))
        return reply

    def _complete(self, turn: Turn, reply: ModelReply) -> TurnResult:
        result = self._end_turn(turn, "completed", text=reply.text, usage=turn.usage)
        self._emit(
            TurnComplete(
                session_id=self.session_id,
                turn_id=turn.turn_id,
                text=reply.text,
                usage=turn.usage,
                provider=self.provider,
                model=self.model,
            )
        )
        return result

    def _fail(self, turn: Turn, error: AgentError) -> TurnResult:
        """Keep what the user already saw, then the error turn: the turn's last message."""
        step_id = turn.step.step_id if turn.step else None
        failure = self._message(
            turn.turn_id, "assistant", error.message, kind="error", step_id=step_id
        )
        result = self._end_turn(turn, "failed", *self._partial(turn), failure, error=error)
        self._emit(ErrorEvent(session_id=self.session_id, turn_id=turn.turn_id, error=error))
        return result

    def _report_dangling(self, turn: Turn, error: AgentError) -> TurnResult:
        """A call failed mid-stream and its intent was left open: tell the user, save
        nothing (no partial text, no error turn), and leave the turn running."""
        self._emit(ErrorEvent(session_id=self.session_id, turn_id=turn.turn_id, error=error))
        return TurnResult(
            turn.turn_id, "failed", error=error, provider=self.provider, model=self.model
        )

    def _abort(self, turn: Turn) -> TurnResult:
        result = self._end_turn(turn, "aborted", *self._partial(turn))
        self._emit(TurnAborted(session_id=self.session_id, turn_id=turn.turn_id))
        return result

    def _end_turn(
        self,
        turn: Turn,
        outcome: Literal["completed", "failed", "aborted"],
        *last_messages: Message,
        text: str = "",
        usage: Usage = NO_USAGE,
        error: AgentError | None = None,
    ) -> TurnResult:
        """Save how the turn ended, with its last messages, in one transaction."""
        result = TurnResult(turn.turn_id, outcome, text, usage, error, self.provider, self.model)
        self.store.end_turn(
            turn.turn_id,
            outcome,
            *last_messages,
            text=text,
            usage=usage,
            provider=self.provider,
            model=self.model,
        )
        return result

    def _partial(self, turn: Turn) -> list[Message]:
        """The text the user saw of a step that failed or was interrupted, to keep."""
        step = turn.step
        if step is None or not step.partial:
            return []
        return [
            self._message(turn.turn_id, "assistant", "".join(step.partial), step_id=step.step_id)
        ]

    # --- model steps -----------------------------------------------------------------

    async def _step_with_retries(self, turn: Turn, index: int) -> tuple[Step, ModelReply]:
        """The model step at ``index``, tried until it completes: each try is a fresh
        step (a new id) at the same index. A transient failure is retried after a
        backoff, ``retry_limit`` times; refused credentials once, after
        ``refresh_credentials``; anything else fails the step and the turn."""
        tries, refreshed = 0, False
        while True:
            turn.step = step = Step(turn.turn_id, new_id(), index)
            try:
                return step, await self._step(turn, step)
            except AgentError as error:
                heal = error.kind == "auth" and self.refresh_credentials is not None
                heal = heal and not refreshed
                if not heal and (not error.transient or tries >= self.config.retry_limit):
                    self._end_step(step, "failed", error=error, text="".join(step.partial))
                    raise
                if heal:
                    refreshed = True
                    await self._refresh_or_fail(step, error)
                else:
                    step.partial.clear()  # an abandoned try's text is never saved
                    tries += 1
                    delay = retry_delay(tries, self.config.backoff, error.retry_after)
                    self._end_step(step, "retrying", error=error, retry_in=delay)
                    await asyncio.sleep(delay)

    async def _refresh_or_fail(self, step: Step, error: AgentError) -> None:
        """End ``step`` as retried after new credentials (its text abandoned, as any
        retried try's), or — when there are none (the refresh raised) — as failed with
        the refusal, which then fails the turn and keeps the text."""
        try:
            await self._refresh_credentials()
        except asyncio.CancelledError:  # the try was being abandoned: its text goes too
            step.partial.clear()
            self._end_step(step, "interrupted")
            raise
        except Exception:
            self._end_step(step, "failed", error=error, text="".join(step.partial))
            raise error from None
        step.partial.clear()
        self._end_step(step, "retrying", error=error)

    async def _refresh_credentials(self) -> None:
        """New credentials (or another provider and model), and a client built from them."""
        assert self.refresh_credentials is not None
        self.config = await self.refresh_credentials(self.config)
        self.client = client_for(self.config)

    async def _step(self, turn: Turn, step: Step) -> ModelReply:
        context = [m for m in self.store.messages(self.session_id) if m.kind == "message"]
        request = self.client.request(context, list(self.tools.values()))
        self.store.save(self._wal("intent", step, request))
        step.started_at, step.provider = time.time(), self.provider
        key = ContextKey(
            self.provider, self.model, self.config.system, tuple(self.tools), tuple(context)
        )
        step.context_epoch, step.rewrite_reasons = self._epochs.observe(key)
        self._emit(
            ModelStepStarted(
                **step.ids(self.session_id),
                provider=self.provider,
                model=self.model,
                at=step.started_at,
            )
        )
        try:
            reply = await self.client.call(
                request,
                stream=self.config.stream,
                on_text=lambda text: self._delta(step, text),
                on_tool=lambda call_id, name: self._tool_begins(step, call_id, name),
                on_server_tool=lambda call_id, name, phase: self._server_tool(
                    step, call_id, name, phase
                ),
            )
        except asyncio.CancelledError:
            self._close_tools(step, "interrupted")
            if self._interrupting:  # over, not lost: only a crash leaves an intent dangling
                self.store.save(self._wal("completion", step, {"interrupted": True}))
            self._end_step(step, "interrupted", text="".join(step.partial))
            raise
        except PROVIDER_ERRORS as exc:
            error = classify(exc)
            self._close_tools(step, "interrupted")
            if self._leaves_intent(error):
                turn.left_intent = True
            else:
                self.store.save(self._wal("completion", step, {"error": error.as_json()}))
            raise error from exc
        return self._step_done(turn, step, reply)

    def _leaves_intent(self, error: AgentError) -> bool:
        """Whether a failed call's intent is left without a completion, for resume():
        under ``stream_error="leave_intent"``, an error reported mid-stream (no HTTP
        status) that is not retried here."""
        mid_stream = error.status is None and not error.transient
        return self.config.stream_error == "leave_intent" and mid_stream

    def _step_done(self, turn: Turn, step: Step, reply: ModelReply) -> ModelReply:
        """Save the reply with its WAL completion, or reject it if it does not answer."""
        for call in reply.tool_calls:  # the JSON path learns of its tool calls only now
            if call.id not in step.open_tools:
                self._tool_begins(step, call.id, call.name)
        if is_silent(reply):
            error = no_response()
            self._close_tools(step, "interrupted")  # a rejected reply's tools never run
            self.store.save(
                self._wal("completion", step, {**reply.as_json(), "error": error.as_json()})
            )
            raise error
        answer = self._message(
            turn.turn_id,
            "assistant",
            reply.text,
            step_id=step.step_id,
            tool_calls=tuple(reply.tool_calls),
            citations=tuple(reply.citations),
        )
        self.store.save(self._wal("completion", step, reply.as_json()), answer)
        step.partial.clear()
        turn.usage += reply.usage
        self._end_step(step, "completed", usage=reply.usage, text=reply.text, reply=reply)
        return reply

    # --- tools -----------------------------------------------------------------------

    async def _run_tools(self, step: Step, calls: list[ToolUse]) -> None:
        """Run the calls that have no result yet (on resume, some may have one). Every
        call gets a result, even when the user interrupts: a request with an unanswered
        tool call is invalid, and the session could not go on."""
        answered = {m.tool_call_id for m in self.store.messages(self.session_id)}
        waiting = [call for call in calls if call.id not in answered]
        for n, call in enumerate(waiting):
            if call.id not in step.open_tools:  # on resume: nothing began it yet
                self._tool_begins(step, call.id, call.name)
            try:
                output, outcome = await self._run_tool(call)
            except asyncio.CancelledError:
                interrupted = [self._tool_result(step, c, TOOL_INTERRUPTED) for c in waiting[n:]]
                self.store.save(*interrupted)
                self._close_tools(step, "interrupted")
                raise
            self.store.save(self._tool_result(step, call, output))
            self._tool_ends(step, call.id, outcome, output)

    async def _run_tool(self, call: ToolUse) -> tuple[str, ToolOutcome]:
        """A tool's output; a tool that fails tells the model why, and the turn goes on."""
        tool = self.tools.get(call.name)
        if tool is None:
            return f"Unknown tool {call.name!r}.", "failed"
        try:
            return await tool.run(**call.args), "completed"
        except Exception as exc:
            return f"The tool failed: {exc}", "failed"

    # --- plumbing --------------------------------------------------------------------

    def _wal(
        self, entry: Literal["intent", "completion"], step: Step, body: dict[str, Any]
    ) -> WalRecord:
        return WalRecord(
            entry,
            f"{step.turn_id}/{step.step_index}",
            self.session_id,
            step.turn_id,
            step.step_id,
            step.step_index,
            body,
        )

    def _message(
        self, turn_id: str, role: Literal["user", "assistant", "tool"], text: str, **fields: Any
    ) -> Message:
        return Message(role, text, session_id=self.session_id, turn_id=turn_id, **fields)

    def _tool_result(self, step: Step, call: ToolUse, output: str) -> Message:
        return self._message(
            step.turn_id, "tool", output, tool_call_id=call.id, step_id=step.step_id
        )


def _is_reply(body: dict[str, Any]) -> bool:
    """Whether a WAL completion holds a reply that counts (not an error, not an interrupt)."""
    return "text" in body and "error" not in body
