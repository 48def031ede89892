"""What one model call gets: a :class:`Reply`, or a :class:`Fault`; and plans of them.

A :class:`Reply` is what the model answers (parts, usage, stop reason) and may
carry the :class:`Fault` that strikes its call; a :class:`FaultPlan` says, call by
call, which fault strikes and which replies the calls that succeed get. They live
together because each needs the other: a reply carries a fault, a plan is made of
faults and replies. :func:`fault_source` and :func:`reply_source` write them back
as the Python that builds them (a plan's ``repr``, a falsifying example's).

A plan applies in one line to a fake model (``plan.apply(scripted_model)``, which
scripts it) or to a replayed cassette (``plan.apply(agentreplay)``, which injects
the faults). Both read the plan the same way: a failed call does *not* use up its
reply — the call that follows gets it, exactly as a retried request to a provider
(or to a cassette) gets the answer the failed one would have had. Nothing here
imports hypothesis: plans can be written by hand, stored in a test, or pasted from
a falsifying example.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from pydantic import Field, NonNegativeInt, model_validator

from .parts import Frozen, Part, StopReason, Text, Thinking, ToolCall, Usage

__all__ = ["Fault", "FaultKind", "FaultPlan", "Reply", "fault_source", "reply_source"]

T = TypeVar("T")

FaultKind = Literal["http", "cut", "error_event", "stall", "timeout", "empty", "truncate"]
"""How a call fails (see the constructors of :class:`Fault`)."""


class Fault(Frozen):
    """A way a provider call fails. Build one with the class methods, not directly.

    ``after_events`` counts SSE events delivered before the fault strikes (for
    streams); non-streaming calls fail before the body for every kind except
    ``empty`` and ``truncate``.
    """

    kind: FaultKind
    status: int | None = None
    message: str | None = None
    error_type: str | None = None
    retry_after: float | None = None
    after_events: NonNegativeInt | None = None

    @classmethod
    def http(
        cls,
        status: int,
        message: str | None = None,
        *,
        retry_after: float | None = None,
        error_type: str | None = None,
    ) -> Fault:
        """An HTTP error response in the provider's own error format.

        ``error_type`` defaults to the provider's type for ``status``
        (for 429: ``rate_limit_error`` on Anthropic, ``requests`` with code
        ``rate_limit_exceeded`` on OpenAI). ``message`` defaults to the
        provider's usual message for that status.
        """
        if not 400 <= status <= 599:
            raise ValueError(f"Fault.http status must be 400-599, got {status}")
        return cls(
            kind="http",
            status=status,
            message=message,
            retry_after=retry_after,
            error_type=error_type,
        )

    @classmethod
    def cut(cls, after_events: int = 0) -> Fault:
        """The connection drops after ``after_events`` events (``RemoteProtocolError``)."""
        return cls(kind="cut", after_events=after_events)

    @classmethod
    def error_event(
        cls,
        error_type: str | None = None,
        message: str | None = None,
        *,
        after_events: int = 0,
    ) -> Fault:
        """The provider's in-stream error event, sent with HTTP 200 after ``after_events``.

        ``error_type`` and ``message`` default to the provider's own words for an
        overloaded / failing server (``overloaded_error`` for Anthropic,
        ``server_error`` for OpenAI).
        """
        return cls(
            kind="error_event", error_type=error_type, message=message, after_events=after_events
        )

    @classmethod
    def stall(cls, after_events: int = 0) -> Fault:
        """The stream stops sending after ``after_events`` events and holds until
        the fake is released or the client hangs up."""
        return cls(kind="stall", after_events=after_events)

    @classmethod
    def timeout(cls, after_events: int | None = None) -> Fault:
        """A read timeout: before the response (``None``) or after ``after_events``."""
        return cls(kind="timeout", after_events=after_events)

    @classmethod
    def truncate(cls, after_events: int = 0) -> Fault:
        """The stream ends cleanly after ``after_events`` events, without the
        provider's closing events (no stop reason, no ``[DONE]``): what a proxy or
        gateway that closes a stream early delivers. No error is raised; an agent
        must notice that the answer never finished. A non-streaming call gets its
        whole JSON body (a truncated JSON body would be a different failure)."""
        return cls(kind="truncate", after_events=after_events)

    @classmethod
    def empty(cls) -> Fault:
        """A 200 response with no content: no text, no tool calls."""
        return cls(kind="empty")

    def describe(self) -> str:
        """A short human description, used in logs and failure messages."""
        where = "" if self.after_events is None else f" after {self.after_events} events"
        if self.kind == "http":
            return f"HTTP {self.status}" + (f" ({self.message})" if self.message else "")
        if self.kind == "error_event":
            return f"in-stream {self.error_type or 'error'}{where}"
        return f"{self.kind}{where}"


class Reply(Frozen):
    """What the model answers to one call: parts, usage, stop reason, optional fault.

    ``usage`` and ``stop`` are derived when omitted (usage is estimated from the
    request and reply sizes; stop is ``tool_use`` when the reply has a tool call).
    """

    parts: list[Part] = Field(default_factory=list)
    usage: Usage | None = None
    stop: StopReason | None = None
    model: str | None = None
    fault: Fault | None = None

    @classmethod
    def text(
        cls,
        text: str,
        *,
        usage: Usage | None = None,
        stop: StopReason | None = None,
        model: str | None = None,
        fault: Fault | None = None,
    ) -> Reply:
        """A plain text answer."""
        return cls(parts=[Text(text=text)], usage=usage, stop=stop, model=model, fault=fault)

    @classmethod
    def tool_call(
        cls,
        name: str,
        args: dict[str, Any] | None = None,
        *,
        id: str | None = None,
        text: str | None = None,
        usage: Usage | None = None,
        model: str | None = None,
        fault: Fault | None = None,
    ) -> Reply:
        """A single tool call, optionally preceded by ``text``."""
        parts: list[Text | ToolCall | Thinking] = [] if text is None else [Text(text=text)]
        parts.append(ToolCall(name=name, args=args or {}, id=id))
        return cls(parts=parts, usage=usage, model=model, fault=fault)

    @classmethod
    def failure(cls, fault: Fault) -> Reply:
        """A reply that is only a fault (what a bare :class:`Fault` in a script means)."""
        return cls(fault=fault)

    @property
    def text_content(self) -> str:
        """All text parts joined, as an agent would display them."""
        return "".join(p.text for p in self.parts if isinstance(p, Text))

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls of the reply, in order."""
        return [p for p in self.parts if isinstance(p, ToolCall)]

    @property
    def stop_reason(self) -> StopReason:
        """``stop`` if given, else ``tool_use`` when there is a tool call, else ``end_turn``."""
        if self.stop is not None:
            return self.stop
        return "tool_use" if self.tool_calls else "end_turn"


class FaultPlan(Frozen):
    """Which calls fail and how: ``faults[i]`` strikes call *i* (``None``: no fault).

    ``replies`` are the answers, in order, for the calls that succeed: a faulted
    call plays (the first part of) the reply that is next, without using it up,
    so that a stream cut after *k* events has delivered the start of the answer
    its retry then gets in full. Calls past the end of ``faults`` are answered
    normally. Replies carry no fault of their own: put faults in ``faults``.
    """

    faults: tuple[Fault | None, ...] = ()
    replies: tuple[Reply, ...] = ()

    @model_validator(mode="after")
    def _replies_carry_no_fault(self) -> FaultPlan:
        for i, reply in enumerate(self.replies):
            if reply.fault is not None:
                raise ValueError(
                    f"replies[{i}] carries {reply.fault.describe()}; a plan's faults go in "
                    f"`faults`, one per call"
                )
        served = sum(f is None for f in self.faults)
        if served > len(self.replies):
            raise ValueError(
                f"{served} call(s) in `faults` are served (None) but only "
                f"{len(self.replies)} repl{'y' if len(self.replies) == 1 else 'ies'} given"
            )
        return self

    @property
    def calls(self) -> int:
        """How many calls the plan answers: every fault, plus one call per reply."""
        return sum(f is not None for f in self.faults) + len(self.replies)

    @property
    def fault_count(self) -> int:
        """How many calls fail."""
        return sum(f is not None for f in self.faults)

    def script(self) -> list[Reply]:
        """What a fake model serves, call by call (one item per call)."""
        out: list[Reply] = []
        pending = list(self.replies)
        for fault in self.faults:
            if fault is None:
                out.append(pending.pop(0))
                continue
            base = pending[0] if pending else Reply()
            out.append(base.model_copy(update={"fault": fault}))
        out.extend(pending)
        return out

    def injections(self) -> list[tuple[int, Fault]]:
        """``(call index, fault)`` for every faulted call: what a cassette needs."""
        return [(i, f) for i, f in enumerate(self.faults) if f is not None]

    def apply(self, target: T) -> T:
        """Apply the plan in one line and return ``target``.

        A fake model (anything with ``script()``) is scripted with :meth:`script`;
        the ``agentreplay`` cassette handle (anything with ``inject()``) gets each
        fault injected at its call, the recording answering every call (``replies``
        are not used: the cassette has the answers).
        """
        script = getattr(target, "script", None)
        if callable(script):
            script(*self.script())
            return target
        inject = getattr(target, "inject", None)
        if callable(inject):
            for at_call, fault in self.injections():
                inject(fault, at_call=at_call)
            return target
        raise TypeError(
            f"a FaultPlan applies to a FakeModel (script()) or to the agentreplay "
            f"handle (inject()), not to {type(target).__name__}"
        )

    def describe(self) -> str:
        """One line per call, for failure messages."""
        lines = []
        for i, reply in enumerate(self.script()):
            what = "served" if reply.fault is None else reply.fault.describe()
            shown = reply.model_copy(update={"fault": None})
            lines.append(f"call {i}: {what} — {reply_source(shown)}")
        return "\n".join(lines) or "no calls"

    def __repr__(self) -> str:
        faults = _tuple(fault_source(f) if f is not None else "None" for f in self.faults)
        replies = _tuple(reply_source(r) for r in self.replies)
        return f"FaultPlan(faults={faults}, replies={replies})"

    __str__ = __repr__


def _tuple(items: Any) -> str:
    shown = list(items)
    if len(shown) == 1:
        return f"({shown[0]},)"
    return "(" + ", ".join(shown) + ")"


def _kwargs(**values: Any) -> str:
    return "".join(f", {k}={v!r}" for k, v in values.items() if v is not None)


def fault_source(fault: Fault) -> str:
    """Python that builds ``fault``: ``Fault.cut(after_events=4)``."""
    after = fault.after_events
    if fault.kind == "http":
        extra = _kwargs(retry_after=fault.retry_after, error_type=fault.error_type)
        message = "" if fault.message is None else f", {fault.message!r}"
        return f"Fault.http({fault.status}{message}{extra})"
    if fault.kind == "error_event":
        extra = _kwargs(error_type=fault.error_type, message=fault.message)
        return f"Fault.error_event(after_events={after or 0}{extra})"
    if fault.kind == "timeout":
        return "Fault.timeout()" if after is None else f"Fault.timeout(after_events={after})"
    if fault.kind == "empty":
        return "Fault.empty()"
    return f"Fault.{fault.kind}(after_events={after or 0})"


def _usage_source(usage: Usage) -> str:
    fields = usage.model_dump(exclude_defaults=True)
    return "Usage(" + ", ".join(f"{k}={v!r}" for k, v in fields.items()) + ")"


def _part_source(part: Text | ToolCall | Thinking) -> str:
    if isinstance(part, Text):
        return f"Text(text={part.text!r})"
    if isinstance(part, Thinking):
        return f"Thinking(text={part.text!r}{_kwargs(signature=part.signature)})"
    return f"ToolCall(name={part.name!r}, args={part.args!r}{_kwargs(id=part.id)})"


_LETTER = {"text": "T", "tool_call": "C", "thinking": "K"}


def _shape(parts: Sequence[Text | ToolCall | Thinking]) -> str:
    """``"TC"`` for text then a tool call: what shortest constructor fits."""
    return "".join(_LETTER[p.kind] for p in parts)


def reply_source(reply: Reply) -> str:
    """Python that builds ``reply``, in its shortest form: ``Reply.text('Hi')``."""
    usage = None if reply.usage is None else _usage_source(reply.usage)
    fault = None if reply.fault is None else fault_source(reply.fault)
    tail = "".join(
        f", {k}={v}"
        for k, v in (("usage", usage), ("model", _maybe_repr(reply.model)), ("fault", fault))
        if v is not None
    )
    shape = _shape(reply.parts)
    if shape == "T":
        stop = _kwargs(stop=reply.stop)
        return f"Reply.text({reply.parts[0].text!r}{stop}{tail})"  # type: ignore[union-attr]
    if shape in ("C", "TC") and reply.stop is None:
        call = reply.parts[-1]
        assert isinstance(call, ToolCall)
        text = reply.parts[0].text if shape == "TC" else None  # type: ignore[union-attr]
        extra = _kwargs(id=call.id, text=text)
        return f"Reply.tool_call({call.name!r}, {call.args!r}{extra}{tail})"
    parts = "[" + ", ".join(_part_source(p) for p in reply.parts) + "]"
    return f"Reply(parts={parts}{_kwargs(stop=reply.stop)}{tail})"


def _maybe_repr(value: str | None) -> str | None:
    return None if value is None else repr(value)
