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
   * ``interrupted`` — :meth:`Agent.interrupt` cancelled the call.

:meth:`Agent.interrupt` also cancels the wait before a retry. :meth:`Agent.resume`
finishes the turns a crash left running, from where their write-ahead log stops: a
model call left without a completion is re-issued (once, in a fresh step at its
index), a reply already completed is not asked for again.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from .config import SessionConfig, Tool
from .errors import PROVIDER_ERRORS, AgentError, classify, no_response
from .events import (
    NO_USAGE,
    ErrorEvent,
    Event,
    FinalMessage,
    MessageDelta,
    ModelStepCompleted,
    ModelStepStarted,
    StepOutcome,
    ToolBegin,
    ToolEnd,
    ToolOutcome,
    TurnAborted,
    TurnComplete,
    Usage,
)
from .providers import ModelClient, ModelReply, client_for
from .store import Message, Store, ToolUse, WalRecord

Listener = Callable[[Event], None]
E = TypeVar("E")
RefreshCredentials = Callable[[SessionConfig], Awaitable[SessionConfig]]


@dataclass(frozen=True)
class TurnResult:
    """How a turn ended, and its answer when it has one."""

    turn_id: str
    outcome: Literal["completed", "failed", "aborted"]
    text: str = ""
    usage: Usage = NO_USAGE
    error: AgentError | None = None
    provider: str = ""
    model: str = ""


@dataclass
class _Step:
    """One model step in progress."""

    turn_id: str
    step_id: str
    step_index: int
    partial: list[str] = field(default_factory=list)
    open_tools: dict[str, str] = field(default_factory=dict)  # call id -> tool name

    def ids(self, session_id: str) -> dict[str, Any]:
        return {
            "session_id": session_id,
            "turn_id": self.turn_id,
            "step_id": self.step_id,
            "step_index": self.step_index,
        }


@dataclass
class _Turn:
    turn_id: str
    usage: Usage = NO_USAGE
    step: _Step | None = None  # the step running (or that ended the turn)


def new_id() -> str:
    return str(uuid.uuid4())


class Agent:
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
        turn = _Turn(new_id())
        self.store.begin_turn(
            Message("user", text, session_id=self.session_id, turn_id=turn.turn_id)
        )
        return await self._drive(turn, self._loop(turn, 0))

    async def resume(self) -> list[TurnResult]:
        """After a crash: finish every turn the store says is still running."""
        return [
            await self._resume(turn_id) for turn_id in self.store.pending_turns(self.session_id)
        ]

    def replay_turn(self, turn_id: str) -> TurnResult:
        """A finished turn's result, read back from the store: no model call, no event."""
        record = self.store.turn(turn_id)
        return TurnResult(
            turn_id,
            record.status,
            record.text,
            record.usage,  # type: ignore[arg-type]
            provider=record.provider,
            model=record.model,
        )

    async def _resume(self, turn_id: str) -> TurnResult:
        """Go on with a turn from where its write-ahead log stops."""
        records = [r for r in self.store.wal(self.session_id) if r.turn_id == turn_id]
        done = [r.body for r in records if r.entry == "completion" and "error" not in r.body]
        turn = _Turn(turn_id, sum((Usage(**body["usage"]) for body in done), NO_USAGE))
        last = records[-1] if records else None
        if last is None or last.entry == "intent":  # it died during a model call: re-issue it
            return await self._drive(turn, self._loop(turn, last.step_index if last else 0))
        turn.step = _Step(turn_id, last.step_id, last.step_index)
        if "error" in last.body:  # it died after a failed try: retry (a fresh budget) or fail
            error = AgentError.from_json(last.body["error"])
            if not error.transient:
                return self._fail(turn, error)
            return await self._drive(turn, self._loop(turn, last.step_index))
        # It died after a step completed (in a tool, say): go on from that reply.
        return await self._drive(turn, self._after(turn, ModelReply.from_json(last.body)))

    async def _drive(self, turn: _Turn, work: Coroutine[Any, Any, ModelReply]) -> TurnResult:
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
            return self._fail(turn, error)
        finally:
            self._task = None
        return self._complete(turn, reply)

    async def _loop(self, turn: _Turn, index: int) -> ModelReply:
        while index < self.config.max_steps:
            reply = await self._step_with_retries(turn, index)
            if not reply.tool_calls:
                return self._final(turn, reply)
            await self._run_tools(turn.step, reply.tool_calls)  # type: ignore[arg-type]
            index += 1
        raise AgentError("bad_request", "The agent took too many steps.", retryable=False)

    async def _after(self, turn: _Turn, reply: ModelReply) -> ModelReply:
        """Go on from a completed step (on resume: its reply is in the store)."""
        if not reply.tool_calls:
            return self._final(turn, reply)
        await self._run_tools(turn.step, reply.tool_calls)  # type: ignore[arg-type]
        return await self._loop(turn, turn.step.step_index + 1)  # type: ignore[union-attr]

    def _final(self, turn: _Turn, reply: ModelReply) -> ModelReply:
        assert turn.step is not None
        self._emit(FinalMessage(**turn.step.ids(self.session_id), text=reply.text))
        return reply

    def _complete(self, turn: _Turn, reply: ModelReply) -> TurnResult:
        self.store.end_turn(
            turn.turn_id,
            "completed",
            text=reply.text,
            usage=turn.usage,
            provider=self.provider,
            model=self.model,
        )
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
        return TurnResult(
            turn.turn_id,
            "completed",
            reply.text,
            turn.usage,
            provider=self.provider,
            model=self.model,
        )

    def _fail(self, turn: _Turn, error: AgentError) -> TurnResult:
        """Keep what the user already saw, then the error turn: the turn's last message."""
        step_id = turn.step.step_id if turn.step else None
        failure = self._message(turn, "assistant", error.message, kind="error", step_id=step_id)
        self.store.end_turn(
            turn.turn_id,
            "failed",
            *self._partial(turn),
            failure,
            provider=self.provider,
            model=self.model,
        )
        self._emit(ErrorEvent(session_id=self.session_id, turn_id=turn.turn_id, error=error))
        return TurnResult(
            turn.turn_id, "failed", error=error, provider=self.provider, model=self.model
        )

    def _abort(self, turn: _Turn) -> TurnResult:
        self.store.end_turn(
            turn.turn_id, "aborted", *self._partial(turn), provider=self.provider, model=self.model
        )
        self._emit(TurnAborted(session_id=self.session_id, turn_id=turn.turn_id))
        return TurnResult(turn.turn_id, "aborted", provider=self.provider, model=self.model)

    def _partial(self, turn: _Turn) -> list[Message]:
        """The text the user saw of a step that failed or was interrupted, to keep."""
        step = turn.step
        if step is None or not step.partial:
            return []
        return [self._message(turn, "assistant", "".join(step.partial), step_id=step.step_id)]

    # --- model steps -----------------------------------------------------------------

    async def _step_with_retries(self, turn: _Turn, index: int) -> ModelReply:
        """The model step at ``index``, tried until it completes: each try is a fresh
        step (a new id) at the same index. A transient failure is retried after a
        backoff, ``retry_limit`` times; refused credentials once, after
        ``refresh_credentials``; anything else fails the step and the turn."""
        tries, refreshed = 0, False
        while True:
            turn.step = step = _Step(turn.turn_id, new_id(), index)
            try:
                return await self._step(turn, step)
            except AgentError as error:
                if error.kind == "auth" and self.refresh_credentials and not refreshed:
                    refreshed = True
                    self._end_step(step, "retrying", error=error)
                    self.config = await self.refresh_credentials(self.config)
                    self.client = client_for(self.config)
                    continue
                if not error.transient or tries >= self.config.retry_limit:
                    self._end_step(step, "failed", error=error, text="".join(step.partial))
                    raise
                self._end_step(step, "retrying", error=error)
                step.partial.clear()  # an abandoned try's text is never saved
                tries += 1
                await asyncio.sleep(self._backoff(tries, error))

    def _backoff(self, tries: int, error: AgentError) -> float:
        """Seconds to wait before retry number ``tries``: the provider's retry-after,
        or the configured backoff, doubled at each retry."""
        delay = self.config.backoff * 2 ** (tries - 1)
        try:
            return max(delay, float(error.retry_after or 0))
        except ValueError:  # an HTTP date: not worth parsing here
            return delay

    async def _step(self, turn: _Turn, step: _Step) -> ModelReply:
        context = [m for m in self.store.messages(self.session_id) if m.kind == "message"]
        request = self.client.request(context, list(self.tools.values()))
        self.store.save(self._wal("intent", step, request))
        self._emit(
            ModelStepStarted(
                **step.ids(self.session_id),
                provider=self.provider,
                model=self.model,
                at=time.time(),
            )
        )
        try:
            reply = await self.client.call(
                request,
                stream=self.config.stream,
                on_text=lambda text: self._delta(step, text),
                on_tool=lambda call_id, name: self._tool_begins(step, call_id, name),
            )
        except asyncio.CancelledError:
            self._close_tools(step, "interrupted")
            self._end_step(step, "interrupted", text="".join(step.partial))
            raise
        except PROVIDER_ERRORS as exc:
            error = classify(exc)
            self._close_tools(step, "interrupted")
            self.store.save(self._wal("completion", step, {"error": error.as_json()}))
            raise error from exc
        return self._step_done(turn, step, reply)

    def _step_done(self, turn: _Turn, step: _Step, reply: ModelReply) -> ModelReply:
        for call in reply.tool_calls:  # the JSON path learns of its tool calls only now
            if call.id not in step.open_tools:
                self._tool_begins(step, call.id, call.name)
        if self._is_silent(turn, reply):
            error = no_response()
            self.store.save(
                self._wal("completion", step, {**reply.as_json(), "error": error.as_json()})
            )
            raise error
        answer = self._message(
            turn, "assistant", reply.text, step_id=step.step_id, tool_calls=tuple(reply.tool_calls)
        )
        self.store.save(self._wal("completion", step, reply.as_json()), answer)
        step.partial.clear()
        turn.usage += reply.usage
        self._end_step(step, "completed", usage=reply.usage, text=reply.text)
        return reply

    def _is_silent(self, turn: _Turn, reply: ModelReply) -> bool:
        """A reply that does not answer: the stream ended before the provider said it
        was done, nothing at all, or only something already said in an earlier turn."""
        if reply.stop_reason is None or not (reply.text.strip() or reply.tool_calls):
            return True
        return not reply.tool_calls and self._repeats_history(turn, reply.text.strip())

    def _repeats_history(self, turn: _Turn, text: str) -> bool:
        """Whether ``text`` only repeats the saved context: a question (this one too),
        or an answer to another question. The same answer to the same question asked
        again is an answer."""
        saved = [m for m in self.store.messages(self.session_id) if m.kind == "message"]
        question = next(m.text for m in saved if m.turn_id == turn.turn_id and m.role == "user")
        asked = None  # the question the messages that follow it answer
        for m in saved:
            if m.role == "user":
                asked = m.text
            if m.text.strip() == text and (m.role == "user" or asked != question):
                return True
        return False

    def _delta(self, step: _Step, text: str) -> None:
        step.partial.append(text)
        self._emit(MessageDelta(**step.ids(self.session_id), text=text))

    def _end_step(
        self,
        step: _Step,
        outcome: StepOutcome,
        *,
        usage: Usage | None = None,
        text: str = "",
        error: AgentError | None = None,
    ) -> None:
        self._emit(
            ModelStepCompleted(
                **step.ids(self.session_id),
                outcome=outcome,
                at=time.time(),
                usage=usage,
                text=text,
                error=error,
            )
        )

    # --- tools -----------------------------------------------------------------------

    def _tool_begins(self, step: _Step, call_id: str, name: str) -> None:
        step.open_tools[call_id] = name
        self._emit(ToolBegin(**step.ids(self.session_id), call_id=call_id, name=name))

    def _tool_ends(self, step: _Step, call_id: str, outcome: ToolOutcome, output: str) -> None:
        name = step.open_tools.pop(call_id)
        self._emit(
            ToolEnd(
                **step.ids(self.session_id),
                call_id=call_id,
                name=name,
                outcome=outcome,
                output=output,
            )
        )

    def _close_tools(self, step: _Step, outcome: ToolOutcome) -> None:
        for call_id in list(step.open_tools):
            self._tool_ends(step, call_id, outcome, "")

    async def _run_tools(self, step: _Step, calls: list[ToolUse]) -> None:
        """Run the calls that have no result yet (on resume, some may have one)."""
        answered = {m.tool_call_id for m in self.store.messages(self.session_id)}
        for call in (c for c in calls if c.id not in answered):
            if call.id not in step.open_tools:
                self._tool_begins(step, call.id, call.name)
            output, outcome = await self._run_tool(step, call)
            self.store.save(self._tool_result(step, call, output))
            self._tool_ends(step, call.id, outcome, output)

    async def _run_tool(self, step: _Step, call: ToolUse) -> tuple[str, ToolOutcome]:
        tool = self.tools.get(call.name)
        if tool is None:
            return f"Unknown tool {call.name!r}.", "failed"
        try:
            return await tool.run(**call.args), "completed"
        except asyncio.CancelledError:
            # The model must still get an answer to its call, or the next request is invalid.
            self.store.save(self._tool_result(step, call, "Interrupted by the user."))
            self._tool_ends(step, call.id, "interrupted", "")
            raise
        except Exception as exc:
            return f"The tool failed: {exc}", "failed"

    # --- plumbing --------------------------------------------------------------------

    def _wal(
        self, entry: Literal["intent", "completion"], step: _Step, body: dict[str, Any]
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
        self, turn: _Turn, role: Literal["user", "assistant", "tool"], text: str, **fields: Any
    ) -> Message:
        return Message(role, text, session_id=self.session_id, turn_id=turn.turn_id, **fields)

    def _tool_result(self, step: _Step, call: ToolUse, output: str) -> Message:
        return Message(
            "tool",
            output,
            tool_call_id=call.id,
            session_id=self.session_id,
            turn_id=step.turn_id,
            step_id=step.step_id,
        )

    def _emit(self, event: Event) -> None:
        self.events.append(event)
        for listener in self._listeners:
            listener(event)
