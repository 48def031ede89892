"""What one model call gets: a :class:`Reply`, or a :class:`Fault`; and plans of them.

A :class:`Reply` is what the model answers (parts, usage, stop reason) and may
carry the :class:`Fault` that strikes its call; a :class:`FaultPlan` says, call by
call, which fault strikes and which replies the calls that succeed get. They live
together because each needs the other: a reply carries a fault, a plan is made of
faults and replies. :func:`~.source.fault_source` and :func:`~.source.reply_source`
(re-exported here) write them back as the Python that builds them (a plan's
``repr``, a falsifying example's).

A plan applies in one line to a fake model (``plan.apply(scripted_model)``, which
scripts it) or to a replayed cassette (``plan.apply(agentreplay)``, which injects
the faults). Both read the plan the same way: a failed call does *not* use up its
reply — the call that follows gets it, exactly as a retried request to a provider
(or to a cassette) gets the answer the failed one would have had. Nothing here
imports hypothesis: plans can be written by hand, stored in a test, or pasted from
a falsifying example.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar

from pydantic import Field, NonNegativeInt, model_validator

from .parts import Citation, Frozen, Part, ServerToolCall, StopReason, Text, ToolCall, Usage
from .source import fault_source, reply_source

__all__ = ["Fault", "FaultKind", "FaultPlan", "Reply", "fault_source", "reply_source"]

T = TypeVar("T")

FaultKind = Literal["http", "cut", "error_event", "stall", "timeout", "empty", "truncate"]
"""How a call fails (see the constructors of :class:`Fault`)."""


class Fault(Frozen):
    """A way a provider call fails. Build one with the class methods, not directly.

    ``after_events`` counts SSE events delivered before the fault strikes (for
    streams); non-streaming calls fail before the body for every kind except
    ``empty`` and ``truncate``.

    Every fault that sends a response may also give its headers, as providers do
    when they are overloaded: ``retry_after`` (seconds, the ``retry-after``
    header), ``request_id`` (the provider's request-id header, and the
    ``request_id`` of the error body or event where the provider puts one there)
    and any other ``headers``. On a stream they arrive with the 200, before the
    body fails.
    """

    kind: FaultKind
    status: int | None = None
    message: str | None = None
    error_type: str | None = None
    retry_after: float | None = None
    after_events: NonNegativeInt | None = None
    request_id: str | None = None
    headers: dict[str, str] | None = None

    @model_validator(mode="after")
    def _headers_need_a_response(self) -> Fault:
        has_headers = self.retry_after is not None or self.request_id or self.headers
        if self.kind == "timeout" and self.after_events is None and has_headers:
            raise ValueError(
                "a timeout before the response sends no headers; give after_events "
                "(a timeout mid-stream) or drop retry_after / request_id / headers"
            )
        if self.retry_after is not None and self.retry_after < 0:
            raise ValueError(f"retry_after must be >= 0 seconds, got {self.retry_after}")
        for name, value in (self.headers or {}).items():
            _check_header(name, value)
        if self.request_id is not None:
            _check_header("request-id", self.request_id)
        return self

    @classmethod
    def http(
        cls,
        status: int,
        message: str | None = None,
        *,
        retry_after: float | None = None,
        error_type: str | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
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
            error_type=error_type,
            **_answer(retry_after, request_id, headers),
        )

    @classmethod
    def cut(
        cls,
        after_events: int = 0,
        *,
        retry_after: float | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """The connection drops after ``after_events`` events (``RemoteProtocolError``)."""
        return cls(
            kind="cut", after_events=after_events, **_answer(retry_after, request_id, headers)
        )

    @classmethod
    def error_event(
        cls,
        error_type: str | None = None,
        message: str | None = None,
        *,
        after_events: int = 0,
        retry_after: float | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """The provider's in-stream error event, sent with HTTP 200 after ``after_events``.

        ``error_type`` and ``message`` default to the provider's own words for an
        overloaded / failing server (``overloaded_error`` for Anthropic,
        ``server_error`` for OpenAI).
        """
        return cls(
            kind="error_event",
            error_type=error_type,
            message=message,
            after_events=after_events,
            **_answer(retry_after, request_id, headers),
        )

    @classmethod
    def stall(
        cls,
        after_events: int = 0,
        *,
        retry_after: float | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """The stream stops sending after ``after_events`` events and holds until
        the fake is released or the client hangs up."""
        return cls(
            kind="stall", after_events=after_events, **_answer(retry_after, request_id, headers)
        )

    @classmethod
    def timeout(
        cls,
        after_events: int | None = None,
        *,
        retry_after: float | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """A read timeout: before the response (``None``) or after ``after_events``
        (only then are there headers to give)."""
        return cls(
            kind="timeout", after_events=after_events, **_answer(retry_after, request_id, headers)
        )

    @classmethod
    def truncate(
        cls,
        after_events: int = 0,
        *,
        retry_after: float | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """The stream ends cleanly after ``after_events`` events, without the
        provider's closing events (no stop reason, no ``[DONE]``): what a proxy or
        gateway that closes a stream early delivers. No error is raised; an agent
        must notice that the answer never finished. A non-streaming call gets its
        whole JSON body (a truncated JSON body would be a different failure)."""
        return cls(
            kind="truncate", after_events=after_events, **_answer(retry_after, request_id, headers)
        )

    @classmethod
    def empty(
        cls,
        *,
        retry_after: float | None = None,
        request_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Fault:
        """A 200 response with no content: no text, no tool calls."""
        return cls(kind="empty", **_answer(retry_after, request_id, headers))

    def describe(self) -> str:
        """A short human description, used in logs and failure messages."""
        where = "" if self.after_events is None else f" after {self.after_events} events"
        if self.kind == "http":
            what = f"HTTP {self.status}" + (f" ({self.message})" if self.message else "")
        elif self.kind == "error_event":
            what = f"in-stream {self.error_type or 'error'}{where}"
        else:
            what = f"{self.kind}{where}"
        return what + self._described_headers()

    def _described_headers(self) -> str:
        bits = [] if self.retry_after is None else [f"retry-after {_seconds(self.retry_after)}"]
        if self.request_id:
            bits.append(f"request id {self.request_id}")
        bits.extend(f"{name}: {value}" for name, value in (self.headers or {}).items())
        return f" [{', '.join(bits)}]" if bits else ""


def _answer(
    retry_after: float | None, request_id: str | None, headers: Mapping[str, str] | None
) -> dict[str, Any]:
    """The header fields of a fault, as its constructors take them."""
    return {
        "retry_after": retry_after,
        "request_id": request_id,
        "headers": None if headers is None else dict(headers),
    }


_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")


def _check_header(name: str, value: str) -> None:
    """A header the fake can send as given: a token name, a value on one line."""
    if not _TOKEN.match(name):
        raise ValueError(f"header name {name!r} is not a valid HTTP header name")
    if "\r" in value or "\n" in value or "\0" in value:
        raise ValueError(f"header {name!r}: a value cannot hold CR, LF or NUL: {value!r}")


def _seconds(seconds: float) -> str:
    """``30`` for whole seconds, ``1.5`` otherwise: how a ``retry-after`` value is written."""
    return str(int(seconds)) if float(seconds).is_integer() else repr(seconds)


class Reply(Frozen):
    """What the model answers to one call: parts, usage, stop reason, optional fault.

    ``usage`` and ``stop`` are derived when omitted (usage is estimated from the
    request and reply sizes; stop is ``tool_use`` when the reply has a tool call).
    ``event_fields`` are added to the JSON data of every streamed event (fields
    an event already has are kept), as some gateways add ``"error": null`` or
    ``"error": ""`` to every event; a JSON body is sent as the provider would.
    """

    parts: list[Part] = Field(default_factory=list)
    usage: Usage | None = None
    stop: StopReason | None = None
    model: str | None = None
    fault: Fault | None = None
    event_fields: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _valid(self) -> Reply:
        ServerToolCall.check_ids(self.parts)
        try:
            json.dumps(self.event_fields, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"event_fields must be JSON data: {exc}") from None
        return self

    @classmethod
    def text(
        cls,
        text: str,
        *,
        citations: Sequence[Citation] = (),
        usage: Usage | None = None,
        stop: StopReason | None = None,
        model: str | None = None,
        fault: Fault | None = None,
        event_fields: dict[str, Any] | None = None,
    ) -> Reply:
        """A plain text answer (citing ``citations``, if given)."""
        return cls(
            parts=[Text(text=text, citations=list(citations))],
            usage=usage,
            stop=stop,
            model=model,
            fault=fault,
            event_fields=event_fields,
        )

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
        event_fields: dict[str, Any] | None = None,
    ) -> Reply:
        """A single tool call, optionally preceded by ``text``."""
        parts: list[Part] = [] if text is None else [Text(text=text)]
        parts.append(ToolCall(name=name, args=args or {}, id=id))
        return cls(parts=parts, usage=usage, model=model, fault=fault, event_fields=event_fields)

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
        """The tool calls of the reply (the agent's to run), in order."""
        return [p for p in self.parts if isinstance(p, ToolCall)]

    @property
    def server_tool_calls(self) -> list[ServerToolCall]:
        """The provider-side tool calls of the reply (the provider ran them), in order."""
        return [p for p in self.parts if isinstance(p, ServerToolCall)]

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
